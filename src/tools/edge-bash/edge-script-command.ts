// One simple command of a script held to the edge's allow-list (edge-allow-list.ts), as `auto` (edge-script.ts) asks.
import type { SimpleCommandNode, WordNode } from 'just-bash';
import { EDGE_COMMANDS, EDGE_REDIRECTIONS, type EdgeCommandRule } from './edge-allow-list.ts';

/** Where a script was read as the edge cannot run it, or as `auto` would not. */
export interface ScriptObjection {
  /** What it is about, as the script names it: a command (`curl`), an option (`grep -P`), a feature. */
  subject: string;
  /** One sentence: why. */
  reason: string;
}

/** A command's name when the script spells it out; null for an assignment alone; undefined when an expansion names it. */
export function commandName(command: SimpleCommandNode): string | null | undefined {
  if (command.name === null) return null;
  // The parser reads the command `[` as a glob's bracket.
  const [part, ...rest] = command.name.parts;
  if (rest.length === 0 && part?.type === 'Glob' && part.pattern === '[') return '[';
  return staticText(command.name);
}

/** A word's text when it has no expansion in it, else undefined. */
export function staticText(word: WordNode): string | undefined {
  let text = '';
  for (const part of word.parts) {
    if (part.type === 'Literal' || part.type === 'SingleQuoted') text += part.value;
    else if (part.type === 'Escaped') text += part.value;
    else if (part.type === 'DoubleQuoted') {
      const inner = staticText({ type: 'Word', parts: part.parts });
      if (inner === undefined) return undefined;
      text += inner;
    } else return undefined;
  }
  return text;
}

/** Whether a command, its redirections and each option it is given are on the allow-list. */
export function provenCommand(command: SimpleCommandNode, orderBlind: boolean): ScriptObjection | undefined {
  for (const redirection of command.redirections) {
    if (
      !EDGE_REDIRECTIONS.has(redirection.operator) ||
      redirection.fdVariable !== undefined ||
      (redirection.operator === '>&' && !/^[12]$/.test(staticText(redirection.target as WordNode) ?? ''))
    )
      return {
        subject: redirection.operator,
        reason: `the redirection ${redirection.operator} is not among those the edge runs identically`,
      };
  }
  const words = [...command.args, ...command.redirections.map((redirection) => redirection.target)];
  for (const word of words) {
    const path = word.type === 'Word' ? leadingText(word) : '';
    if (HOST_PATH.test(path))
      return {
        subject: path,
        reason: `${path} is outside the workspace: the host's on a runner, the interpreter's own on the edge`,
      };
  }
  const name = commandName(command);
  if (name === null) return undefined;
  if (name === undefined)
    return { subject: '$command', reason: 'a command named by an expansion cannot be checked before it runs' };
  if (BYTE_WRITERS.has(name)) {
    const escape = command.args.map((word) => staticText(word) ?? '').find((text) => BYTE_ESCAPE.test(text));
    if (escape !== undefined)
      return {
        subject: `${name} ${escape}`,
        reason: `${name} writes the byte an escape names on a runner, its character in UTF-8 on the edge`,
      };
  }
  return provenWords(name, command.args, orderBlind);
}

/** Commands that turn escapes (`\377`, `\xff`) into bytes, which the interpreter writes as characters. */
const BYTE_WRITERS = new Set(['printf', 'echo']);
const BYTE_ESCAPE = /\\(?:[0-7]|x[0-9a-fA-F]|u|U)/;

/**
 * A word naming the host's tree: the root, or a directory a system keeps there (/dev but /dev/null).
 * Only these: a word that starts with `/` is as often a sed address or a pattern (`/ERROR/p`).
 */
const HOST_PATH =
  /^\/(?:$|(?:dev(?!\/null$)|etc|proc|sys|usr|bin|sbin|lib|lib32|lib64|libx32|var|tmp|root|home|opt|run|boot|srv|mnt|media)(?:\/|$))/;

/** The text a word begins with before its first expansion (all of it when it has none). */
function leadingText(word: WordNode): string {
  let text = '';
  for (const part of word.parts) {
    if (part.type === 'Literal' || part.type === 'SingleQuoted' || part.type === 'Escaped') text += part.value;
    else if (part.type === 'DoubleQuoted') {
      const inner = leadingText({ type: 'Word', parts: part.parts });
      text += inner;
      if (staticText({ type: 'Word', parts: part.parts }) === undefined) return text;
    } else return text;
  }
  return text;
}

function provenWords(name: string, args: readonly WordNode[], orderBlind = false): ScriptObjection | undefined {
  const rule = Object.hasOwn(EDGE_COMMANDS, name) ? EDGE_COMMANDS[name] : undefined;
  if (!rule) return { subject: name, reason: `${name} is not among the commands the edge runs identically` };
  const found = provenOptions(name, rule, args);
  if (found || orderBlind || !rule.unordered) return found;
  const flags = rule.unordered;
  const unordered =
    flags === true ||
    args.some((word) => {
      const text = staticText(word);
      return text !== undefined && /^-[^-]/.test(text) && [...text.slice(1)].some((letter) => flags.includes(letter));
    });
  return unordered
    ? {
        subject: name,
        reason: `${name} lists files in another order on the edge than on a runner's disk; proven only piped straight into wc`,
      }
    : undefined;
}

function provenOptions(name: string, rule: EdgeCommandRule, args: readonly WordNode[]): ScriptObjection | undefined {
  let operands = false;
  let operandCount = 0;
  const counted = (text: string | undefined, word: WordNode) => {
    operandCount += text === undefined || word.parts.some((part) => part.type === 'Glob') ? 2 : 1;
    return rule.maxOperands !== undefined && operandCount > rule.maxOperands
      ? { subject: name, reason: `${name} with more than ${rule.maxOperands} operand(s) is not proven on the edge` }
      : undefined;
  };
  for (let index = 0; index < args.length; index += 1) {
    const text = staticText(args[index]!);
    const unproven = text === undefined ? undefined : unprovenWord(name, rule, text);
    if (unproven) return unproven;
    if (rule.runsCommand && !operands && (text === undefined || !text.startsWith('-'))) {
      if (text === undefined)
        return {
          subject: name,
          reason: `${name} runs a command named by an expansion, which cannot be checked before it runs`,
        };
      return provenWords(text, args.slice(index + 1));
    }
    // An option that arrives through an expansion is not read here: the edge refuses an option it
    // does not know, so it fails on the edge rather than doing something else.
    if (operands || text === undefined) {
      if (rule.optionsFirst) operands = true;
      const tooMany = counted(text, args[index]!);
      if (tooMany) return tooMany;
      continue;
    }
    if (rule.predicates) {
      if (text.startsWith('-') && text.length > 1 && !(rule.long ?? []).includes(text))
        return optionObjection(name, text);
      continue;
    }
    if (text === '--') {
      operands = true;
      continue;
    }
    if (!text.startsWith('-') || text === '-') {
      if (rule.optionsFirst) operands = true;
      const tooMany = counted(text, args[index]!);
      if (tooMany) return tooMany;
      continue;
    }
    const skip = optionWords(rule, text);
    if (skip === undefined) return optionObjection(name, text);
    // A value that reads as an option (head -n -2) counts from the end in GNU tools, which the edge refuses.
    const value = skip === 1 ? staticText(args[index + 1] ?? { type: 'Word', parts: [] }) : valueOf(rule, text);
    if (value?.startsWith('-')) return optionObjection(name, `${text} ${skip === 1 ? value : ''}`.trim());
    index += skip;
  }
  return undefined;
}

/** How many of the following words an option takes as its value (0 or 1), or undefined when it is not proven. */
function optionWords(rule: EdgeCommandRule, text: string): number | undefined {
  const long = rule.long ?? [];
  if (text.startsWith('--')) {
    const equals = text.indexOf('=');
    const option = equals < 0 ? text : text.slice(0, equals);
    if (long.includes(text)) return 0;
    if (long.includes(`${option}=`)) return equals < 0 ? 1 : 0;
    return undefined;
  }
  if (rule.numeric && /^-\d+$/.test(text)) return 0;
  for (let at = 1; at < text.length; at += 1) {
    const letter = text[at]!;
    if ((rule.flags ?? '').includes(letter)) continue;
    if ((rule.valued ?? '').includes(letter)) return at === text.length - 1 ? 1 : 0;
    return undefined;
  }
  return 0;
}

/** The value attached to a short option (`-n-2` gives `-2`), or undefined. */
function valueOf(rule: EdgeCommandRule, text: string): string | undefined {
  if (text.startsWith('--')) return undefined;
  for (let at = 1; at < text.length; at += 1)
    if ((rule.valued ?? '').includes(text[at]!)) return at < text.length - 1 ? text.slice(at + 1) : undefined;
  return undefined;
}

/** Whether a word given to a command uses what the edge does differently (edge-allow-list.ts `unproven`, `asciiOnly`). */
function unprovenWord(name: string, rule: EdgeCommandRule, text: string): ScriptObjection | undefined {
  if (rule.unproven?.test(text))
    return {
      subject: `${name} ${text}`,
      reason: `${name} ${text} uses a feature whose result differs on the edge`,
    };
  // eslint-disable-next-line no-control-regex -- ASCII is exactly U+0000 to U+007F.
  if (rule.asciiOnly && /[^\u0000-\u007f]/.test(text))
    return {
      subject: `${name} ${text}`,
      reason: `${name} counts characters on the edge where GNU ${name} counts bytes`,
    };
  return undefined;
}

function optionObjection(name: string, option: string): ScriptObjection {
  return {
    subject: `${name} ${option}`,
    reason: `${name}'s option ${option} is not among those the edge runs identically`,
  };
}
