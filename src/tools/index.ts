// The tools toolgate serves, in the order they are listed.
import { applyPatch } from './apply-patch/apply-patch.ts';
import { bash } from './bash.ts';
import { glob } from './glob.ts';
import { grep } from './grep.ts';
import { readFile } from './read-file.ts';
import type { ToolDefinition } from './tool.ts';
import { writeFile } from './write-file.ts';

export const builtinTools: readonly ToolDefinition[] = [readFile, writeFile, applyPatch, bash, grep, glob];
