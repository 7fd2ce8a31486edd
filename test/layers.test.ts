// The Worker-bound layers import nothing Node-only, directly or through the files they import.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/server-process.ts';

// src/client runs in browsers and Workers too, so it is held to the same rule.
const workerBound = ['src/core', 'src/workspace', 'src/history', 'src/tools', 'src/http', 'src/keys', 'src/approvals', 'src/metering', 'src/calls', 'src/client', 'src/cloudflare', 'src/hooks'];
const nodeOnlyPackages = ['better-sqlite3', '@hono/node-server', 'tsx'];
const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]/g), ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)];
  return specifiers.map((match) => match[1]!);
}

/** Every problem import reachable from `file`, as "importer -> specifier". */
function nodeOnlyImports(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const problems: string[] = [];
  for (const specifier of importsOf(file)) {
    const where = `${relative(repoRoot, file)} -> ${specifier}`;
    if (specifier.startsWith('.')) {
      const target = resolve(dirname(file), specifier);
      if (/(^|\/)node(\/|\.ts$)|-node\.ts$/.test(relative(repoRoot, target))) problems.push(where);
      else problems.push(...nodeOnlyImports(target, seen));
    } else if (builtins.has(specifier) || nodeOnlyPackages.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
      problems.push(where);
    }
  }
  return problems;
}

describe('layering', () => {
  it.each(workerBound)('%s imports nothing Node-only', (dir) => {
    const files = sourceFiles(join(repoRoot, dir));
    expect(files.length).toBeGreaterThan(0);
    expect(files.flatMap((file) => nodeOnlyImports(file))).toEqual([]);
  });

  it('src/storage drivers outside node/ import nothing Node-only, and take Cloudflare bindings as arguments', () => {
    const files = sourceFiles(join(repoRoot, 'src/storage')).filter((file) => !relative(repoRoot, file).startsWith('src/storage/node/'));
    expect(files.map((file) => relative(repoRoot, file))).toEqual(
      expect.arrayContaining(['src/storage/r2-object-store.ts', 'src/storage/durable-object-sql-database.ts']),
    );
    expect(files.flatMap((file) => nodeOnlyImports(file))).toEqual([]);
    expect(files.flatMap(importsOf).filter((specifier) => specifier.startsWith('cloudflare:'))).toEqual([]);
  });

  it('the check itself catches a Node-only import', () => {
    const fsStore = join(repoRoot, 'src/storage/node/fs-object-store.ts');
    expect(importsOf(fsStore).some((specifier) => builtins.has(specifier))).toBe(true);
  });
});
