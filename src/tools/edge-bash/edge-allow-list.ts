// What `engine: "auto"` runs on the edge: the commands, options and shell features that
// test/tools/edge-bash/differential.test.ts runs on both engines and finds identical (stdout,
// stderr, exit code, resulting files). Anything else goes to a runner. Widen this only together
// with scripts in that test's corpus that prove the addition.

/** How a command's words are read, to check each option it is given against those proven. */
export interface EdgeCommandRule {
  /** Single-letter options that take no value, clustered or not (`-rn`, `-r -n`). */
  flags?: string;
  /** Single-letter options that take a value, attached (`-n5`) or as the next word (`-n 5`). */
  valued?: string;
  /** Long options (`--count`); one ending in `=` takes a value (`--lines=5`, `--lines 5`). */
  long?: readonly string[];
  /** `-NUM` is a count (`head -5`). */
  numeric?: boolean;
  /** Words that begin with `-` are predicates, each listed whole in `long` (find's `-name`, `-type`). */
  predicates?: boolean;
  /** The first operand is a command line to check in turn (xargs). */
  runsCommand?: boolean;
  /** Options stop at the first operand, as in POSIX utilities (awk's and sed's scripts, jq's filter). */
  optionsFirst?: boolean;
  /** Words (filters, scripts, options' values) using what the edge does differently, though the command is proven otherwise. */
  unproven?: RegExp;
  /** Words with characters beyond ASCII are not proven: the edge counts characters where GNU tools count bytes. */
  asciiOnly?: boolean;
  /**
   * Its output lists files in an order that differs between engines (name order on the edge, the
   * directory's order on a runner's disk): proven only when piped straight into wc. `true` always,
   * else the flags that make it so (grep's `r`).
   */
  unordered?: true | string;
  /** The most operands proven; a word with an expansion or a glob counts as many. */
  maxOperands?: number;
}

/** The operators of `test` and `[`: the words given them that begin with `-`. */
const TEST_OPERATORS = [
  '-e',
  '-f',
  '-d',
  '-s',
  '-z',
  '-n',
  '-eq',
  '-ne',
  '-lt',
  '-le',
  '-gt',
  '-ge',
  '-a',
  '-o',
  '-L',
  '-h',
  '-r',
];

/**
 * Commands and builtins `auto` runs on the edge, with the options proven identical for each. Left
 * off, with the corpus's reasons: sort (it orders by ICU collation, bash's C.UTF-8 by code point,
 * so mixed case sorts differently), find and grep -r but into wc (they list in name order where
 * the runner's disk lists in directory order), awk (the edge's is not the host's mawk), xargs
 * (without input it runs nothing, GNU runs the command once), uniq -c and ls -l (column widths,
 * dates and owners), cut -c (characters against bytes).
 */
export const EDGE_COMMANDS: Readonly<Record<string, EdgeCommandRule>> = {
  // Builtins.
  ':': {},
  true: {},
  false: {},
  cd: {},
  pwd: {},
  echo: { flags: 'neE' },
  printf: { optionsFirst: true },
  test: { predicates: true, long: TEST_OPERATORS },
  '[': { predicates: true, long: TEST_OPERATORS },
  export: {},
  unset: {},
  exit: {},
  set: { flags: 'eux', valued: 'o' },
  read: { flags: 'r', valued: 'a' },
  sleep: {},
  // Reading and transforming text.
  // With more than one operand the edge's ls puts a blank line between the names.
  ls: { flags: '1aAFRr', maxOperands: 1 },
  cat: { flags: 'nAsb' },
  head: { flags: 'q', valued: 'nc', numeric: true, long: ['--lines=', '--bytes='] },
  tail: { valued: 'nc', numeric: true, long: ['--lines=', '--bytes='] },
  wc: { flags: 'lwcm', long: ['--lines', '--words', '--bytes'] },
  grep: {
    flags: 'rnilvcwEFxqhL',
    valued: 'ABCm',
    long: ['--include=', '--exclude=', '--exclude-dir=', '--count', '--line-number'],
    unordered: 'r',
  },
  find: {
    predicates: true,
    long: ['-name', '-iname', '-type', '-path', '-maxdepth', '-mindepth', '-not', '-o', '-empty'],
    unordered: true,
    // -type l (and the other kinds but f and d) is refused on the edge; a word of one such letter is read as one.
    unproven: /^[lpsbcD]$/,
  },
  uniq: { flags: 'dui' },
  cut: { flags: 's', valued: 'df', asciiOnly: true },
  tr: { flags: 'ds', asciiOnly: true },
  // -i edits in place; -i.bak (a backup) is not proven: the edge writes none.
  sed: { flags: 'nEi', valued: 'e', optionsFirst: true },
  jq: {
    flags: 'rcjSens',
    valued: '',
    long: ['--arg=', '--argjson=', '--raw-output', '--compact-output', '--sort-keys', '--tab'],
    optionsFirst: true,
    // unique and group_by keep the input's order where jq sorts; @csv leaves strings unquoted; a
    // number beyond a double is null where jq gives the largest double; walk orders keys differently.
    unproven: /\b(unique|unique_by|group_by|walk)\b|@csv|\d[eE]\d{3}/,
  },
  basename: {},
  dirname: {},
  rev: {},
  tac: {},
  nl: { valued: 'b' },
  seq: { flags: 'w', valued: 's' },
  paste: { flags: 's', valued: 'd' },
  comm: { flags: '123' },
  sha256sum: {},
  md5sum: {},
  sha1sum: {},
  base64: { flags: 'd' },
  // Changing files.
  mkdir: { flags: 'pv' },
  rm: { flags: 'rfv' },
  rmdir: {},
  cp: { flags: 'rRpn' },
  mv: { flags: 'fv' },
  touch: {},
  tee: { flags: 'a' },
  ln: { flags: 'sf' },
};

/** Shell syntax `auto` runs on the edge: the interpreter's node types proven identical. */
export const EDGE_SYNTAX: ReadonlySet<string> = new Set([
  'Script',
  'Statement',
  'Pipeline',
  'SimpleCommand',
  'If',
  'For',
  'CStyleFor',
  'While',
  'Until',
  'ConditionalCommand',
  'CondAnd',
  'CondUnary',
  'CondBinary',
  'ArithmeticCommand',
  'Case',
  'CaseItem',
  'Subshell',
  'Group',
  'Assignment',
  'Redirection',
  'HereDoc',
  'Word',
  'Literal',
  'SingleQuoted',
  'DoubleQuoted',
  'Escaped',
  'ParameterExpansion',
  'DefaultValue',
  'UseAlternative',
  'Length',
  'PatternRemoval',
  'PatternReplacement',
  'Substring',
  'CaseModification',
  'AssignDefault',
  'CommandSubstitution',
  'ArithmeticExpansion',
  'ArithmeticExpression',
  'ArithNumber',
  'ArithVariable',
  'ArithBinary',
  'ArithUnary',
  'ArithAssignment',
  'ArithGroup',
  'BraceExpansion',
  'Range',
  'Glob',
]);

/** Redirections `auto` runs on the edge. */
export const EDGE_REDIRECTIONS: ReadonlySet<string> = new Set(['<', '>', '>>', '>&', '<<', '<<-', '<<<', '&>']);
