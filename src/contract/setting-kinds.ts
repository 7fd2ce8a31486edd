// The kinds of setting the table is made of: what a setting states (default, values, meaning, readers) and the parsers of integers, switches, text and read-only roots.

/**
 * The programs that read settings: `node` is `npm start` (and `toolgate serve`), `worker-dev` is
 * `npm run start:worker` (wrangler dev plus an attached runner), `cloudflare` the Worker and its
 * objects, `runner` is `toolgate runner`, `cli` the `keys` and `call` commands.
 */
export const settingsHomes = ['node', 'worker-dev', 'cloudflare', 'runner', 'cli'] as const;
export type SettingsHome = (typeof settingsHomes)[number];

export interface Setting<T> {
  /** The default as the settings table in docs/operations.md states it. */
  defaultText: string;
  /** The values accepted, as the table states them. */
  valuesText: string;
  meaning: string;
  homes: readonly SettingsHome[];
  /** The value of the variable's text for one home; throws an Error naming the variable when the text is malformed. */
  parse(raw: string | undefined, home: SettingsHome): T;
}

export const MiB = 1024 * 1024;
export const DAY_MS = 24 * 3_600_000;

export function isUnset(raw: string | undefined): raw is undefined | '' {
  return raw === undefined || raw === '';
}

const numberText = (value: number) => value.toLocaleString('en-US');

interface IntegerOptions {
  name: string;
  fallback: number;
  min: number;
  max: number;
  /** A lower ceiling on the Cloudflare home, whose objects have 128 MB of memory and whose requests are capped. */
  cloudflareMax?: number;
  /** Shown after the default, e.g. "10 MiB". */
  fallbackNote?: string;
  meaning: string;
  homes: readonly SettingsHome[];
}

export function integer(options: IntegerOptions): Setting<number> {
  const { name, fallback, min, max, cloudflareMax } = options;
  return {
    defaultText: `\`${fallback}\`${options.fallbackNote ? ` (${options.fallbackNote})` : ''}`,
    valuesText: `${numberText(min)} to ${numberText(max)}${cloudflareMax === undefined ? '' : ` (Cloudflare: to ${numberText(cloudflareMax)})`}`,
    meaning: options.meaning,
    homes: options.homes,
    parse(raw, home) {
      if (isUnset(raw)) return fallback;
      const ceiling = home === 'cloudflare' && cloudflareMax !== undefined ? cloudflareMax : max;
      const value = Number(raw);
      if (!Number.isSafeInteger(value) || value < min || value > ceiling)
        throw new Error(`${name} must be an integer from ${min} to ${ceiling}; it is ${JSON.stringify(raw)}.`);
      return value;
    },
  };
}

export function onOff(options: {
  name: string;
  fallback: boolean;
  meaning: string;
  homes: readonly SettingsHome[];
}): Setting<boolean> {
  return {
    defaultText: options.fallback ? '`on`' : '`off`',
    valuesText: '`on` or `off` (also `true`/`false`, `1`/`0`)',
    meaning: options.meaning,
    homes: options.homes,
    parse(raw) {
      if (isUnset(raw)) return options.fallback;
      if (['on', 'true', '1'].includes(raw)) return true;
      if (['off', 'false', '0'].includes(raw)) return false;
      throw new Error(`${options.name} must be "on" or "off"; it is ${JSON.stringify(raw)}.`);
    },
  };
}

/** Free text; unset (or empty) is `fallback`. */
export function text<T extends string | undefined>(options: {
  fallback: T;
  defaultText: string;
  valuesText: string;
  meaning: string;
  homes: readonly SettingsHome[];
}): Setting<string | T> {
  return {
    defaultText: options.defaultText,
    valuesText: options.valuesText,
    meaning: options.meaning,
    homes: options.homes,
    parse: (raw) => (isUnset(raw) ? options.fallback : raw),
  };
}

/** A read-only root: the workspace `workspace` shown read-only at `path` in every other workspace. */
export interface ReadOnlyRootSetting {
  path: string;
  workspace: string;
}

/** `".skills=skills,docs=handbook"`: mount path = source workspace. */
export function parseReadOnlyRoots(raw: string | undefined): ReadOnlyRootSetting[] {
  if (isUnset(raw)) return [];
  return raw.split(',').map((pair) => {
    const [path, workspace, extra] = pair.split('=').map((part) => part.trim());
    if (!path || !workspace || extra !== undefined) {
      throw new Error(`TOOLGATE_READ_ONLY_ROOTS entries look like "path=workspace"; ${JSON.stringify(pair)} does not.`);
    }
    return { path, workspace };
  });
}
