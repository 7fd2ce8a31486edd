// Where `auto` sends a command line, and why: the reading of commands, options and shell syntax
// against the allow-list that the differential test (differential.test.ts) proves.
import { parse } from 'just-bash';
import { describe, expect, it } from 'vitest';
import { autoObjection, edgeObjection, loneCommand } from '../../../src/tools/edge-bash/edge-script.ts';

/** What auto objects to in `script` (its subject), or 'edge' when it runs it on the edge. */
const auto = (script: string) => autoObjection(parse(script))?.subject ?? 'edge';

describe('auto', () => {
  it('runs everyday reading and writing on the edge', () => {
    for (const script of [
      'cat -n src/a.ts | head -20',
      'grep -n TODO src/*.ts',
      "sed -n '1,3p' README.md",
      'jq -r .name package.json',
      'mkdir -p out && echo done > out/log.txt',
      'cut -d, -f2 data.csv | uniq -d',
      'if [ -f README.md ]; then echo yes; fi',
      '[[ -d src && -f x ]] && echo both',
      'for ((i=0; i<3; i++)); do echo $i; done',
      'while read -r line; do echo "$line"; done < list.txt',
      'ls',
      'ls -la',
      "sed -i 's/a/b/' file.txt",
    ])
      expect(auto(script), script).toBe(script === 'ls -la' ? 'ls -la' : 'edge');
  });

  it('runs grep -r and find only piped straight into wc: they list files in another order', () => {
    expect(auto('grep -rn TODO src | wc -l')).toBe('edge');
    expect(auto('find . -name "*.ts" | wc -l')).toBe('edge');
    expect(auto('grep -rn TODO src')).toBe('grep');
    expect(auto('grep -rn TODO src | head -5')).toBe('grep');
    expect(auto('find . -type f')).toBe('find');
    // Its output goes into a file, not into wc.
    expect(auto('grep -rn TODO src > hits.txt | wc -l')).toBe('grep');
    // grep without -r lists in the order of its operands.
    expect(auto('grep -n TODO a.ts b.ts')).toBe('edge');
  });

  it('sends to a runner the commands that order, count or format differently on the edge', () => {
    expect(auto('sort data.txt')).toBe('sort');
    expect(auto("awk '{print $1}' log.txt")).toBe('awk');
    expect(auto('ls src | xargs echo')).toBe('xargs');
    expect(auto('sort a | uniq -c')).toBe('sort');
    expect(auto('uniq -c a.txt')).toBe('uniq -c');
  });

  it('reads each option against those proven, clustered or not, attached values included', () => {
    expect(auto('grep -inw TODO a.txt')).toBe('edge');
    expect(auto('grep -A 2 -B1 ERROR log.txt')).toBe('edge');
    expect(auto('grep -P "\\d+" a.txt')).toBe('grep -P');
    expect(auto('grep -o x a.txt')).toBe('grep -o');
    // Several -e patterns: the edge keeps only the last.
    expect(auto('grep -e a -e b a.txt')).toBe('grep -e');
    expect(auto('head -n 3 a.txt')).toBe('edge');
    expect(auto('head -3 a.txt')).toBe('edge');
    // All but the last N lines: a value that reads as an option.
    expect(auto('head -n -2 a.txt')).toBe('head -n -2');
    expect(auto('head -n-2 a.txt')).toBe('head -n-2');
    expect(auto("sed -i.bak 's/a/b/' f")).toBe('sed -i.bak');
  });

  it('stops reading options at the first operand of sed, jq and printf, and reads their scripts for what differs', () => {
    expect(auto("sed -n 's/-x/-y/p' a.txt")).toBe('edge');
    expect(auto('jq -r ".items[] | .id" a.json')).toBe('edge');
    expect(auto('jq "[.[].tag] | unique" a.json')).toBe('jq [.[].tag] | unique');
    expect(auto('jq -r ".[] | @csv" a.json')).toBe('jq .[] | @csv');
    expect(auto('printf "%s-%d\\n" a 1')).toBe('edge');
  });

  it('reads find predicates whole, and a -type other than f or d as one the edge refuses', () => {
    expect(auto('find src -name "*.ts" -type f | wc -l')).toBe('edge');
    expect(auto('find . -type l | wc -l')).toBe('find l');
    expect(auto('find . -newer a.txt | wc -l')).toBe('find -newer');
    expect(auto('find . -name "*.ts" -exec wc -l {} \\; | wc -l')).toBe('find -exec');
  });

  it('keeps tr and cut to ASCII arguments: the edge counts characters where GNU counts bytes', () => {
    expect(auto("tr 'a-z' 'A-Z' < a.txt")).toBe('edge');
    expect(auto("tr 'é' 'e' < a.txt")).toBe('tr é');
    expect(auto('cut -d, -f1 a.csv')).toBe('edge');
    expect(auto('cut -c1-3 a.txt')).toBe('cut -c1-3');
  });

  it('runs ls with one operand at most: with more the edge puts blank lines between them', () => {
    expect(auto('ls src')).toBe('edge');
    expect(auto('ls -1 src docs')).toBe('ls');
    expect(auto('ls src/*.ts')).toBe('ls');
  });

  it('reads shell syntax: the commands of [ and [[, globs, redirections', () => {
    expect(auto('[ -f a ] && echo y')).toBe('edge');
    expect(auto('echo **/*.ts')).toBe('**');
    expect(auto('echo src/*.ts')).toBe('edge');
    expect(auto('echo hi >&2')).toBe('edge');
    expect(auto('cat a >&-')).toBe('>&');
    expect(auto('cat <(echo a)')).toBe('ProcessSubstitution');
    expect(auto('$cmd a')).toBe('$command');
    expect(auto('eval "ls"')).toBe('eval');
    expect(auto('sleep 1 &')).toBe('&');
  });
});

describe('engine edge', () => {
  const names = new Set(['cat', 'grep', 'awk']);
  it('runs what the interpreter has, proven or not, and names what it has not', () => {
    expect(edgeObjection(parse("awk '{print}' a | sort"), new Set([...names, 'sort']))).toBeUndefined();
    expect(edgeObjection(parse('cat a | python3 x.py'), names)?.subject).toBe('python3');
    expect(edgeObjection(parse('sleep 1 & echo x'), names)?.subject).toBe('&');
  });
});

describe('auto, knowing the workspace', () => {
  const autoWith = (script: string, links: boolean) => autoObjection(parse(script), { links })?.subject ?? 'edge';

  it('leaves to a runner what treats symbolic links otherwise on the edge, when the workspace holds any', () => {
    // A link whose target goes first is left behind by the edge's rm -rf *; grep -r follows links to directories.
    for (const [script, subject] of [
      ['rm -rf -- * && echo left > left.txt', 'rm'],
      ['grep -rn TODO src | wc -l', 'grep'],
      ['find . -name "*.ts" | wc -l', 'find'],
      ['cp a.txt b.txt', 'cp'],
    ] as const) {
      expect(autoWith(script, true), script).toBe(subject);
      expect(autoWith(script, false), script).toBe('edge');
    }
    expect(autoWith('grep -n TODO src/a.ts', true)).toBe('edge');
  });

  it("leaves to a runner a path into the host's tree, but reads an address as one", () => {
    expect(auto('head -c 100 /dev/urandom > r.bin')).toBe('/dev/urandom');
    expect(auto('cat /etc/passwd')).toBe('/etc/passwd');
    expect(auto('ls /')).toBe('/');
    expect(auto('grep -n x a.txt 2>/dev/null')).toBe('edge');
    expect(auto("sed -n '/ERROR/p' log.txt")).toBe('edge');
    expect(auto("printf '\\377' > bin.dat")).toBe('printf \\377');
  });
});

describe('a script that is one command', () => {
  const lone = (script: string) => loneCommand(parse(script));

  it('is read as its words, quoted or not', () => {
    expect(lone('grep -rn TODO .')).toEqual({ name: 'grep', args: ['-rn', 'TODO', '.'] });
    expect(lone(`grep -rn "a b" 'c d' e" "f`)).toEqual({ name: 'grep', args: ['-rn', 'a b', 'c d', 'e f'] });
    expect(lone('  grep -r x src ;')).toEqual({ name: 'grep', args: ['-r', 'x', 'src'] });
    // The reader takes the escapes inside double quotes out, as bash does.
    expect(lone('grep -rn "TO\\$DO \\"x\\"" .')).toEqual({ name: 'grep', args: ['-rn', 'TO$DO "x"', '.'] });
  });

  it('is nothing when anything but its words is in it, or a word holds an expansion or an escape', () => {
    for (const script of [
      'grep -rn $WORD .',
      'grep -rn "$WORD" .',
      'grep -rn TODO ~',
      'grep -rn TODO *',
      'grep -rn TODO {a,b}',
      'grep -rn TODO $(pwd)',
      'grep -rn TO\\DO .',
      'LC_ALL=C grep -rn TODO .',
      'grep -rn TODO . > hits.txt',
      'grep -rn TODO . 2>/dev/null',
      'grep -rn TODO . | wc -l',
      'grep -rn TODO . && echo found',
      'grep -rn TODO .; echo done',
      '! grep -rn TODO .',
      'time grep -rn TODO .',
      'grep -rn TODO . &',
      '{ grep -rn TODO .; }',
      '(grep -rn TODO .)',
      'X=1',
      '',
    ])
      expect(lone(script), script).toBeUndefined();
  });
});
