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

/** Commands and builtins `auto` runs on the edge, with the options proven identical for each. */
export const EDGE_COMMANDS: Readonly<Record<string, EdgeCommandRule>> = {
  // Builtins.
  ':': {},
  true: {},
  false: {},
  cd: {},
  pwd: {},
  echo: { flags: 'ne' },
  printf: { optionsFirst: true },
  test: { predicates: true, long: TEST_OPERATORS },
  '[': { predicates: true, long: TEST_OPERATORS },
  export: {},
  unset: {},
  exit: {},
  set: { flags: 'eux', valued: 'o' },
  // Reading and transforming text.
  cat: { flags: 'n' },
  head: { valued: 'nc', numeric: true, long: ['--lines=', '--bytes='] },
  tail: { valued: 'nc', numeric: true, long: ['--lines=', '--bytes='] },
  wc: { flags: 'lwc', long: ['--lines', '--words', '--bytes'] },
  grep: {
    flags: 'rRnilvcwoEFxqHhsL',
    valued: 'ABCme',
    long: ['--include=', '--exclude=', '--exclude-dir=', '--color=never', '--count', '--recursive', '--line-number'],
  },
  sort: { flags: 'rnufbV', valued: 'kt' },
  uniq: { flags: 'cdu' },
  cut: { valued: 'dfc' },
  tr: { flags: 'ds' },
  sed: { flags: 'nE', valued: 'e', optionsFirst: true },
  awk: { valued: 'Fv', optionsFirst: true },
  jq: {
    flags: 'rcjSen',
    valued: '',
    long: ['--arg=', '--raw-output', '--compact-output', '--sort-keys'],
    optionsFirst: true,
  },
  find: {
    predicates: true,
    long: ['-name', '-iname', '-type', '-path', '-maxdepth', '-mindepth', '-not', '-o', '-a', '-empty'],
  },
  xargs: { flags: '0', valued: 'nI', runsCommand: true },
  basename: {},
  dirname: {},
  rev: {},
  tac: {},
  nl: {},
  seq: {},
  paste: { flags: 's', valued: 'd' },
  comm: { flags: '123' },
  sha256sum: {},
  md5sum: {},
  // Changing files.
  mkdir: { flags: 'p' },
  rm: { flags: 'rf' },
  rmdir: {},
  cp: { flags: 'r' },
  mv: {},
  touch: {},
  tee: { flags: 'a' },
  ln: { flags: 's' },
};

/** Shell syntax `auto` runs on the edge: the interpreter's node types proven identical. */
export const EDGE_SYNTAX: ReadonlySet<string> = new Set([
  'Script',
  'Statement',
  'Pipeline',
  'SimpleCommand',
  'If',
  'For',
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
  'CommandSubstitution',
  'ArithmeticExpansion',
  'ArithmeticExpression',
  'ArithNumber',
  'ArithVariable',
  'ArithBinary',
  'ArithGroup',
  'BraceExpansion',
  'Range',
  'Glob',
]);

/** Redirections `auto` runs on the edge. */
export const EDGE_REDIRECTIONS: ReadonlySet<string> = new Set(['<', '>', '>>', '>&', '<<', '<<-', '<<<', '&>']);
