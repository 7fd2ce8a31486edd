// The approval policy and the tool allowlist, on every tool and bash action.
import { describe, expect, it } from 'vitest';
import { approvalDecision, toolAllowed } from '../../src/approvals/approval-policy.ts';
import type { ApprovalRule } from '../../src/keys/key-store.ts';
import { bashActions } from '../../src/contract/tool-inputs.ts';
import { builtinTools } from '../../src/tools/index.ts';

const calls = builtinTools.flatMap((tool) =>
  tool.name === 'bash'
    ? bashActions.map((action) => ({ tool, action: action as string | undefined }))
    : [{ tool, action: undefined }],
);
const label = ({ tool, action }: (typeof calls)[number]) =>
  action === undefined ? tool.name : `${tool.name}:${action}`;

describe('approval modes', () => {
  it('auto runs all, manual asks for all, safe asks for exactly the calls that change things or run code', () => {
    const decide = (mode: 'auto' | 'safe' | 'manual') =>
      Object.fromEntries(
        calls.map((call) => [label(call), approvalDecision({ approvalMode: mode, rules: [] }, call.tool, call.action)]),
      );
    expect(new Set(Object.values(decide('auto')))).toEqual(new Set(['allow']));
    expect(new Set(Object.values(decide('manual')))).toEqual(new Set(['approve']));
    expect(decide('safe')).toEqual({
      read_file: 'allow',
      write_file: 'approve',
      apply_patch: 'approve',
      'bash:exec': 'approve',
      'bash:start': 'approve',
      'bash:status': 'allow',
      'bash:logs': 'allow',
      'bash:write': 'approve',
      'bash:stop': 'approve',
      'bash:list': 'allow',
      grep: 'allow',
      glob: 'allow',
    });
  });

  it('lets the first matching rule decide before the mode; a rule without action covers every bash action', () => {
    const rules: ApprovalRule[] = [
      { tool: 'bash', action: 'logs', decision: 'approve' },
      { tool: 'bash', decision: 'deny' },
      { tool: 'write_file', decision: 'allow' },
    ];
    const decide = (name: string, action?: string) =>
      approvalDecision(
        { approvalMode: 'safe', rules },
        builtinTools.find((tool) => tool.name === name)!,
        action,
      );
    expect(decide('bash', 'logs')).toBe('approve');
    expect(decide('bash', 'status')).toBe('deny');
    expect(decide('bash', 'exec')).toBe('deny');
    expect(decide('write_file')).toBe('allow');
    expect(decide('apply_patch')).toBe('approve');
    expect(decide('read_file')).toBe('allow');
  });
});

describe('tool allowlists', () => {
  it('admits all tools without a list, and with one exactly the named tools and bash actions', () => {
    expect(calls.every((call) => toolAllowed({ tools: undefined }, call.tool, call.action))).toBe(true);
    const allowed = (tools: string[]) =>
      calls.filter((call) => toolAllowed({ tools }, call.tool, call.action)).map(label);
    expect(allowed(['read_file', 'bash:logs', 'bash:status'])).toEqual(['read_file', 'bash:status', 'bash:logs']);
    expect(allowed(['bash'])).toEqual(bashActions.map((action) => `bash:${action}`));
    expect(allowed([])).toEqual([]);
  });

  it('lets bash past the first check (before its action is known) only when some bash action is allowed', () => {
    const bash = builtinTools.find((tool) => tool.name === 'bash')!;
    expect(toolAllowed({ tools: ['bash:exec'] }, bash, undefined)).toBe(true);
    expect(toolAllowed({ tools: ['read_file'] }, bash, undefined)).toBe(false);
  });
});
