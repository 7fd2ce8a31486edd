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
  options: { count: number; prefix: string; seed: { path: string; content: string } },
): Promise<SpreadTenants> {
  const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const workspaces = Array.from({ length: options.count }, (_, i) => `${options.prefix}${i}`);
  for (const ws of workspaces) {
    await expectOk(fetch(`${url}/v1/workspaces/${ws}`, { method: 'PUT', headers: admin }));
    await expectOk(
      fetch(`${url}/v1/workspaces/${ws}/tools/write_file`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify(options.seed),
      }),
    );
  }
  const secrets: string[] = [];
  for (let i = 0; i < options.count; i += 1) {
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
    secrets.push(((await created.json()) as { secret: string }).secret);
  }
  return { workspaces, secrets };
}

async function expectOk(answer: Promise<Response>): Promise<Response> {
  const response = await answer;
  if (!response.ok) throw new Error(`setting up the tenants: ${response.status} ${await response.text()}`);
  return response;
}
