// The repository stands alone: users clone it without the team's shared folder beside it, so no file may refer to one.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Spelled in pieces, so this file does not name what it looks for. */
const outside = ['..', 'shared'].join('/');
/** Installed, generated or local-only: never part of a clone. */
const SKIPPED = new Set(['node_modules', '.git', '.wrangler', 'dist', 'coverage']);

function* projectFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* projectFiles(path);
    else if (entry.isFile()) yield path;
  }
}

describe('the repository stands alone', () => {
  it(`no file refers to ${outside}`, () => {
    const offenders = [...projectFiles(root)]
      .filter((file) => readFileSync(file, 'latin1').includes(outside))
      .map((file) => relative(root, file));
    expect(offenders, `these files refer to ${outside}, which a clone does not have`).toEqual([]);
  });

  it('the conformance data the tests use is in the repository, with its provenance', () => {
    const fixtures = join(root, 'test/fixtures/conformance');
    const provenance = readFileSync(join(fixtures, 'PROVENANCE.md'), 'utf8');
    for (const set of readdirSync(fixtures, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
      expect(provenance, `PROVENANCE.md names where ${set.name}/ came from`).toContain(`\`${set.name}/`);
    }
    expect(readFileSync(join(fixtures, 'apply_patch/LICENSE'), 'utf8')).toContain('Apache License');
    expect(readFileSync(join(fixtures, 'apply_patch/NOTICE'), 'utf8')).toContain('OpenAI');
  });
});
