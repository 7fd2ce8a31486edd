// Every case of test/fixtures/conformance/paths/cases.json through the guard: asserted, or counted as a documented divergence.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import { resolvePath, type ResolvedPath } from '../../src/core/path-guard.ts';
import { manifestView } from './in-memory-manifest-view.ts';
import { hostGroupPlanners } from './path-guard-conformance-host-groups.ts';
import { lexicalGroupPlanners } from './path-guard-conformance-lexical-groups.ts';
import {
  divergences,
  literalNames,
  type Case,
  type DivergenceRule,
  type Probe,
} from './path-guard-conformance-plan.ts';

interface Group {
  id: string;
  cases: Case[];
}

const data = JSON.parse(readFileSync(new URL('../fixtures/conformance/paths/cases.json', import.meta.url), 'utf8')) as {
  groups: Group[];
};
const planners = { ...hostGroupPlanners, ...lexicalGroupPlanners };
const guardCodes = new Set(['invalid_argument', 'path_outside_workspace', 'path_denied', 'symlink_loop']);

/**
 * How each group's cases divide. Pinned so that a changed verdict, a new case or a new reason to
 * diverge shows up here; the reasons are spelled out in `divergences`.
 */
const expectedCounts: Record<string, { asserted: number; divergent: Partial<Record<DivergenceRule, number>> }> = {
  'mcp-isPathWithinAllowedDirectories': {
    asserted: 107,
    divergent: { emptyIsRoot: 1, emptySegmentsNotCollapsed: 4, rootsConfiguration: 7, windowsOnly: 10 },
  },
  'mcp-validatePath-lib-tests': { asserted: 4, divergent: { missingIsNotRefused: 1 } },
  'mcp-filesystem-scenarios': { asserted: 6, divergent: { fsOperation: 2 } },
  'mcp-cve-before-after': { asserted: 8, divergent: { danglingEscapeRefused: 1, upstreamBug: 2 } },
  'ai4j-WorkspacePathGuard-tests': { asserted: 11, divergent: { noOutsideSwitch: 1 } },
  'ai4j-WorkspacePathGuard-probes': { asserted: 12, divergent: {} },
  'ai4j-BuiltInToolContext-probes': {
    asserted: 7,
    divergent: { missingIsNotRefused: 1, noReadRestriction: 1, observedEscape: 3 },
  },
  'codex-core-apply-patch-sandbox': { asserted: 3, divergent: { noHardLinks: 1 } },
  'go-filepath-IsLocal': {
    asserted: 16,
    divergent: { dotdotNotNormalised: 1, emptyIsRoot: 1, leadingSlashIsRoot: 2, windowsOnly: 29 },
  },
  'go-os-Root': {
    asserted: 18,
    divergent: { absoluteTargetFollowed: 1, dotdotNotNormalised: 4, emptyIsRoot: 1, missingIsNotRefused: 1 },
  },
  'pillarjs-resolve-path': { asserted: 8, divergent: { leadingSlashIsRoot: 1 } },
  'werkzeug-safe_join': { asserted: 6, divergent: { altSeparator: 1, windowsOnly: 5 } },
  'payloadsallthethings-traversal-encodings': { asserted: 43, divergent: {} },
  'curated-virtual-path-attacks': {
    asserted: 42,
    divergent: {
      dotdotNotNormalised: 1,
      emptySegmentsNotCollapsed: 1,
      leadingSlashIsRoot: 1,
      refusedNotRepaired: 1,
      windowsOnly: 13,
    },
  },
};

/** What toolgate did wrong for one probe, or undefined when it did what the probe expects. */
async function mismatch(probe: Probe): Promise<string | undefined> {
  const directory = probe.directory ?? (typeof probe.input === 'string' && probe.input.endsWith('/'));
  let resolved: ResolvedPath;
  try {
    resolved = await resolvePath(manifestView(probe.entries ?? {}), probe.input, probe.policy ?? {}, {
      access: probe.access,
      directory,
      followFinalSymlink: probe.followFinalSymlink,
    });
  } catch (error) {
    if (!(error instanceof ToolError) || !guardCodes.has(error.code))
      return `threw something other than a guard refusal: ${String(error)}`;
    return probe.expect.kind === 'deny' ? undefined : `was refused (${error.code}: ${error.message})`;
  }
  if (probe.expect.kind === 'deny') return `resolved to ${JSON.stringify(resolved.path)} instead of being refused`;
  if (resolved.segments.some((name) => name === '' || name === '.' || name === '..'))
    return `resolved to the non-canonical ${JSON.stringify(resolved.segments)}`;
  const { path, readOnlyRoot } = probe.expect;
  if (path !== undefined && resolved.path !== path)
    return `resolved to ${JSON.stringify(resolved.path)}, expected ${JSON.stringify(path)}`;
  if (readOnlyRoot !== undefined && (resolved.readOnlyRoot ?? null) !== readOnlyRoot)
    return `reported read-only root ${String(resolved.readOnlyRoot)}, expected ${String(readOnlyRoot)}`;
  return undefined;
}

function label(c: Case, index: number): string {
  const name =
    c.name ??
    c.category ??
    (typeof c.input === 'string'
      ? JSON.stringify(c.input.length > 60 ? `${c.input.slice(0, 60)}…` : c.input)
      : JSON.stringify(c.input));
  return `#${index} ${name}`;
}

describe('path guard conformance (test/fixtures/conformance/paths/cases.json)', () => {
  it('has a planner for exactly the groups in the file', () => {
    expect(data.groups.map((group) => group.id).sort()).toEqual(Object.keys(planners).sort());
  });

  it.each(data.groups.map((group) => [group.id, group] as const))(
    '%s: every case is asserted or a documented divergence',
    async (id, group) => {
      const planner = planners[id]!;
      let asserted = 0;
      const divergent: Partial<Record<DivergenceRule, number>> = {};
      const failures: string[] = [];
      for (const [index, c] of group.cases.entries()) {
        const plan = planner(c);
        if (plan.divergence) {
          divergent[plan.divergence] = (divergent[plan.divergence] ?? 0) + 1;
        } else {
          asserted += 1;
          if (plan.probes.length === 0) failures.push(`${label(c, index)}: asserted without a probe`);
        }
        for (const probe of plan.probes) {
          const problem = await mismatch(probe);
          if (problem) failures.push(`${label(c, index)}: ${JSON.stringify(probe.input)} ${problem}`);
        }
      }
      expect(failures).toEqual([]);
      const divergentTotal = Object.values(divergent).reduce((sum, n) => sum + n, 0);
      expect(asserted + divergentTotal).toBe(group.cases.length);
      expect({ asserted, divergent }).toEqual(expectedCounts[id]);
    },
  );

  it('names no divergence or literal-name rule that no case uses', () => {
    const usedRules = new Set<string>();
    for (const group of data.groups) {
      for (const c of group.cases) {
        const plan = planners[group.id]!(c);
        if (plan.divergence) usedRules.add(plan.divergence);
        for (const probe of plan.probes) if (probe.expect.kind === 'literal') usedRules.add(probe.expect.rule);
      }
    }
    expect([...Object.keys(divergences), ...Object.keys(literalNames)].filter((rule) => !usedRules.has(rule))).toEqual(
      [],
    );
  });
});
