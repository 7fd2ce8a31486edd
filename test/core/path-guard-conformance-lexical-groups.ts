// Conformance planners for the relative-path groups of cases.json: Go, pillarjs, werkzeug, traversal payloads, curated attacks.
import type { Access, GuardEntry } from '../../src/core/path-guard.ts';
import { dir, file, link } from './in-memory-manifest-view.ts';
import {
  allow,
  deny,
  jsInput,
  literal,
  literalPath,
  refusedNormalisation,
  type Case,
  type GroupPlanner,
  type LiteralRule,
  type Plan,
} from './path-guard-conformance-plan.ts';

const read = { access: 'read' } as const;

/** An allow verdict, unless it needs `..` or `//` normalised, which toolgate refuses instead. */
function allowed(
  input: string,
  options: { access: Access; entries?: Record<string, GuardEntry> },
  path = literalPath(input),
): Plan {
  const divergence = refusedNormalisation(input);
  return divergence ? { divergence, probes: [deny(input, options)] } : { probes: [allow(input, options, path)] };
}

function goIsLocalCase(c: Case): Plan {
  const input = String(c.input);
  if (c.platform === 'windows') {
    if (c.expected === 'allow') return allowed(input, read);
    if (input.includes('\\') || input.split('/').includes('..')) return { probes: [deny(input, read)] };
    return { divergence: 'windowsOnly', probes: [literal(input, 'windowsName', read)] };
  }
  if (c.expected === 'allow') return allowed(input, read);
  if (input === '') return { divergence: 'emptyIsRoot', probes: [allow('', read, '')] };
  if (input.startsWith('/') && !input.split('/').includes('..'))
    return { divergence: 'leadingSlashIsRoot', probes: [allow(input, read, literalPath(input))] };
  return { probes: [deny(input, read)] };
}

/** os.Root's fs notation: `d/` a directory, `f` a file, `a => b` a link; `$ABS` (the root itself) becomes `/`. */
function rootEntries(fs: readonly string[]): Record<string, GuardEntry> {
  const entries: Record<string, GuardEntry> = {};
  for (const line of fs) {
    const symlink = /^(.+?) => (.*)$/.exec(line);
    if (symlink) entries[symlink[1]!] = link(symlink[2]!.replace('$ABS', ''));
    else if (line.endsWith('/')) entries[line.slice(0, -1)] = dir;
    else entries[line] = file;
  }
  return entries;
}

function goRootCase(c: Case): Plan {
  const input = String(c.input);
  const options = { ...read, entries: rootEntries(c.fs ?? []) };
  // Lstat and Remove do not follow the final link: they must reach `ltarget`, even where Open fails.
  const lstat = c.ltarget === undefined ? [] : [allow(input, { ...options, followFinalSymlink: false }, c.ltarget)];
  const target = (c.target ?? '').split(' ')[0]!;
  if (c.expected === 'allow') {
    const plan = allowed(input, options, target);
    return plan.divergence ? plan : { probes: [...plan.probes, ...lstat] };
  }
  if (input === '') return { divergence: 'emptyIsRoot', probes: [allow('', options, '')] };
  if (c.name === 'directory does not exist')
    return { divergence: 'missingIsNotRefused', probes: [allow(input, options, literalPath(input))] };
  if (c.name === 'absolute symlink')
    return { divergence: 'absoluteTargetFollowed', probes: [allow(input, options, target), ...lstat] };
  return { probes: [deny(input, options), ...lstat] };
}

function pillarjsCase(c: Case): Plan {
  const input =
    typeof c.input === 'string'
      ? c.input.replace('<dir> (absolute)', '/srv/dir').replace('<basename(dir)>', 'dir')
      : jsInput(c.input);
  if (typeof input !== 'string') return { probes: [deny(input, read)] };
  if (c.expected === 'allow') return allowed(input, read);
  if (input.startsWith('/')) return { divergence: 'leadingSlashIsRoot', probes: [allow(input, read, 'srv/dir')] };
  return { probes: [deny(input, read)] };
}

function werkzeugCase(c: Case): Plan {
  const input = String(c.input);
  if (typeof c.context === 'string' && c.context.includes('_os_alt_seps'))
    return { divergence: 'altSeparator', probes: [allow(input, read, input)] };
  if (c.platform?.startsWith('windows'))
    return { divergence: 'windowsOnly', probes: [literal(input, 'windowsName', read)] };
  // "deny on Windows, allow on POSIX" for `b\c`: the backslash is refused, the Windows reading.
  if (c.expected?.startsWith('deny')) return { probes: [deny(input, read)] };
  return allowed(input, read);
}

function payloadCase(c: Case): Plan {
  const input = String(c.input).replace('{FILE}', 'etc/passwd');
  if (input.includes('\\')) return { probes: [deny(input, read)] };
  if (input.includes('%')) return { probes: [literal(input, 'percentEncoded', read)] };
  if (input === '..././' || input === '..;/') return { probes: [literal(input, 'oddDots', read)] };
  return { probes: [deny(input, read)] };
}

// Curated attacks, checked as writes (the stricter access) so the denylist cases count.
const curatedWindowsOnly = new Set([
  'C:secret.txt',
  'c:/windows/win.ini',
  '.ssh./authorized_keys',
  '.git /hooks/post-checkout',
  'secret.txt.',
  'secret.txt ',
  '.. /x',
  'CON',
  'nul.txt',
  'a/aux',
  'file.txt::$DATA',
  'file.txt:hidden',
  'GIT~1/hooks/pre-commit',
]);
const curatedLiterals = new Map<string, LiteralRule>([
  ['%2e%2e%2fetc%2fpasswd', 'percentEncoded'],
  ['..%2fetc%2fpasswd', 'percentEncoded'],
  ['%252e%252e%252fetc', 'percentEncoded'],
  ['..%5c..%5cetc', 'percentEncoded'],
  ['%c0%ae%c0%ae%c0%afetc', 'percentEncoded'],
  ['%uff0e%uff0e%u2215etc', 'percentEncoded'],
  ['\uff0e\uff0e\uff0fetc\uff0fpasswd', 'unicodeLookalike'],
  ['\u2025/etc/passwd', 'unicodeLookalike'],
  ['..\u2215etc\u2215passwd', 'unicodeLookalike'],
  ['..\u2044etc', 'unicodeLookalike'],
  ['a\u202eb.txt', 'bidiOverride'],
  [' a.txt', 'leadingSpace'],
  ['x'.repeat(256), 'longSegment'],
]);

function curatedCase(c: Case): Plan {
  const input = String(c.input);
  const verdict = c.recommended ?? '';
  // `~root` is the point of this case; as a write its `.ssh` segment would be refused for another reason.
  const options = { access: input === '~root/.ssh/id_rsa' ? 'read' : 'write' } as const;
  const literalRule = curatedLiterals.get(input);
  if (curatedWindowsOnly.has(input))
    return { divergence: 'windowsOnly', probes: [literal(input, 'windowsName', options)] };
  if (literalRule) return { probes: [literal(input, literalRule, options)] };
  if (input === '/etc/passwd')
    return { divergence: 'leadingSlashIsRoot', probes: [allow(input, options, 'etc/passwd')] };
  if (verdict === 'normalise-NFC-then-validate')
    return { divergence: 'refusedNotRepaired', probes: [deny(input, options)] };
  if (verdict.startsWith('allow') || verdict === 'literal' || verdict === 'deny-or-root')
    return allowed(input, options);
  return { probes: [deny(input, options)] };
}

export const lexicalGroupPlanners: Record<string, GroupPlanner> = {
  'go-filepath-IsLocal': goIsLocalCase,
  'go-os-Root': goRootCase,
  'pillarjs-resolve-path': pillarjsCase,
  'werkzeug-safe_join': werkzeugCase,
  'payloadsallthethings-traversal-encodings': payloadCase,
  'curated-virtual-path-attacks': curatedCase,
};
