// The layer table of docs/architecture.md, held to the code: every import in src/ points up the
// table (or is an exception listed here, with its reason); and the Worker-bound layers import
// nothing Node-only, directly or through the files they import.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/server-process.ts';

/** The folders of src/ in layer order: a folder imports only from folders of earlier layers, and from its own. */
const layers: readonly (readonly string[])[] = [
  ['core'],
  ['contract'],
  ['storage'],
  ['workspace', 'processes'],
  ['history', 'tools'],
  ['keys', 'approvals', 'metering'],
  ['calls'],
  ['hooks', 'search'],
  ['http'],
  ['node', 'cloudflare', 'runner', 'client', 'cli'],
];

const above = (folder: string): string[] => {
  const level = layers.findIndex((layer) => layer.includes(folder));
  return layers.slice(0, level).flat();
};

/**
 * What each folder may import: the layers above it, narrowed for the programs that speak only a
 * protocol, widened by the exceptions named with their reasons.
 */
const mayImport: Record<string, readonly string[]> = {
  ...Object.fromEntries(layers.flat().map((folder) => [folder, above(folder)])),
  // keys/ comes first in its layer: approvals and metering read a key's policy and quota.
  approvals: [...above('approvals'), 'keys'],
  metering: [...above('metering'), 'keys'],
  // The Node home runs a runner in its own process (TOOLGATE_RUNNERS), through the in-process transport.
  node: [...above('node'), 'runner'],
  // A separate program: it speaks only the runner protocol.
  runner: ['core', 'contract'],
  // The client and the CLI speak only HTTP.
  client: ['core', 'contract'],
  cli: ['core', 'contract', 'client'],
};

/** Single imports outside the table, each with its reason. */
const exceptions: readonly { from: string; to: string; reason: string }[] = [
  {
    from: 'src/cli/main.ts',
    to: 'functions/node.ts',
    reason:
      '`toolgate serve` starts the composition root, imported on demand so the client commands never load the server',
  },
  {
    from: 'src/cli/main.ts',
    to: 'functions/runner.ts',
    reason: '`toolgate runner` starts the runner composition root, imported on demand',
  },
];

// src/client runs in browsers and Workers too, so it is held to the same rule.
const workerBound = [
  'src/core',
  'src/contract',
  'src/workspace',
  'src/history',
  'src/tools',
  'src/http',
  'src/keys',
  'src/approvals',
  'src/metering',
  'src/calls',
  'src/client',
  'src/cloudflare',
  'src/hooks',
];
const nodeOnlyPackages = ['better-sqlite3', '@hono/node-server', 'tsx'];
const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.tsx?$/.test(path) ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ];
  return specifiers.map((match) => match[1]!);
}

/** Every relative import of a file under `src/` that the table does not allow, as "importer -> target". */
function layerViolations(file: string, table = mayImport, allowed = exceptions): string[] {
  const from = relative(repoRoot, file);
  const folder = from.split('/')[1]!;
  return importsOf(file).flatMap((specifier) => {
    if (!specifier.startsWith('.')) return [];
    const to = relative(repoRoot, resolve(dirname(file), specifier));
    const [top, target] = to.split('/');
    if (top === 'src' && (target === folder || table[folder]?.includes(target!))) return [];
    if (allowed.some((exception) => exception.from === from && exception.to === to)) return [];
    return [`${from} -> ${to}`];
  });
}

/** The src/ files each file of src/ imports (static and dynamic). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  return new Map(
    files.map((file) => [
      file,
      importsOf(file)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => resolve(dirname(file), specifier))
        .filter((target) => relative(repoRoot, target).startsWith('src/')),
    ]),
  );
}

/** The import cycles of the graph, as "a -> b -> a": depth first, each import back to a file still open closes one. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open')
        cycles.push([...path.slice(path.indexOf(target)), target].map((each) => relative(repoRoot, each)).join(' -> '));
      else if (!state.has(target)) visit(target);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
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
    } else if (
      builtins.has(specifier) ||
      nodeOnlyPackages.some((name) => specifier === name || specifier.startsWith(`${name}/`))
    ) {
      problems.push(where);
    }
  }
  return problems;
}

describe('layering', () => {
  it('every folder of src/ is in the layer table', () => {
    const folders = readdirSync(join(repoRoot, 'src')).filter((name) =>
      statSync(join(repoRoot, 'src', name)).isDirectory(),
    );
    expect(folders.filter((folder) => !(folder in mayImport))).toEqual([]);
  });

  it('every import in src/ points up the layer table', () => {
    const files = sourceFiles(join(repoRoot, 'src'));
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((file) => layerViolations(file))).toEqual([]);
  });

  it('the table check itself catches an import against the table', () => {
    const server = join(repoRoot, 'src/node/server.ts');
    expect(layerViolations(server)).toEqual([]);
    // The same file judged as if node/ were the runner, which may import only core/ and contract/.
    expect(layerViolations(server, { ...mayImport, node: mayImport.runner! })).toEqual(
      expect.arrayContaining(['src/node/server.ts -> src/http/app.ts']),
    );
    expect(layerViolations(join(repoRoot, 'src/cli/main.ts'), mayImport, [])).toEqual([
      'src/cli/main.ts -> functions/node.ts',
      'src/cli/main.ts -> functions/runner.ts',
    ]);
  });

  it('no file of src/ imports itself through others (no import cycle)', () => {
    expect(importCycles(importGraph(sourceFiles(join(repoRoot, 'src'))))).toEqual([]);
  });

  it('the cycle check itself catches a cycle', () => {
    const [a, b, c] = ['src/a.ts', 'src/b.ts', 'src/c.ts'].map((file) => join(repoRoot, file)) as [
      string,
      string,
      string,
    ];
    expect(
      importCycles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, [a]],
        ]),
      ),
    ).toEqual(['src/a.ts -> src/b.ts -> src/c.ts -> src/a.ts']);
    expect(
      importCycles(
        new Map([
          [a, [b, c]],
          [b, [c]],
          [c, []],
        ]),
      ),
    ).toEqual([]);
  });

  it.each(workerBound)('%s imports nothing Node-only', (dir) => {
    const files = sourceFiles(join(repoRoot, dir));
    expect(files.length).toBeGreaterThan(0);
    expect(files.flatMap((file) => nodeOnlyImports(file))).toEqual([]);
  });

  it('src/storage drivers outside node/ import nothing Node-only, and take Cloudflare bindings as arguments', () => {
    const files = sourceFiles(join(repoRoot, 'src/storage')).filter(
      (file) => !relative(repoRoot, file).startsWith('src/storage/node/'),
    );
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
