// The docs stay true to the code: the generated tables are current (`npm run docs:settings`
// rewrites them), the error table is the code's, and every link stays inside the repository.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorStatus } from '../../src/core/errors.ts';
import { generatedPart, generatedTables, repoRoot } from './generated-tables.ts';

const docs = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

describe('the docs', () => {
  it.each(generatedTables.map((table) => [`${table.file} ${table.name}`, table] as const))(
    '%s table is current (else run npm run docs:settings)',
    (_, { file, name, render }) => {
      expect(generatedPart(read(file), name)).toBe(render());
    },
  );

  it("docs/api.md's error table is the code's: every code with its status, and nothing else", () => {
    const api = read('docs/api.md');
    const section = api.slice(api.indexOf('\n## Errors'), api.indexOf('\n## ', api.indexOf('\n## Errors') + 1));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1], Number(match[2])]);
    expect(rows).toEqual(Object.entries(errorStatus));
  });

  it.each(docs)('%s links only to files and headings inside the repository', (path) => {
    const text = read(path);
    expect(text).not.toMatch(/\.\.\/shared|API\.md|DESIGN\.md/);
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^https?:/.test(target!)) continue;
      const [file, anchor] = target!.split('#');
      const linked = file ? join(dirname(path), file) : path;
      expect(existsSync(join(repoRoot, linked)), `${path} -> ${target}`).toBe(true);
      if (anchor && linked.endsWith('.md')) {
        const headings = [...read(linked).matchAll(/^#+ (.+)$/gm)].map((match) =>
          match[1]!
            .toLowerCase()
            .replace(/[^a-z0-9 _-]/g, '')
            .replace(/ /g, '-'),
        );
        expect(headings, `${path} -> ${target}`).toContain(anchor);
      }
    }
  });

  it('keeps the README short: a start, the tests, and a map of docs/', () => {
    const readme = read('README.md');
    expect(readme.length).toBeLessThan(8000);
    for (const doc of docs.filter((doc) => doc !== 'README.md')) expect(readme).toContain(`(${doc})`);
  });
});
