// Headless Chromium for tests: a page's DOM after its scripts ran, or a page driven over the DevTools protocol on a pipe.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';

/** CI installs it (.ci/run); a missing browser fails the test rather than skipping it. */
const CHROMIUM = process.env.CHROMIUM ?? 'chromium';
const flags = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-breakpad',
  '--disable-crash-reporter',
];

/** Each run gets its own profile, so browsers of tests running side by side never share one. */
function profileDir(): string {
  return mkdtempSync(join(tmpdir(), 'toolgate-chromium-'));
}

/** The serialised DOM of `url` once its scripts have run (within the virtual time budget). */
export async function dumpDom(url: string): Promise<string> {
  const profile = profileDir();
  try {
    const { stdout } = await promisify(execFile)(
      CHROMIUM,
      [...flags, `--user-data-dir=${profile}`, '--virtual-time-budget=5000', '--dump-dom', url],
      {
        maxBuffer: 64 * 1024 * 1024,
        timeout: 60_000,
      },
    );
    return stdout;
  } finally {
    removeProfile(profile);
  }
}

/**
 * Chromium's helper processes may still be writing into the profile for a moment after the
 * browser exits, so the removal retries; a profile that still cannot be removed is left in the
 * temporary directory rather than failing the test that used it.
 */
function removeProfile(profile: string): void {
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  } catch (error) {
    console.warn(`could not remove the Chromium profile ${profile}: ${(error as Error).message}`);
  }
}

export interface BrowserPage {
  /** Evaluates a JavaScript expression in the page, awaiting it when it is a promise, and answers its JSON value. */
  evaluate<T>(expression: string): Promise<T>;
  close(): Promise<void>;
}

interface CdpMessage {
  id?: number;
  method?: string;
  sessionId?: string;
  result?: any;
  error?: { message: string };
}

/**
 * Opens `url` in a headless Chromium driven over `--remote-debugging-pipe` (requests on fd 3,
 * answers and events on fd 4, each a JSON message ended by a NUL byte), once the page has loaded.
 */
export async function openPage(url: string): Promise<BrowserPage> {
  const profile = profileDir();
  // In a process group of its own, so closing it kills its helper processes too.
  const child = spawn(CHROMIUM, [...flags, `--user-data-dir=${profile}`, '--remote-debugging-pipe', 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  const pending = new Map<number, { resolve: (result: any) => void; reject: (error: Error) => void }>();
  const events: ((message: CdpMessage) => void)[] = [];
  let nextId = 1;
  let buffer = '';
  fromBrowser.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\0'); end >= 0; end = buffer.indexOf('\0')) {
      const message = JSON.parse(buffer.slice(0, end)) as CdpMessage;
      buffer = buffer.slice(end + 1);
      const waiting = message.id === undefined ? undefined : pending.get(message.id);
      if (waiting) {
        pending.delete(message.id!);
        if (message.error) waiting.reject(new Error(`${message.error.message}\n${stderr}`));
        else waiting.resolve(message.result);
      } else {
        for (const listener of events) listener(message);
      }
    }
  });
  child.once('exit', () => {
    for (const waiting of pending.values()) waiting.reject(new Error(`chromium exited:\n${stderr}`));
  });
  const send = (method: string, params: object = {}, sessionId?: string): Promise<any> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  // A write after the browser exited fails on the pipe; that failure is the exit's, reported there.
  toBrowser.on('error', () => undefined);
  const close = async () => {
    // Asked to close first, the browser stops its helper processes itself; killed, it may leave them writing.
    if (child.exitCode === null && child.signalCode === null) {
      await Promise.race([
        send('Browser.close').catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, 2000)),
      ]);
    }
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
    await exited;
    removeProfile(profile);
  };

  try {
    const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
    await send('Page.enable', {}, sessionId);
    const loaded = new Promise<void>((resolve) =>
      events.push(
        (message) => message.method === 'Page.loadEventFired' && message.sessionId === sessionId && resolve(),
      ),
    );
    await send('Page.navigate', { url }, sessionId);
    await loaded;
    return {
      async evaluate<T>(expression: string): Promise<T> {
        const answer = await send(
          'Runtime.evaluate',
          { expression, awaitPromise: true, returnByValue: true },
          sessionId,
        );
        if (answer.exceptionDetails)
          throw new Error(
            `the page threw: ${answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text}`,
          );
        return answer.result.value as T;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The text of serialised HTML, tags dropped and the entities the serialiser writes decoded. */
export function textOf(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/g, '')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
}
