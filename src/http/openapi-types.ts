// What the modules listing the OpenAPI operations by area share: an operation's shape, every call's errors, helpers.
import { z } from 'zod';
import type { ErrorCode } from '../core/errors.ts';

export type JsonSchema = Record<string, unknown>;

export interface Parameter {
  name: string;
  description: string;
  schema: JsonSchema;
}

export interface Answer {
  description: string;
  /** A component name, or a schema; absent for an empty (204) or binary answer. */
  schema?: string | JsonSchema;
  contentType?: string;
}

export interface Operation {
  method: 'get' | 'put' | 'post' | 'delete';
  path: string;
  tag: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Descriptions of the path parameters other than `ws`. */
  pathParams?: Record<string, string>;
  query?: Parameter[];
  /** Request headers the operation reads (other than Authorization). */
  headers?: Parameter[];
  body?: { content: Record<string, JsonSchema>; required: boolean };
  answers: Record<number, Answer>;
  /** The codes it may fail with; authenticated operations also get `unauthorized`, and every one `internal`. */
  errors: ErrorCode[];
  public?: true;
}

/** Errors every tool call may answer, whatever the tool (a webhook delivery is one such call). */
export const callErrors: readonly ErrorCode[] = [
  'invalid_argument',
  'forbidden',
  'tool_not_allowed',
  'not_found',
  'payload_too_large',
  'rate_limited',
  'quota_exceeded',
  'approval_rejected',
  'unavailable',
];

/** A query schema's fields as parameters, each described (by `descriptions`, else by the field's own description). */
export function queryParameters(schema: z.ZodType, descriptions: Record<string, string> = {}): Parameter[] {
  const { properties } = jsonSchemaOf(schema, 'input') as { properties: Record<string, JsonSchema> };
  return Object.entries(properties).map(([name, property]) => ({
    name,
    description: descriptions[name] ?? (typeof property.description === 'string' ? property.description : name),
    schema: property,
  }));
}

/** A reference to one of the document's component schemas. */
export function ref(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/** A zod schema as the document states it: what a caller sends (`input`) or what it is answered (`output`). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as JsonSchema;
}

/** A JSON request body: what a caller sends, as `inputJsonSchema` states a tool's input. */
export function jsonBody(schema: z.ZodType, required = true): NonNullable<Operation['body']> {
  return { content: { 'application/json': jsonSchemaOf(schema, 'input') }, required };
}
