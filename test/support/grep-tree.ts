// A generated source tree for grep's differential test: the same files on disk for rg and in a workspace.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { syncWorkspaceChanges, type SyncedChange } from './runner-sync.ts';
import type { ServerProcess } from './server-process.ts';

/** A file's content: text is written with write_file, bytes through a command (they are not UTF-8 or hold NUL). */
export type TreeFile = { path: string; text: string } | { path: string; bytes: Uint8Array };
export interface TreeLink {
  path: string;
  target: string;
}
export interface SearchTree {
  files: TreeFile[];
  links: TreeLink[];
}

/** A small deterministic generator (mulberry32), so a failing case names the same tree every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'function',
  'return',
  'const',
  'value',
  'import',
  'export',
  'TODO',
  'FIXME',
  'error',
  'Error',
  'result',
  'colour',
  'color',
  'hello',
  'Hello',
  'HELLO',
  'foo',
  'bar',
  'baz',
  'needle',
  'NEEDLE',
  'x',
  'xx',
  'abc',
  'a.c',
  'a+c',
  'end',
  'the',
  'them',
  'other',
  '42',
  '1234',
  '0xdeadbeef',
  'café',
  'naïve',
  'über',
  'Straße',
  'λόγος',
  'ΣΊΣΥΦΟΣ',
  'привет',
  'Привет',
  '日本語',
  '数据',
  '😀',
  'émoji😀',
  '٣٤٥',
  'http://example.com',
  '${name}',
  '"quoted text"',
  '<div>',
  '(a)',
  '[b]',
  '{c}',
  'a|b',
  'back\\slash',
  'tab\there',
  'K',
  '\u212a',
  'ſ',
  'S',
  'deadbeef',
  'TypeError',
  'RangeError',
  'fn',
  'def',
  'class',
];

const LANGUAGES: Record<string, (rng: () => number, words: () => string) => string> = {
  ts: (_r, w) =>
    `import { ${w()} } from './${w()}';\nexport function ${w()}(value: number): string {\n  // TODO ${w()} ${w()}\n  return \`${w()} \${value}\`;\n}\n`,
  js: (_r, w) => `const ${w()} = require('${w()}');\nfunction run() {\n  return ${w()} + ${w()};\n}\n`,
  py: (_r, w) => `def ${w()}(x):\n    # ${w()} ${w()}\n    return x + 1\n\nclass ${w()}:\n    pass\n`,
  rs: (_r, w) => `fn ${w()}() -> u32 {\n    let v = ${w()};\n    42\n}\n`,
  go: (_r, w) => `package main\n\nfunc ${w()}() error {\n\treturn nil // ${w()}\n}\n`,
  md: (_r, w) => `# ${w()} ${w()}\n\nThe ${w()} of the ${w()} is ${w()}.\n\n- ${w()}\n- ${w()}\n`,
  json: (_r, w) => `{\n  "name": "${w()}",\n  "version": "1.2.3",\n  "tags": ["${w()}", "${w()}"]\n}\n`,
  c: (_r, w) => `#include <stdio.h>\nint ${w()}(void) {\n\treturn 1234; /* ${w()} */\n}\n`,
  java: (_r, w) => `public class ${w()} {\n    private int ${w()} = 42;\n}\n`,
  sh: (_r, w) => `#!/bin/sh\necho "${w()}" ${w()}\nexit 0\n`,
  txt: (r, w) => Array.from({ length: 1 + Math.floor(r() * 12) }, () => `${w()} ${w()} ${w()}`).join('\n') + '\n',
  yml: (_r, w) => `key: ${w()}\nlist:\n  - ${w()}\n  - ${w()}\n`,
  css: (_r, w) => `.${w()} {\n  color: red;\n}\n`,
  html: (_r, w) => `<div class="${w()}">\n  <p>${w()}</p>\n</div>\n`,
};

const DIRECTORIES = [
  '',
  'src',
  'src/lib',
  'src/lib/deep',
  'src/components',
  'docs',
  'tests',
  'scripts',
  'vendor',
  'build',
  'src/generated',
  '.config',
  'notes',
];

/** About `count` files of many kinds, ignore files at several levels, and links within the tree. */
export function searchTree(count = 320, seed = 18): SearchTree {
  const rng = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
  const words = () => pick(WORDS);
  const files: TreeFile[] = [];
  const extensions = Object.keys(LANGUAGES);
  for (let index = 0; index < count; index++) {
    const dir = pick(DIRECTORIES);
    const extension = pick(extensions);
    const name = `${dir === '' ? '' : `${dir}/`}${pick(['main', 'util', 'index', 'data', 'test', 'a', 'b'])}${index}.${extension}`;
    let text = LANGUAGES[extension]!(rng, words);
    const variant = rng();
    if (variant < 0.12) text = text.replace(/\n/g, '\r\n');
    else if (variant < 0.2) text = text.replace(/\n$/, '');
    else if (variant < 0.25)
      text = `${words()} ${'z'.repeat(1990 + Math.floor(rng() * 40))} ${words()} NEEDLE tail\n${text}`;
    files.push({ path: name, text });
  }
  files.push(
    { path: '.gitignore', text: 'build/\n*.log\n!keep.log\n/notes/private*\nvendor/**/*.min.js\n' },
    { path: 'src/.gitignore', text: 'generated/\n*.tmp\n' },
    { path: 'docs/.ignore', text: 'draft*\n' },
    { path: 'tests/.rgignore', text: 'fixture-*.txt\n!fixture-kept.txt\n' },
    { path: 'app.log', text: 'error TODO in log\n' },
    { path: 'keep.log', text: 'error kept log\n' },
    { path: 'notes/private-plan.md', text: 'TODO private\n' },
    { path: 'vendor/lib.min.js', text: 'function minified(){return 42}\n' },
    { path: 'src/cache.tmp', text: 'TODO temporary\n' },
    { path: 'docs/draft-1.md', text: '# TODO draft\n' },
    { path: 'tests/fixture-1.txt', text: 'fixture TODO\n' },
    { path: 'tests/fixture-kept.txt', text: 'fixture TODO kept\n' },
    { path: '.env', text: 'SECRET=needle\n' },
    { path: '.config/settings.json', text: '{ "TODO": "hidden" }\n' },
    { path: '.git/config', text: '[core]\n\tTODO = 1\n' },
    { path: 'empty.txt', text: '' },
    { path: 'src/empty.ts', text: '' },
    { path: 'only-newlines.txt', text: '\n\n\n' },
    { path: 'no-final-newline.md', text: 'TODO last line without newline' },
    {
      path: 'unicode.txt',
      text: 'Straße STRASSE strasse\nΣΊΣΥΦΟΣ σίσυφος\nKelvin \u212a k K\nlong ſ s S\n٣٤٥ digits\nüber uber\n日本語のテキスト\nemoji 😀😀 end\n',
    },
    { path: 'crlf-only.txt', text: 'first TODO\r\nsecond\r\n\r\nlast end\r\n' },
    { path: 'src/long.ts', text: `const data = "${'ab'.repeat(3000)}"; // TODO after long\nshort TODO\n` },
    {
      path: 'src/many.ts',
      text: Array.from({ length: 200 }, (_, i) => (i % 7 === 0 ? `hit ${i}` : `line ${i}`)).join('\n') + '\n',
    },
    {
      path: 'bin/image.png',
      bytes: new Uint8Array([
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x54, 0x4f, 0x44, 0x4f, 0x0a,
      ]),
    },
    { path: 'bin/data.bin', bytes: new TextEncoder().encode('TODO before nul\n\0TODO after\n') },
    { path: 'bin/late-nul.txt', bytes: new TextEncoder().encode(`TODO ${'q'.repeat(20_000)}\n\0\nTODO\n`) },
    {
      path: 'latin1.txt',
      bytes: new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x54, 0x4f, 0x44, 0x4f, 0x0a, 0x6f, 0x6b, 0x0a]),
    },
  );
  const links: TreeLink[] = [
    { path: 'src/lib-link', target: 'lib' },
    { path: 'docs/unicode-link.txt', target: '../unicode.txt' },
  ];
  return { files, links };
}

/** Writes the tree under `root` as rg will see it. */
export function writeGrepTreeToDisk(tree: SearchTree, root: string): void {
  for (const file of tree.files) {
    mkdirSync(dirname(join(root, file.path)), { recursive: true });
    writeFileSync(join(root, file.path), 'text' in file ? file.text : file.bytes);
  }
  for (const link of tree.links) {
    mkdirSync(dirname(join(root, link.path)), { recursive: true });
    symlinkSync(link.target, join(root, link.path));
  }
}

/** Writes the tree into workspace `ws` through the runner protocol's sync (see runner-sync.ts). */
export async function syncGrepTree(server: Pick<ServerProcess, 'url' | 'call'>, ws: string, tree: SearchTree) {
  await syncWorkspaceChanges(server, ws, [
    ...tree.files.map((file): SyncedChange => ({
      op: 'write',
      path: file.path,
      bytes: 'text' in file ? new TextEncoder().encode(file.text) : file.bytes,
    })),
    ...tree.links.map((link): SyncedChange => ({ op: 'symlink', path: link.path, target: link.target })),
  ]);
}
