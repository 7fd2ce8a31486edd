// Conformance planners for the host-path groups of cases.json: the MCP filesystem server, AI4J and Codex.
import type { Access, GuardEntry, GuardPolicy } from '../../src/core/path-guard.ts';
import { file, link } from './in-memory-manifest-view.ts';
import {
  allow,
  deny,
  hostTarget,
  hostToVirtual,
  jsInput,
  literal,
  refusedNormalisation,
  usableRoots,
  type Case,
  type DivergenceRule,
  type GroupPlanner,
  type Plan,
} from './path-guard-conformance-plan.ts';

const read = { access: 'read' } as const;
const write = { access: 'write' } as const;

/** Looks a case up by name, so a case added to the data fails loudly instead of slipping through. */
function byName(table: Record<string, Plan>): GroupPlanner {
  return (c) => {
    const plan = table[c.name ?? ''];
    if (plan === undefined) throw new Error(`no plan for case ${JSON.stringify(c.name)}`);
    return plan;
  };
}

/**
 * isPathWithinAllowedDirectories / validatePath: a host path against allowed roots. The workspace is
 * the root the path falls under; see hostToVirtual for how paths outside every root are named.
 */
function allowListCase(c: Case): Plan {
  const input = jsInput(c.input);
  if (typeof input !== 'string') return { probes: [deny(input, read)] };
  if (c.platform === 'windows') {
    // A backslash is refused whatever it means; a path without one is only a literal name here.
    const ours = input.includes('\\') ? deny(input, read) : literal(input, 'windowsName', read);
    return c.expected === 'deny' && input.includes('\\')
      ? { probes: [ours] }
      : { divergence: 'windowsOnly', probes: [ours] };
  }
  const roots = input.startsWith('/') ? usableRoots(c.allowed_roots) : [];
  if (roots === undefined) return { divergence: 'rootsConfiguration', probes: [] };
  const virtual = hostToVirtual(input, roots);
  if (c.expected === 'deny') {
    if (input === '') return { divergence: 'emptyIsRoot', probes: [allow('', read, '')] };
    return { probes: [deny(virtual, read)] };
  }
  const divergence = refusedNormalisation(input);
  return divergence ? { divergence, probes: [deny(virtual, read)] } : { probes: [allow(virtual, read)] };
}

function validatePathCase(c: Case): Plan {
  if (c.expected_error !== 'Parent directory does not exist') return allowListCase(c);
  return {
    divergence: 'missingIsNotRefused',
    probes: [allow(hostToVirtual(String(c.input), ['/home/user']), read, 'nonexistent/newfile.txt')],
  };
}

// Scenarios on a real temp dir T. The workspace is T/allowed unless said otherwise, so T/forbidden is outside.
const forbiddenLink = { 'link-to-target.txt': link('../forbidden/target.txt') };
const chainStart = { 'seemingly-safe-file': link('../intermediate-link2') };
// The workspace is T: the same file through the link and directly.
const throughDirLink = { 'actual-target/file.txt': file, 'symlink-dir': link('actual-target') };
const bothSpellings: Plan = {
  probes: [
    allow('symlink-dir/file.txt', { ...read, entries: throughDirLink }, 'actual-target/file.txt'),
    allow('actual-target/file.txt', { ...read, entries: throughDirLink }, 'actual-target/file.txt'),
  ],
};

const scenarios = byName({
  'symlink inside allowed dir -> file in forbidden dir': {
    // Followed, the link leaves; not followed (the "lexical" check), it is the link itself, inside.
    probes: [
      deny('link-to-target.txt', { ...read, entries: forbiddenLink }),
      allow('link-to-target.txt', { ...read, entries: forbiddenLink, followFinalSymlink: false }, 'link-to-target.txt'),
    ],
  },
  // Its third check concerns an allowed root configured through a link; a workspace root is not a path.
  'allowed dir given through a symlink': bothSpellings,
  'macOS /tmp -> /private/tmp (issue #3253)': bothSpellings,
  'nested symlink chain': {
    probes: [
      deny('seemingly-safe-file', { ...read, entries: chainStart }),
      allow('seemingly-safe-file', { ...read, entries: chainStart, followFinalSymlink: false }, 'seemingly-safe-file'),
    ],
  },
  'new file under a symlinked subdirectory': {
    probes: [deny('link/newfile.txt', { ...write, entries: { link: link('../outside') } })],
  },
  'symlink created after validation (TOCTOU) blocked by O_EXCL': {
    divergence: 'fsOperation',
    probes: [
      allow('race-file.txt', write, 'race-file.txt'),
      deny('race-file.txt', { ...write, entries: { 'race-file.txt': link('../outside/target.txt') } }),
    ],
  },
  'rename does not follow symlinks': {
    // A rename onto a link resolves its destination without following it, so it replaces the link.
    probes: [
      allow(
        'target-symlink.txt',
        {
          ...write,
          entries: { 'target-symlink.txt': link('../outside/forbidden-target.txt') },
          followFinalSymlink: false,
        },
        'target-symlink.txt',
      ),
    ],
  },
  'read race still possible (documented in test)': {
    divergence: 'fsOperation',
    probes: [
      allow('readable.txt', { ...read, entries: { 'readable.txt': file } }, 'readable.txt'),
      deny('readable.txt', { ...read, entries: { 'readable.txt': link('../outside/secret.txt') } }),
    ],
  },
});

// The CVE pair: <BASE>/allowed_dir is the workspace; the links the case names point into <BASE>/outside.
const cveRoot = '/base/allowed_dir';
const cveEntries: Record<string, GuardEntry> = {
  'link.txt': link(hostTarget('/base/outside/target.txt', 'link.txt', cveRoot)),
  dirlink: link(hostTarget('/base/outside', 'dirlink', cveRoot)),
  'dangling.txt': link(hostTarget('/base/outside/missing.txt', 'dangling.txt', cveRoot)),
};
const cveDivergences: Record<string, DivergenceRule> = {
  'dangling symlink inside allowed dir -> outside (new file target)': 'danglingEscapeRefused',
  'sibling named allowed_dir + quote (GHSA-7rgq-gccq-qphx class)': 'upstreamBug',
  'sibling named allowed_dir + trailing space': 'upstreamBug',
};

function cveCase(c: Case): Plan {
  const input = hostToVirtual(String(c.input).replace('<BASE>', '/base'), [cveRoot]);
  const options = { ...read, entries: cveEntries };
  const divergence = cveDivergences[c.name ?? ''];
  if (divergence) return { divergence, probes: [deny(input, options)] };
  return { probes: [c.post_fix?.startsWith('DENY') ? deny(input, options) : allow(input, options)] };
}

// AI4J: <ws> is the workspace; its guard's defaults become the policy (.git is excluded there).
const ai4jRoot = '/ws';
const ai4jPolicy: GuardPolicy = { excludedPaths: ['.git', 'target', 'node_modules', '.idea'] };
const ai4jEntries: Record<string, GuardEntry> = {
  'linkdir/escape': link(hostTarget('/outside', 'linkdir/escape', ai4jRoot)),
  'filelink.txt': link(hostTarget('/outside/secret.txt', 'filelink.txt', ai4jRoot)),
  'loop-a': link('loop-b'),
  'loop-b': link('loop-a'),
};
const ai4jWrite = { ...write, entries: ai4jEntries, policy: ai4jPolicy };

function ai4jInput(input: unknown): string {
  const host = String(input)
    .replace('<outside-abs>', '/outside')
    .replace('<outside>', '/outside')
    .replace('<ws>', ai4jRoot);
  return hostToVirtual(host, [ai4jRoot]);
}

function ai4jGuardCase(c: Case): Plan {
  const input = ai4jInput(c.input);
  if ((c.context as { allowOutsideWorkspace?: boolean } | undefined)?.allowOutsideWorkspace) {
    return { divergence: 'noOutsideSwitch', probes: [deny(input, ai4jWrite)] };
  }
  return { probes: [c.expected === 'deny' ? deny(input, ai4jWrite) : allow(input, ai4jWrite)] };
}

function ai4jProbeCase(c: Case): Plan {
  const input = ai4jInput(c.input);
  return { probes: [c.recommended?.startsWith('deny') ? deny(input, ai4jWrite) : allow(input, ai4jWrite, input)] };
}

// BuiltInToolContext: <skills> (outside AI4J's workspace) is modelled as the read-only root `skills`.
const contextEntries: Record<string, GuardEntry> = {
  'notes.txt': file,
  'skills/SKILL.md': file,
  'link.txt': link('../outside/secret.txt'),
  'skills/link.txt': link('../../outside/secret.txt'),
};

function toolContextCase(c: Case): Plan {
  const path = String(c.input).split(' (')[0]!.replace('<skills>', 'skills');
  const context = c.context as { allowedReadRoots?: string[]; restrictReadToAllowedRoots?: boolean };
  const access: Access = c.operation?.startsWith('write') ? 'write' : 'read';
  const options = {
    access,
    entries: contextEntries,
    policy: context.allowedReadRoots ? { readOnlyRoots: ['skills'] } : {},
  };
  const observed = c.observed ?? '';
  const inRoot = path.startsWith('skills/') ? 'skills' : null;
  if (observed.startsWith('allow') && /escape|lexical only/.test(observed))
    return { divergence: 'observedEscape', probes: [deny(path, options)] };
  if (context.restrictReadToAllowedRoots && inRoot === null)
    return { divergence: 'noReadRestriction', probes: [allow(path, options, path, null)] };
  if (path === 'skills/missing.md')
    return { divergence: 'missingIsNotRefused', probes: [allow(path, options, path, 'skills')] };
  if (path === 'skills2/x') return { probes: [literal(path, 'readRootSibling', options, null)] };
  return {
    probes: [
      observed.startsWith('deny')
        ? deny(path, options)
        : allow(path, options, path, access === 'read' ? inRoot : undefined),
    ],
  };
}

/** Every path an apply_patch envelope names: added, updated, deleted and moved-to files. */
function patchPaths(patch: string): string[] {
  return [...patch.matchAll(/^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/gm)].map((match) => match[1]!);
}

function codexCase(c: Case): Plan {
  const setup = typeof c.setup === 'string' ? c.setup : '';
  if (setup.startsWith('soft-link.txt')) {
    return {
      probes: [
        deny('soft-link.txt', { ...write, entries: { 'soft-link.txt': link('../outside/victim.txt') } }),
        // The same link when the victim's folder is a read-only root inside the workspace.
        deny('soft-link.txt', {
          ...write,
          entries: { 'soft-link.txt': link('outside/victim.txt'), 'outside/victim.txt': file },
          policy: { readOnlyRoots: ['outside'] },
        }),
      ],
    };
  }
  if (setup.startsWith('hard-link.txt'))
    return {
      divergence: 'noHardLinks',
      probes: [allow('hard-link.txt', { ...write, entries: { 'hard-link.txt': file } })],
    };
  // The patch is refused for its one path that climbs out; the path it moves from is ordinary.
  const paths = patchPaths(c.patch ?? '');
  if (!paths.some((path) => path.startsWith('../'))) throw new Error('expected a path that climbs out');
  return { probes: paths.map((path) => (path.startsWith('../') ? deny(path, write) : allow(path, write, path))) };
}

export const hostGroupPlanners: Record<string, GroupPlanner> = {
  'mcp-isPathWithinAllowedDirectories': allowListCase,
  'mcp-validatePath-lib-tests': validatePathCase,
  'mcp-filesystem-scenarios': scenarios,
  'mcp-cve-before-after': cveCase,
  'ai4j-WorkspacePathGuard-tests': ai4jGuardCase,
  'ai4j-WorkspacePathGuard-probes': ai4jProbeCase,
  'ai4j-BuiltInToolContext-probes': toolContextCase,
  'codex-core-apply-patch-sandbox': codexCase,
};
