// Reads a command line's syntax tree to decide where it runs: what `auto` may run on the edge (every
// command, option and shell feature on the proven allow-list) and what the edge cannot run at all.
// Each simple command held to the allow-list: edge-script-command.ts.
import type { ScriptNode, SimpleCommandNode, WordNode } from 'just-bash';
import { EDGE_SYNTAX } from './edge-allow-list.ts';
import { commandName, provenCommand, staticText, type ScriptObjection } from './edge-script-command.ts';

export type { ScriptObjection } from './edge-script-command.ts';

/** Builtins the interpreter implements, beside its commands (just-bash's getCommandNames). */
const EDGE_BUILTINS = new Set([
  ':', '.', '[', 'break', 'cd', 'command', 'continue', 'declare', 'dirs', 'echo', 'eval', 'exit', 'export',
  'false', 'getopts', 'hash', 'let', 'local', 'mapfile', 'popd', 'printf', 'pushd', 'pwd', 'read', 'readarray',
  'readonly', 'return', 'set', 'shift', 'shopt', 'source', 'test', 'trap', 'true', 'type', 'typeset', 'umask', 'unset',
  'wait',
]); // prettier-ignore

/**
 * Why `auto` sends `script` to a runner, or undefined when every command, option and shell feature
 * in it is on the allow-list (edge-allow-list.ts).
 */
export function autoObjection(
  script: ScriptNode,
  workspace: WorkspaceFacts = { links: false },
): ScriptObjection | undefined {
  /** Commands whose output goes straight into one that does not depend on the order of its lines. */
  const orderBlind = new Set<unknown>();
  return walk(script, (node) => {
    if (workspace.links && node.type === 'SimpleCommand') {
      const linked = linkObjection(node as unknown as SimpleCommandNode);
      if (linked) return linked;
    }
    // A pipeline is visited before its commands.
    if (node.type === 'Pipeline') markOrderBlind(node, orderBlind);
    if (!EDGE_SYNTAX.has(node.type))
      return {
        subject: node.type,
        reason: `its shell syntax (${node.type}) is not among what the edge runs identically`,
      };
    // Bash without globstar reads ** as *; the edge descends into every directory.
    if (node.type === 'Glob' && String(node.pattern).includes('**'))
      return { subject: '**', reason: 'the glob ** matches at any depth on the edge, as one level in bash' };
    return (
      common(node) ??
      (node.type === 'SimpleCommand'
        ? provenCommand(node as unknown as SimpleCommandNode, orderBlind.has(node))
        : undefined)
    );
  });
}

/** What the choice of engine may know of the workspace beside the script. */
export interface WorkspaceFacts {
  /** The workspace holds symbolic links. */
  links: boolean;
}

/**
 * Commands that treat symbolic links otherwise on the edge: rm of a link whose target went first,
 * or of a link to a directory; cp and mv of a link; grep -r, find, ls and du following links into
 * directories. In a workspace with links they go to a runner.
 */
const LINK_SENSITIVE = new Set(['rm', 'rmdir', 'cp', 'mv', 'find', 'ls', 'du', 'tree']);

function linkObjection(command: SimpleCommandNode): ScriptObjection | undefined {
  const name = commandName(command);
  if (typeof name !== 'string') return undefined;
  const recursiveGrep =
    (name === 'grep' || name === 'egrep' || name === 'fgrep') &&
    command.args.some((word) => /^-[^-]*[rR]|^--(?:recursive|dereference-recursive)$/.test(staticText(word) ?? ''));
  if (!LINK_SENSITIVE.has(name) && !recursiveGrep) return undefined;
  return {
    subject: name,
    reason: `the workspace holds symbolic links, which ${name} treats otherwise on the edge`,
  };
}

/** Commands that count lines, words and bytes: the order of what they read changes nothing they print. */
const ORDER_BLIND = new Set(['wc']);

/** Notes each command of `pipeline` that writes nowhere but into an order-blind command (`grep -r x src | wc -l`). */
function markOrderBlind(pipeline: SyntaxNode, orderBlind: Set<unknown>): void {
  const commands = pipeline.commands as SyntaxNode[];
  for (let index = 0; index + 1 < commands.length; index += 1) {
    const [command, next] = [commands[index]!, commands[index + 1]!];
    if (command.type !== 'SimpleCommand' || next.type !== 'SimpleCommand') continue;
    if ((command as unknown as SimpleCommandNode).redirections.length > 0) continue;
    const nextName = commandName(next as unknown as SimpleCommandNode);
    if (nextName && ORDER_BLIND.has(nextName)) orderBlind.add(command);
  }
}

/** The first thing in `script` the edge engine cannot run at all, or undefined. */
export function edgeObjection(script: ScriptNode, commandNames: ReadonlySet<string>): ScriptObjection | undefined {
  return walk(script, (node) => {
    const found = common(node);
    if (found || node.type !== 'SimpleCommand') return found;
    const name = commandName(node as unknown as SimpleCommandNode);
    if (name === undefined || name === null || EDGE_BUILTINS.has(name) || commandNames.has(name)) return undefined;
    return { subject: name, reason: `the edge engine has no command ${name}` };
  });
}

/**
 * The command and its words when `script` is one simple command and nothing else: no assignment,
 * redirection, pipe, list, negation or background, and each word plain text, quoted or not (so
 * it is the text the command is given); else undefined.
 */
export function loneCommand(script: ScriptNode): { name: string; args: string[] } | undefined {
  const [statement, ...otherStatements] = script.statements;
  if (statement === undefined || otherStatements.length > 0) return undefined;
  if (statement.background || statement.deferredError !== undefined) return undefined;
  const [pipeline, ...otherPipelines] = statement.pipelines;
  if (pipeline === undefined || otherPipelines.length > 0 || pipeline.negated || pipeline.timed) return undefined;
  const [command, ...otherCommands] = pipeline.commands;
  if (command?.type !== 'SimpleCommand' || otherCommands.length > 0) return undefined;
  if (command.assignments.length > 0 || command.redirections.length > 0 || command.name === null) return undefined;
  const name = quotedText(command.name);
  const args: string[] = [];
  for (const word of command.args) {
    const text = quotedText(word);
    if (text === undefined) return undefined;
    args.push(text);
  }
  return name === undefined ? undefined : { name, args };
}

/** A word's text when it is plain text, quoted or not: no expansion, and no escape to read. */
function quotedText(word: WordNode): string | undefined {
  let text = '';
  for (const part of word.parts) {
    if (part.type === 'Literal' || part.type === 'SingleQuoted') text += part.value;
    else if (part.type === 'DoubleQuoted' && part.parts.every((inner) => inner.type === 'Literal'))
      for (const inner of part.parts) text += (inner as { value: string }).value;
    else return undefined;
  }
  return text;
}

interface SyntaxNode {
  type: string;
  [field: string]: unknown;
}

/** What neither engine choice runs on the edge: background jobs (the edge has no processes to leave running). */
function common(node: SyntaxNode): ScriptObjection | undefined {
  if (node.type === 'Statement' && node.background === true)
    return { subject: '&', reason: 'a background job (&) needs a process that outlives the call' };
  if (node.type === 'Pipeline' && node.timed === true)
    return { subject: 'time', reason: 'time reports the host’s clock, which the edge does not have' };
  return undefined;
}

/** Visits every node of the tree, depth first; the first objection found ends the walk. */
function walk(root: ScriptNode, visit: (node: SyntaxNode) => ScriptObjection | undefined): ScriptObjection | undefined {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) stack.push(value[index]);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const node = value as SyntaxNode;
    if (typeof node.type === 'string') {
      const found = visit(node);
      if (found) return found;
    }
    for (const [key, child] of Object.entries(node)) if (key !== 'span') stack.push(child);
  }
  return undefined;
}
