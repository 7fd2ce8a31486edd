// The settings table holds code and docs together: every variable the programs read is in the
// table (src/contract/settings.ts) and in docs/operations.md, every row there is a setting the
// code reads, and the homes read their settings through the table.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSettings, type Env } from '../../src/cloudflare/bindings.ts';
import { readSetting, settingNames, settings, settingsReadBy, type SettingName } from '../../src/contract/settings.ts';
import { readNodeConfig } from '../../src/node/config.ts';
import { readSandboxSettings } from '../../src/runner/node/sandbox-settings.ts';
import { generatedPart, repoRoot } from './generated-tables.ts';

/** Upper-case names read from an env object that are not settings, and why. */
const notSettings: Record<string, string> = {
  WORKSPACES: 'a Durable Object binding of the Worker (wrangler.toml)',
  KEYS: 'a Durable Object binding of the Worker (wrangler.toml)',
  DIRECTORY: 'a Durable Object binding of the Worker (wrangler.toml)',
  DISPATCHER: 'a Durable Object binding of the Worker (wrangler.toml)',
  STORE_FAMILIES: 'a Durable Object binding of the Worker (wrangler.toml)',
  JOBS: 'the Queue binding of the Worker (wrangler.toml)',
  BLOBS: 'the R2 bucket binding of the Worker (wrangler.toml)',
  PATH: 'the host PATH, searched for bwrap when TOOLGATE_BWRAP_PATH is unset',
  SHELL: "read from a call's own env (the command's environment), not from toolgate's",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.(ts|js)$/.test(name) ? [path] : [];
  });
}

/** The programs' code: src/, functions/ and bin/. */
const programFiles = ['src', 'functions', 'bin'].flatMap((dir) => sourceFiles(join(repoRoot, dir)));
const tableFile = join(repoRoot, 'src/contract/settings.ts');

interface Read {
  name: string;
  where: string;
}

/**
 * Every variable name the code reads or names: `process.env.X`, `process.env['X']`, any
 * `env.X` / `env['X']` (a Worker's env, an injected one, `io.env`), and every `TOOLGATE_*` name
 * anywhere in the text (strings, templates, comments), but `TOOLGATE_S3_*`-style wildcards.
 */
function scan(file: string): Read[] {
  const text = readFileSync(file, 'utf8');
  const where = relative(repoRoot, file);
  const found: Read[] = [];
  for (const match of text.matchAll(/\benv\??\.([A-Z][A-Z0-9_]*)\b|\benv\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\]/g))
    found.push({ name: (match[1] ?? match[2])!, where });
  for (const match of text.matchAll(/\bTOOLGATE_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_]*\*)/g))
    found.push({ name: match[0], where });
  return found;
}

const reads = programFiles.flatMap(scan);

describe('the settings table', () => {
  it('the scan finds what it should, and skips wildcards', () => {
    const names = new Set(reads.map((read) => read.name));
    for (const name of ['TOOLGATE_URL', 'TOOLGATE_S3_REGION', 'TOOLGATE_RUNNER_KEY', 'WORKSPACES', 'PATH'])
      expect(names).toContain(name);
    expect(scan(tableFile).map((read) => read.name)).toEqual(expect.arrayContaining(['TOOLGATE_DATA']));
    expect(
      [...names].filter((name) => name === 'TOOLGATE_S3' || name === 'TOOLGATE_S3_' || name === 'TOOLGATE_PROCESS'),
    ).toEqual([]);
  });

  it('holds every variable the programs read or name', () => {
    const unknown = reads
      .filter((read) => !(read.name in settings) && !(read.name in notSettings))
      .map((read) => `${read.where}: ${read.name}`);
    expect([...new Set(unknown)]).toEqual([]);
  });

  it('holds nothing the programs do not read', () => {
    // Outside the table itself, each setting is named by the code that reads it, through the
    // table (`read('PORT')`) or directly (`io.env.TOOLGATE_URL`).
    const code = programFiles
      .filter((file) => file !== tableFile)
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const unread = settingNames.filter((name) => !new RegExp(`['"\`.]${name}\\b(?![A-Z0-9_])`).test(code));
    expect(unread).toEqual([]);
    // And no exception names a setting.
    expect(Object.keys(notSettings).filter((name) => name in settings)).toEqual([]);
  });

  it('gives each setting a default, a meaning and the programs that read it', () => {
    for (const name of settingNames) {
      const setting = settings[name];
      expect(setting.defaultText, name).not.toBe('');
      expect(setting.meaning.length, name).toBeGreaterThan(10);
      expect(setting.homes.length, name).toBeGreaterThan(0);
    }
  });

  it("names the Worker's variables: the Env type's TOOLGATE_* fields are exactly the settings the Worker reads", () => {
    const bindings = readFileSync(join(repoRoot, 'src/cloudflare/bindings.ts'), 'utf8');
    const envBlock = /export interface Env \{([\s\S]*?)\n\}/.exec(bindings)![1]!;
    const fields = [...envBlock.matchAll(/^\s*(TOOLGATE_[A-Z0-9_]+)\?:/gm)].map((match) => match[1]);
    expect(fields.sort()).toEqual(settingsReadBy('cloudflare').sort());
  });

  it('is what the homes read: defaults when unset, the same defaults on both homes', () => {
    const node = readNodeConfig({});
    expect(node.port).toBe(readSetting({}, 'PORT', 'node'));
    expect(node.maxBodyBytes).toBe(10 * 1024 * 1024);
    expect(node.sandbox).toEqual({
      mode: 'bwrap',
      bwrapPath: undefined,
      commandUid: 65534,
      limits: { memoryMb: 2048, pids: 512, maxProcessMs: 3_600_000 },
    });
    const worker = readSettings({} as Env);
    expect(worker).toMatchObject({
      maxBodyBytes: node.maxBodyBytes,
      maxFileBytes: node.maxFileBytes,
      defaultReadMaxChars: node.defaultReadMaxChars,
      leaseMs: node.leaseMs,
      workspaceMaxProcesses: node.workspaceMaxProcesses,
      maxProcessOutputChars: node.maxProcessOutputChars,
      approvalTtlMs: node.approvalTtlMs,
      processAccrualMs: node.processAccrualMs,
      rateLimitPerMinute: node.rateLimitPerMinute,
      importLimits: node.importLimits,
      sandbox: undefined,
    });
  });

  it('refuses a malformed value with a message naming the variable, with the lower ceilings on Cloudflare', () => {
    expect(() => readNodeConfig({ PORT: 'x' })).toThrow('PORT must be an integer from 0 to 65535; it is "x".');
    expect(() => readNodeConfig({ TOOLGATE_RUNNER: 'maybe' })).toThrow(
      'TOOLGATE_RUNNER must be "on" or "off"; it is "maybe".',
    );
    expect(() => readNodeConfig({ TOOLGATE_READ_ONLY_ROOTS: 'skills' })).toThrow(
      'TOOLGATE_READ_ONLY_ROOTS entries look like "path=workspace"',
    );
    expect(readNodeConfig({ TOOLGATE_READ_ONLY_ROOTS: '.skills=skills' }).readOnlyRoots).toEqual([
      { path: '.skills', workspace: 'skills' },
    ]);
    expect(readNodeConfig({ TOOLGATE_IMPORT_MAX_BYTES: String(64 * 1024 * 1024) }).importLimits.maxBytes).toBe(
      64 * 1024 * 1024,
    );
    expect(() => readSettings({ TOOLGATE_IMPORT_MAX_BYTES: String(64 * 1024 * 1024) } as Env)).toThrow(
      `TOOLGATE_IMPORT_MAX_BYTES must be an integer from 1 to ${48 * 1024 * 1024}`,
    );
    expect(() => readSettings({ TOOLGATE_SANDBOX: 'bwrapp' } as Env)).toThrow(
      'TOOLGATE_SANDBOX must be "bwrap" or "none"',
    );
    expect(readSettings({ TOOLGATE_SANDBOX: 'none' } as Env).sandbox).toBe('none');
  });

  it('agrees with the runner program, which reads its sandbox settings itself (src/runner/node/sandbox-settings.ts)', () => {
    const sandboxSettings: SettingName[] = [
      'TOOLGATE_SANDBOX',
      'TOOLGATE_BWRAP_PATH',
      'TOOLGATE_RUNNER_UID',
      'TOOLGATE_PROCESS_MEMORY_MB',
      'TOOLGATE_PROCESS_PIDS',
      'TOOLGATE_MAX_PROCESS_MS',
    ];
    expect(sandboxSettings.filter((name) => !(settings[name].homes as readonly string[]).includes('runner'))).toEqual(
      [],
    );
    expect(
      settingsReadBy('runner').filter((name) => !sandboxSettings.includes(name) && name !== 'TOOLGATE_RUNNER_KEY'),
    ).toEqual([]);
    expect(readSandboxSettings({})).toEqual(readNodeConfig({}).sandbox);
    const day = 24 * 3_600_000;
    const probes = [
      '',
      '-1',
      '0',
      '1',
      '7',
      '8',
      '15',
      '16',
      '999',
      '1000',
      '65534',
      '1.5',
      'x',
      String(2 ** 31 - 2),
      String(2 ** 31 - 1),
      String(1024 * 1024),
      String(1024 * 1024 + 1),
      '4194304',
      '4194305',
      String(30 * day),
      String(30 * day + 1),
    ];
    const outcome = (read: () => unknown) => {
      try {
        return JSON.stringify(read());
      } catch (error) {
        return `error: ${(error as Error).message}`;
      }
    };
    for (const name of sandboxSettings) {
      for (const value of [...probes, 'none', 'bwrap', 'bwrapp', '/usr/bin/bwrap', 'bwrap-relative']) {
        expect(
          outcome(() => readNodeConfig({ [name]: value }).sandbox),
          `${name}=${value}`,
        ).toBe(outcome(() => readSandboxSettings({ [name]: value })));
      }
    }
  });
});

describe('docs/operations.md', () => {
  const operations = readFileSync(join(repoRoot, 'docs/operations.md'), 'utf8');
  const table = generatedPart(operations, 'settings');

  it('has the settings table, with a row for every setting and no other', () => {
    expect(table).toBeDefined();
    const rows = table!
      .split('\n')
      .slice(2)
      .map((row) => /^\| `([A-Z][A-Z0-9_]*)` \|/.exec(row)?.[1]);
    expect(rows).toEqual(settingNames);
  });

  it('names only real settings anywhere in the docs and the README', () => {
    const docs = ['README.md', ...readdirSync(join(repoRoot, 'docs')).map((name) => `docs/${name}`)].filter((path) =>
      path.endsWith('.md'),
    );
    const named = docs.flatMap((path) =>
      [...readFileSync(join(repoRoot, path), 'utf8').matchAll(/\bTOOLGATE_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_]*\*)/g)].map(
        (match) => `${path}: ${match[0]}`,
      ),
    );
    expect(named.length).toBeGreaterThan(settingNames.length);
    expect(named.filter((entry) => !(entry.split(': ')[1]! in settings))).toEqual([]);
  });
});
