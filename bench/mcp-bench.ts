// P1b and P1b-mcp: read_file of a 4 KB file, sequential calls (one after another), over REST and over
// toolgate's MCP endpoint, each against the MCP reference filesystem server over stdio.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, interleaved, load, mcpCalls, perSecond, row, verdict } from './common.ts';
import { recordMcp, serveRecordedMcp } from './mcp-floor-server.ts';

/** The reference server's entry (its package's bin), run with this Node rather than through npx. */
const REFERENCE_SERVER = new URL(
  '../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
  import.meta.url,
).pathname;

/**
 * `small` is a workspace holding `path` with `content`; the reference server gets the same content in
 * a temporary directory. Every client warms up in its own process before it measures; the three take
 * turns (see interleaved), each `durationMs` in all.
 */
export async function benchSequentialRead(
  url: string,
  key: string,
  workspace: string,
  path: string,
  content: string,
  durationMs: number,
): Promise<void> {
  console.log(
    '\n# P1b, P1b-mcp: read_file of a 4 KB file, sequential calls (1 connection, one call after another) ' +
      'vs the MCP reference filesystem server over stdio (official SDK client)',
  );
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-mcp-reference-'));
  try {
    const file = join(dir, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, content);
    const warmupMs = 1000;
    const endpoint = `${url}/v1/workspaces/${workspace}/mcp`;
    const headers = { authorization: `Bearer ${key}` };
    const floorServer = await serveRecordedMcp(
      await recordMcp(endpoint, headers, { name: 'read_file', arguments: { path } }),
    );
    const { reference, rest, mcp, floor } = await interleaved(
      {
        reference: (ms) =>
          mcpCalls({
            server: { stdio: { command: process.execPath, args: [REFERENCE_SERVER, dir] } },
            tool: 'read_text_file',
            arguments: { path: file },
            expectContent: content,
            warmupMs,
            durationMs: ms,
          }),
        rest: (ms) =>
          load({
            url: `${url}/v1/workspaces/${workspace}/tools/read_file`,
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ path }),
            connections: 1,
            warmupMs,
            durationMs: ms,
          }),
        mcp: (ms) =>
          mcpCalls({
            server: { http: { url: endpoint, headers } },
            tool: 'read_file',
            arguments: { path },
            expectContent: content,
            warmupMs,
            durationMs: ms,
          }),
        floor: (ms) =>
          mcpCalls({
            server: { http: { url: floorServer.url, headers: {} } },
            tool: 'read_file',
            arguments: { path },
            expectContent: content,
            warmupMs,
            durationMs: ms,
          }),
      },
      durationMs,
    ).finally(() => floorServer.server.close());
    console.log(`MCP reference server (stdio, read_text_file) : ${describe(reference, 'calls/s')}`);
    console.log(`toolgate REST read_file                      : ${describe(rest, 'calls/s')}`);
    console.log(`toolgate MCP endpoint read_file (HTTP)       : ${describe(mcp, 'calls/s')}`);
    console.log(`recorded answers, no work (HTTP, the floor)  : ${describe(floor, 'calls/s')}`);
    const restRatio = perSecond(rest) / perSecond(reference);
    const mcpRatio = perSecond(mcp) / perSecond(reference);
    row('P1b', `REST read_file / MCP reference calls/s: ${verdict(restRatio, '>= 1.0x', restRatio >= 1)}`);
    row('P1b-mcp', `MCP endpoint read_file / MCP reference calls/s: ${verdict(mcpRatio, '>= 1.0x', mcpRatio >= 1)}`);
    // What the official client's Streamable HTTP transport costs on its own: no server can beat it.
    const floorRatio = perSecond(floor) / perSecond(reference);
    const ofFloor = perSecond(mcp) / perSecond(floor);
    console.log(
      `  the same client against a server that does no work reaches ${floorRatio.toFixed(2)}x the reference; ` +
        `toolgate's endpoint reaches ${ofFloor.toFixed(2)}x that floor`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
