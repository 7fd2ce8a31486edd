// GET /openapi.json: a valid OpenAPI 3.1 document of every route the app serves, whose schemas are the
// zod schemas the routes validate with, and whose answer schemas fit the answers the server gives.
import { rmSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { inspectRoutes } from 'hono/dev';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorStatus } from '../../src/core/errors.ts';
import * as answers from '../../src/contract/http-answers.ts';
import {
  checkpointInput,
  decisionInput,
  hookInput,
  importInput,
  keyInput,
  restoreInput,
  forkRequest,
  workspaceSettings,
} from '../../src/contract/http-requests.ts';
import { toolResultSchemas } from '../../src/contract/tool-answers.ts';
import { archiveDownloadQuery, archiveUploadQuery, hookDeliveryInput } from '../../src/contract/http-requests.ts';
import {
  blobBatchRequestSchema as blobBatchInput,
  blobPieceQuerySchema as blobPieceQuery,
  blobUploadQuerySchema as blobUploadQuery,
  exitReportSchema as exitInput,
  heartbeatReportSchema as heartbeatInput,
  leaseRequestSchema as leaseInput,
  outputQuerySchema as outputQuery,
  outputReportSchema as outputInput,
  startedReportSchema as startedInput,
  syncReportSchema as syncInput,
} from '../../src/contract/runner-protocol.ts';
import { readNodeConfig } from '../../src/node/config.ts';
import { createNodeHome } from '../../src/node/server.ts';
import { builtinTools } from '../../src/tools/index.ts';
import { inputJsonSchema } from '../../src/tools/tool-formats.ts';
import { callApi, makeDataDir, TEST_KEY, useServer } from '../support/server-process.ts';

const server = useServer();
let doc: any;

beforeAll(async () => {
  const answer = await callApi(server.url, undefined, 'GET', '/openapi.json');
  expect(answer.status).toBe(200);
  doc = answer.body;
});

/** Every operation of the document as [method, path, operation]. */
function operations(): [string, string, any][] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]): [string, string, any] => [method, path, op]),
  );
}

function requestSchema(method: string, path: string, type = 'application/json'): unknown {
  return doc.paths[path]?.[method]?.requestBody?.content?.[type]?.schema;
}

const asRequest = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' });

/** The zod schema each documented JSON request body must be generated from. */
const routeBodies: [string, string, z.ZodType][] = [
  ['put', '/v1/workspaces/{ws}', workspaceSettings],
  ['post', '/v1/workspaces/{ws}/fork', forkRequest],
  ['post', '/v1/workspaces/{ws}/checkpoints', checkpointInput],
  ['post', '/v1/workspaces/{ws}/restore', restoreInput],
  ['post', '/v1/workspaces/{ws}/import', importInput],
  ['post', '/v1/approvals/{id}/decision', decisionInput],
  ['post', '/v1/keys', keyInput],
  ['put', '/v1/hooks/{hookId}', hookInput],
  ['post', '/v1/hooks/{hookId}', hookDeliveryInput],
  ['post', '/v1/runner/lease', leaseInput],
  ['post', '/v1/runner/workspaces/{ws}/blobs', blobBatchInput],
  ['post', '/v1/runner/workspaces/{ws}/processes/{id}/started', startedInput],
  ['post', '/v1/runner/workspaces/{ws}/processes/{id}/output', outputInput],
  ['post', '/v1/runner/workspaces/{ws}/processes/{id}/heartbeat', heartbeatInput],
  ['post', '/v1/runner/workspaces/{ws}/processes/{id}/sync', syncInput],
  ['post', '/v1/runner/workspaces/{ws}/processes/{id}/exit', exitInput],
];

describe('GET /openapi.json', () => {
  it('is served without a key and validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(() => validator.resolveRefs()).not.toThrow();
    // The validator does catch a broken document.
    const broken = structuredClone(doc);
    broken.paths['/v1/keys'].post.parameters = [{ name: 'dryRun', in: 'query' }];
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('documents every route the app serves, and no route it does not', async () => {
    // The app exactly as `npm start` builds it (the runner protocol included).
    const dataDir = makeDataDir();
    const home = await createNodeHome(readNodeConfig({ TOOLGATE_DATA: dataDir, TOOLGATE_API_KEY: TEST_KEY }));
    const routes = inspectRoutes(home.app).filter((route) => !route.isMiddleware);
    home.close();
    rmSync(dataDir, { recursive: true, force: true });
    expect(routes.length).toBeGreaterThan(20);

    const documented = operations().map(([method, path]) => ({ method: method.toUpperCase(), path }));
    // A route parameter stands for any one segment: /v1/workspaces/:ws/tools/:tool covers each tool's own path.
    const pattern = (routePath: string) =>
      new RegExp(`^${routePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}$`);
    const covers = (route: { method: string; path: string }, op: { method: string; path: string }) =>
      (route.method === 'ALL' || route.method === op.method) && pattern(route.path).test(op.path);
    const undocumented = routes
      .filter((route) => !documented.some((op) => covers(route, op)))
      .map((route) => `${route.method} ${route.path}`);
    expect(undocumented).toEqual([]);
    const unserved = documented
      .filter((op) => !routes.some((route) => covers(route, op)))
      .map((op) => `${op.method} ${op.path}`);
    expect(unserved).toEqual([]);
    expect(documented).toContainEqual({ method: 'POST', path: '/v1/workspaces/{ws}/mcp' });
  });

  it("documents each tool's request body as exactly the tool's input schema, as GET /v1/tools lists it", async () => {
    const listed = await server.call('GET', '/v1/tools?format=jsonschema');
    expect(listed.body.tools.map((tool: { name: string }) => tool.name)).toEqual(builtinTools.map((tool) => tool.name));
    for (const tool of builtinTools) {
      expect(requestSchema('post', `/v1/workspaces/{ws}/tools/${tool.name}`)).toEqual(inputJsonSchema(tool));
      expect(listed.body.tools.find((entry: { name: string }) => entry.name === tool.name).inputSchema).toEqual(
        inputJsonSchema(tool),
      );
    }
  });

  it("documents each other request body as exactly z.toJSONSchema of the route's zod schema", () => {
    for (const [method, path, schema] of routeBodies)
      expect({ method, path, schema: requestSchema(method, path) }).toEqual({
        method,
        path,
        schema: asRequest(schema),
      });
    // The runner's text/plain output form takes its fields in the query, from the route's query schema.
    const query = doc.paths['/v1/runner/workspaces/{ws}/processes/{id}/output'].post.parameters.filter(
      (parameter: { in: string }) => parameter.in === 'query',
    );
    expect(
      Object.fromEntries(
        query.map((parameter: { name: string; schema: unknown }) => [parameter.name, parameter.schema]),
      ),
    ).toEqual((asRequest(outputQuery) as any).properties);
    // The runner's uploads are raw bytes, their fields in the query, from the routes' query schemas.
    const uploads: [string, string, z.ZodType][] = [
      ['put', '/v1/runner/workspaces/{ws}/processes/{id}/blobs/{hash}', blobPieceQuery],
      ['post', '/v1/runner/workspaces/{ws}/processes/{id}/blobs', blobUploadQuery],
    ];
    for (const [method, path, schema] of uploads) {
      const parameters = doc.paths[path][method].parameters.filter(
        (parameter: { in: string }) => parameter.in === 'query',
      );
      expect(
        Object.fromEntries(
          parameters.map((parameter: { name: string; schema: unknown }) => [parameter.name, parameter.schema]),
        ),
      ).toEqual((asRequest(schema) as any).properties);
      expect(Object.keys(doc.paths[path][method].requestBody.content)).toEqual(['application/octet-stream']);
    }
    // An archive goes and comes as raw tar or gzip'd tar bytes, its options in the query.
    const archive = doc.paths['/v1/workspaces/{ws}/archive'];
    for (const [method, schema] of [
      ['get', archiveDownloadQuery],
      ['put', archiveUploadQuery],
    ] as const) {
      const parameters = archive[method].parameters.filter((parameter: { in: string }) => parameter.in === 'query');
      expect(
        Object.fromEntries(
          parameters.map((parameter: { name: string; schema: unknown }) => [parameter.name, parameter.schema]),
        ),
      ).toEqual((asRequest(schema) as any).properties);
    }
    expect(Object.keys(archive.put.requestBody.content)).toEqual(['application/x-tar', 'application/gzip']);
    // No body is documented from anything else: a new route with a body needs its schema here.
    const checked = new Set([
      ...routeBodies.map(([method, path]) => `${method} ${path}`),
      ...uploads.map(([method, path]) => `${method} ${path}`),
      'put /v1/workspaces/{ws}/archive',
      ...builtinTools.map((tool) => `post /v1/workspaces/{ws}/tools/${tool.name}`),
      'post /v1/workspaces/{ws}/mcp',
    ]);
    const withBodies = operations()
      .filter(([, , op]) => op.requestBody)
      .map(([method, path]) => `${method} ${path}`);
    expect(withBodies.filter((operation) => !checked.has(operation))).toEqual([]);
  });

  it('gives every operation the error body on the statuses its codes map to, and bearer auth on every /v1 operation', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toEqual(Object.keys(errorStatus));
    const statuses = new Set<number>(Object.values(errorStatus));
    for (const [method, path, op] of operations()) {
      const where = `${method} ${path}`;
      const errors = Object.entries(op.responses as Record<string, any>).filter(([status]) => Number(status) >= 400);
      expect({ where, has500: op.responses['500'] !== undefined }).toEqual({ where, has500: true });
      if (where === 'post /v1/hooks/{hookId}') {
        // A webhook delivery is authenticated by its signature alone: no key, and 401 for a bad signature.
        expect({ where, has401: op.responses['401'] !== undefined, security: op.security }).toEqual({
          where,
          has401: true,
          security: [],
        });
      } else if (path.startsWith('/v1/')) {
        expect({ where, has401: op.responses['401'] !== undefined, security: op.security }).toEqual({
          where,
          has401: true,
          security: undefined,
        });
      } else {
        expect({ where, security: op.security }).toEqual({ where, security: [] });
      }
      for (const [status, response] of errors) {
        expect({ where, status, known: statuses.has(Number(status)) }).toEqual({ where, status, known: true });
        expect(response.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
    // A tool call documents what docs/api.md lists for it, e.g. read_file's binary_file (415) and approvals (202).
    const readFile = doc.paths['/v1/workspaces/{ws}/tools/read_file'].post.responses;
    expect(Object.keys(readFile)).toEqual(
      expect.arrayContaining(['200', '202', '400', '401', '402', '403', '404', '413', '415', '429', '500', '503']),
    );
    expect(readFile['429'].headers['Retry-After']).toBeDefined();
  });

  it("documents answers that fit the server's own answers", async () => {
    const fits = (schema: z.ZodType, body: unknown) => {
      const parsed = schema.safeParse(body);
      expect(parsed.success, `${JSON.stringify(body)}\n${parsed.error?.message}`).toBe(true);
    };
    const created = await server.call('PUT', '/v1/workspaces/docs-check');
    fits(answers.workspaceInfoSchema, created.body);
    fits(
      toolResultSchemas.write_file!,
      (await server.call('POST', '/v1/workspaces/docs-check/tools/write_file', { path: 'a/b.txt', content: 'one\n' }))
        .body.result,
    );
    fits(
      toolResultSchemas.read_file!,
      (await server.call('POST', '/v1/workspaces/docs-check/tools/read_file', { path: 'a/b.txt' })).body.result,
    );
    const patch =
      '*** Begin Patch\n*** Update File: a/b.txt\n@@\n-one\n+two\n*** Add File: c.txt\n+three\n*** End Patch\n';
    fits(
      toolResultSchemas.apply_patch!,
      (await server.call('POST', '/v1/workspaces/docs-check/tools/apply_patch', { patch })).body.result,
    );
    const exec = await server.call('POST', '/v1/workspaces/docs-check/tools/bash', {
      action: 'exec',
      command: 'echo hi',
    });
    expect(exec.status, JSON.stringify(exec.body)).toBe(200);
    fits(toolResultSchemas.bash!, exec.body.result);
    fits(
      toolResultSchemas.bash!,
      (await server.call('POST', '/v1/workspaces/docs-check/tools/bash', { action: 'list' })).body.result,
    );
    fits(answers.workspaceInfoSchema, (await server.call('GET', '/v1/workspaces/docs-check')).body);
    fits(answers.fileListSchema, (await server.call('GET', '/v1/workspaces/docs-check/files?recursive=true')).body);
    fits(answers.toolListSchema, (await server.call('GET', '/v1/tools?format=openai')).body);
    const key = await server.call('POST', '/v1/keys', {
      name: 'docs',
      role: 'agent',
      workspaces: ['docs-check'],
      approvalMode: 'manual',
      quota: { calls: 10, period: 'day' },
    });
    fits(answers.keyCreatedSchema, key.body);
    fits(answers.keyListSchema, (await server.call('GET', '/v1/keys')).body);
    const pending = await callApi(server.url, key.body.secret, 'POST', '/v1/workspaces/docs-check/tools/read_file', {
      path: 'c.txt',
    });
    expect(pending.status).toBe(202);
    fits(answers.approvalPendingSchema, pending.body);
    fits(
      answers.approvalSchema,
      (await server.call('POST', `/v1/approvals/${pending.body.approval.id}/decision`, { decision: 'approve' })).body,
    );
    fits(answers.approvalListSchema, (await server.call('GET', '/v1/approvals')).body);
    fits(answers.usageSchema, (await server.call('GET', '/v1/usage?groupBy=workspace')).body);
    fits(
      answers.errorBodySchema,
      (await server.call('POST', '/v1/workspaces/docs-check/tools/read_file', { path: '../x' })).body,
    );
    fits(answers.healthSchema, (await callApi(server.url, undefined, 'GET', '/healthz')).body);
  });
});
