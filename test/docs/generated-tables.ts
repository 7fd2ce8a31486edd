// The tables in docs/ that are generated from the code: the settings table, the routes of the
// OpenAPI document the app serves, and the tools' arguments. `npm run docs:settings` writes them;
// test/docs/generated-tables.test.ts fails when a doc and the code differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { settingNames, settings } from '../../src/contract/settings.ts';
import { openApiDocument } from '../../src/http/openapi.ts';
import { builtinTools } from '../../src/tools/index.ts';
import { inputJsonSchema } from '../../src/tools/tool-formats.ts';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function settingsTable(): string {
  const rows = settingNames.map((name) => {
    const setting = settings[name];
    return `| \`${name}\` | ${cell(setting.defaultText)} | ${cell(setting.valuesText)} | ${setting.homes.join(', ')} | ${cell(setting.meaning)} |`;
  });
  return ['| variable | default | values | read by | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

export function routesTable(): string {
  const doc = openApiDocument({ tools: builtinTools, runnerProtocol: true });
  const rows: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const op = operation as {
        tags?: string[];
        summary?: string;
        responses?: Record<string, unknown>;
        security?: unknown[];
      };
      const statuses = Object.keys(op.responses ?? {}).join(', ');
      const key = Array.isArray(op.security) && op.security.length === 0 ? 'none' : 'Bearer';
      rows.push(
        `| ${op.tags?.join(', ') ?? ''} | \`${method.toUpperCase()} ${path}\` | ${key} | ${cell(op.summary ?? '')} | ${statuses} |`,
      );
    }
  }
  return ['| group | route | key | what it does | statuses |', '|---|---|---|---|---|', ...rows].join('\n');
}

interface PropertySchema {
  type?: string;
  enum?: string[];
  description?: string;
  minimum?: number;
  maximum?: number;
}

function typeText(schema: PropertySchema): string {
  if (schema.enum) return schema.enum.map((value) => `\`${value}\``).join(' \\| ');
  const bounds =
    schema.minimum !== undefined && schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER
      ? ` (${schema.minimum} to ${schema.maximum})`
      : '';
  return `${schema.type ?? 'any'}${bounds}`;
}

export function toolArgumentsTable(): string {
  const rows: string[] = [];
  for (const tool of builtinTools) {
    const schema = inputJsonSchema(tool) as { properties?: Record<string, PropertySchema>; required?: string[] };
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const required = schema.required?.includes(name) ? 'yes' : '';
      rows.push(
        `| \`${tool.name}\` | \`${name}\` | ${typeText(property)} | ${required} | ${cell(property.description ?? '')} |`,
      );
    }
  }
  return ['| tool | argument | type | required | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** Each generated table: the doc that holds it and the name of its markers. */
export const generatedTables = [
  { file: 'docs/operations.md', name: 'settings', render: settingsTable },
  { file: 'docs/api.md', name: 'routes', render: routesTable },
  { file: 'docs/api.md', name: 'tool-arguments', render: toolArgumentsTable },
];

const markers = (name: string) =>
  [`<!-- generated:${name} (npm run docs:settings) -->`, `<!-- /generated:${name} -->`] as const;

/** The text between a table's markers in `doc`, or undefined when the markers are missing. */
export function generatedPart(doc: string, name: string): string | undefined {
  const [open, close] = markers(name);
  const start = doc.indexOf(open);
  const end = doc.indexOf(close);
  if (start < 0 || end < start) return undefined;
  return doc.slice(start + open.length, end).trim();
}

export function withGenerated(doc: string, name: string, table: string): string {
  const [open, close] = markers(name);
  const start = doc.indexOf(open);
  const end = doc.indexOf(close);
  if (start < 0 || end < start) throw new Error(`The markers of the ${name} table are missing: ${open} ... ${close}`);
  return `${doc.slice(0, start + open.length)}\n${table}\n${doc.slice(end)}`;
}

function writeAll(): void {
  for (const { file, name, render } of generatedTables) {
    const path = join(repoRoot, file);
    writeFileSync(path, withGenerated(readFileSync(path, 'utf8'), name, render()));
    console.log(`${file}: ${name} table written`);
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) writeAll();
