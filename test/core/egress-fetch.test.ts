// The egress fetch's redirects: each hop goes back through the home's check, fetch's method and header rules apply, and the hop limit holds.
import { describe, expect, it } from 'vitest';
import { followingRedirects, noEgress, type EgressRequest } from '../../src/core/egress-fetch.ts';
import { ToolError } from '../../src/core/errors.ts';

/** A hop that answers from a table of URL → response, and remembers every request it was asked to send. */
function fakeHop(answers: Record<string, () => Response>) {
  const sent: EgressRequest[] = [];
  const hop = async (request: EgressRequest) => {
    sent.push(request);
    const answer = answers[request.url.href];
    if (!answer) throw new ToolError('forbidden', `refused ${request.url.href}`);
    return answer();
  };
  return { sent, hop };
}

const redirect = (status: number, location: string) => () => new Response(null, { status, headers: { location } });
const ok =
  (text = 'ok') =>
  () =>
    new Response(text);

describe('followingRedirects', () => {
  it('sends every hop through the check: a redirect to a refused host is refused there, before it is sent', async () => {
    const { sent, hop } = fakeHop({ 'http://allowed.example/': redirect(302, 'http://127.0.0.1:9/') });
    await expect(followingRedirects(hop)('http://allowed.example/')).rejects.toMatchObject({
      code: 'forbidden',
      message: 'http://allowed.example/ redirects to http://127.0.0.1:9/; refused http://127.0.0.1:9/',
      details: { redirectedFrom: 'http://allowed.example/' },
    });
    expect(sent.map((request) => request.url.href)).toEqual(['http://allowed.example/', 'http://127.0.0.1:9/']);
  });

  it('follows relative locations and answers the final response', async () => {
    const { sent, hop } = fakeHop({
      'http://a.example/x/y': redirect(301, '../z?q=1'),
      'http://a.example/z?q=1': ok('final'),
    });
    const response = await followingRedirects(hop)('http://a.example/x/y');
    expect(await response.text()).toBe('final');
    expect(sent).toHaveLength(2);
  });

  it('stops after the hop limit with unavailable', async () => {
    const answers: Record<string, () => Response> = {};
    for (let index = 0; index < 10; index += 1) answers[`http://a.example/${index}`] = redirect(302, `/${index + 1}`);
    const { sent, hop } = fakeHop(answers);
    await expect(followingRedirects(hop, 3)('http://a.example/0')).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('more than 3 times'),
    });
    expect(sent).toHaveLength(4);
  });

  it('turns a POST into a GET without its body on 301, 302 and 303, and keeps both on 307 and 308', async () => {
    for (const [status, method, body] of [
      [301, 'GET', undefined],
      [302, 'GET', undefined],
      [303, 'GET', undefined],
      [307, 'POST', 'payload'],
      [308, 'POST', 'payload'],
    ] as const) {
      const { sent, hop } = fakeHop({ 'http://a.example/': redirect(status, '/next'), 'http://a.example/next': ok() });
      await followingRedirects(hop)('http://a.example/', {
        method: 'POST',
        body: 'payload',
        headers: { 'content-type': 'text/plain', 'x-kept': '1' },
      });
      const next = sent[1]!;
      expect({ status, method: next.method, body: next.body && new TextDecoder().decode(next.body) }).toEqual({
        status,
        method,
        body,
      });
      expect(next.headers.get('content-type')).toBe(body === undefined ? null : 'text/plain');
      expect(next.headers.get('x-kept')).toBe('1');
    }
  });

  it('drops credentials when a redirect leaves the origin, keeps them within it', async () => {
    const { sent, hop } = fakeHop({
      'http://a.example/': redirect(302, '/same'),
      'http://a.example/same': redirect(302, 'https://b.example/other'),
      'https://b.example/other': ok(),
    });
    await followingRedirects(hop)('http://a.example/', { headers: { authorization: 'Basic eDp5', cookie: 'c=1' } });
    expect(sent.map((request) => request.headers.get('authorization'))).toEqual(['Basic eDp5', 'Basic eDp5', null]);
    expect(sent[2]!.headers.get('cookie')).toBeNull();
  });

  it("answers the redirect itself with redirect: 'manual', and fails with 'error'", async () => {
    const { sent, hop } = fakeHop({ 'http://a.example/': redirect(302, 'http://127.0.0.1/') });
    expect((await followingRedirects(hop)('http://a.example/', { redirect: 'manual' })).status).toBe(302);
    await expect(followingRedirects(hop)('http://a.example/', { redirect: 'error' })).rejects.toBeInstanceOf(TypeError);
    expect(sent.map((request) => request.url.href)).toEqual(['http://a.example/', 'http://a.example/']);
  });

  it('refuses a redirect to another scheme', async () => {
    const { hop } = fakeHop({ 'http://a.example/': redirect(302, 'file:///etc/passwd') });
    await expect(followingRedirects(hop)('http://a.example/')).rejects.toMatchObject({
      code: 'forbidden',
      details: { url: 'file:///etc/passwd', redirectedFrom: 'http://a.example/' },
    });
  });

  it('a server given no egress refuses everything', async () => {
    await expect(noEgress('https://user:pw@example.com/x')).rejects.toMatchObject({
      code: 'forbidden',
      details: { url: 'https://example.com/x' },
    });
  });
});
