// Parses a value with a contract schema: a violation is the `invalid_argument` error naming every bad field.
import type { z } from 'zod';
import { ToolError } from '../core/errors.ts';

/** Parses `value` with a zod schema; a violation is `invalid_argument` naming every bad field. */
export function parseInput<Schema extends z.ZodType>(schema: Schema, value: unknown, what: string): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map(describeIssue);
  throw new ToolError('invalid_argument', `Invalid ${what}: ${issues.map((issue) => issue.message).join('; ')}.`, {
    issues,
  });
}

function describeIssue(issue: z.core.$ZodIssue): { path: string; message: string } {
  const field = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => JSON.stringify(key)).join(', ');
    return {
      path: field,
      message: `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}${field ? ` in ${field}` : ''}`,
    };
  }
  return { path: field, message: field ? `${field}: ${issue.message}` : issue.message };
}
