// The tenants of the Cloudflare home's scale measurements (issue 22): `count` workspaces, each
// seeded with one file, and `count` agent keys over all of them, each with a quota and a rate limit
// its key object keeps. test/http/object-spread.test.ts and bench/scale-bench.ts both set up with
// it: plain fetch, no test runner, so either may import it.

export interface SpreadTenants {
  workspaces: string[];
  /** The agent keys' secrets, one a tenant. */
  secrets: string[];
}

export async function createSpreadTenants(
  url: string,
  adminKey: string,
  options: {
    count: number;
    prefix: string;
    seed: { path: string; content: string };
    /** Set-up requests sent at once (default 1: one after the other); what is made is the same. */
    concurrency?: number;
  },
): Promise<SpreadTenants> {
  const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const workspaces = Array.from({ length: options.count }, (_, i) => `${options.prefix}${i}`);
  const concurrency = options.concurrency ?? 1;
  await inTurn(workspaces.length, concurrency, async (i) => {
    const ws = workspaces[i]!;
    await expectOk(fetch(`${url}/v1/workspaces/${ws}`, { method: 'PUT', headers: admin }));
    await expectOk(
      fetch(`${url}/v1/workspaces/${ws}/tools/write_file`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify(options.seed),
      }),
    );
  });
  // In tenant order whatever order the keys are made in.
  const secrets: string[] = new Array<string>(options.count);
  await inTurn(options.count, concurrency, async (i) => {
    const created = await expectOk(
      fetch(`${url}/v1/keys`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({
          name: `tenant-${i}`,
          role: 'agent',
          workspaces,
          approvalMode: 'auto',
          // Limits no call reaches, so every call asks its key's object for both.
          quota: { calls: 1_000_000_000, period: 'day' },
          rateLimitPerMinute: 1_000_000,
        }),
      }),
    );
    secrets[i] = ((await created.json()) as { secret: string }).secret;
  });
  return { workspaces, secrets };
}

/** Runs `work(0)` to `work(count - 1)`, at most `concurrency` at a time. */
async function inTurn(count: number, concurrency: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

async function expectOk(answer: Promise<Response>): Promise<Response> {
  const response = await answer;
  if (!response.ok) throw new Error(`setting up the tenants: ${response.status} ${await response.text()}`);
  return response;
}
