// The egress rule (docs/api.md Egress): address forms, the blocked ranges, the allowlist, and what a host is decided as.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import {
  blockedRange,
  egressByAddress,
  egressByName,
  egressRefusal,
  EMPTY_ALLOW_LIST,
  parseEgressAllowList,
  parseIpAddress,
  parseIpRange,
  rangeContains,
  urlHostname,
} from '../../src/core/egress-policy.ts';

const hex = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : Buffer.from(bytes).toString('hex'));

describe('parseIpAddress', () => {
  it.each([
    ['127.0.0.1', '7f000001'],
    ['0.0.0.0', '00000000'],
    ['255.255.255.255', 'ffffffff'],
    ['::', '0'.repeat(32)],
    ['::1', `${'0'.repeat(31)}1`],
    ['1::', `0001${'0'.repeat(28)}`],
    ['2001:db8::8:800:200c:417a', '20010db80000000000080800200c417a'],
    ['2001:DB8:0:0:8:800:200C:417A', '20010db80000000000080800200c417a'],
    ['::ffff:127.0.0.1', '00000000000000000000ffff7f000001'],
    ['::ffff:7f00:1', '00000000000000000000ffff7f000001'],
    ['::127.0.0.1', '0000000000000000000000007f000001'],
    ['64:ff9b::a00:1', '0064ff9b00000000000000000a000001'],
    ['fe80::1%eth0', `fe80${'0'.repeat(27)}1`],
    ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
    ['1:2:3:4:5:6:1.2.3.4', '00010002000300040005000601020304'],
  ])('reads %s', (text, bytes) => {
    expect(hex(parseIpAddress(text))).toBe(bytes);
  });

  it.each([
    '127.1', // the short forms WHATWG URL expands never reach here: a URL's hostname is normalised first
    '0x7f.0.0.1',
    '2130706433',
    '010.0.0.1',
    '256.0.0.1',
    '1.2.3.4.5',
    '1.2.3.',
    '',
    'localhost',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    '1:2:3:4:5:6:7::8',
    '12345::',
    '::g',
    ':1',
    '1:',
    '1.2.3.4::',
    '::1.2.3',
    '[::1]',
  ])('refuses %j', (text) => {
    expect(parseIpAddress(text)).toBeUndefined();
  });
});

describe('ranges', () => {
  it.each([
    ['10.0.0.0/8', '10.255.1.2', true],
    ['10.0.0.0/8', '11.0.0.0', false],
    ['100.64.0.0/10', '100.127.255.255', true],
    ['100.64.0.0/10', '100.128.0.0', false],
    ['0.0.0.0/0', '8.8.8.8', true],
    ['127.0.0.2', '127.0.0.2', true],
    ['127.0.0.2/32', '127.0.0.3', false],
    ['fd00::/8', 'fd12::1', true],
    ['fd00::/8', 'fe00::1', false],
    ['::/0', '2001:db8::1', true],
    ['10.0.0.0/8', '::ffff:10.0.0.1', false],
  ])('%s contains %s: %s', (range, address, inside) => {
    expect(rangeContains(parseIpRange(range)!, parseIpAddress(address)!)).toBe(inside);
  });

  it.each(['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/08', '10.0.0.0/-1', 'fe80::1%eth0/64', 'example.com/8'])(
    'refuses %j',
    (text) => {
      expect(parseIpRange(text)).toBeUndefined();
    },
  );
});

describe('blockedRange', () => {
  it.each([
    ['127.0.0.1', 'loopback', '127.0.0.0/8'],
    ['127.255.255.254', 'loopback', '127.0.0.0/8'],
    ['10.0.0.1', 'private', '10.0.0.0/8'],
    ['172.16.0.1', 'private', '172.16.0.0/12'],
    ['172.31.255.255', 'private', '172.16.0.0/12'],
    ['192.168.1.1', 'private', '192.168.0.0/16'],
    ['169.254.169.254', 'link-local', '169.254.0.0/16'],
    ['100.64.0.1', 'shared', '100.64.0.0/10'],
    ['0.0.0.0', 'unspecified', '0.0.0.0/8'],
    ['0.1.2.3', 'unspecified', '0.0.0.0/8'],
    ['224.0.0.1', 'multicast', '224.0.0.0/4'],
    ['239.255.255.250', 'multicast', '224.0.0.0/4'],
    ['255.255.255.255', 'reserved', '240.0.0.0/4'],
    ['::1', 'loopback', '::1/128'],
    ['::', 'unspecified', '::/128'],
    ['fc00::1', 'private', 'fc00::/7'],
    ['fd12:3456::1', 'private', 'fc00::/7'],
    ['fe80::1', 'link-local', 'fe80::/10'],
    ['febf::1', 'link-local', 'fe80::/10'],
    ['fec0::1', 'private', 'fec0::/10'],
    ['ff02::1', 'multicast', 'ff00::/8'],
    ['64:ff9b:1::1', 'private', '64:ff9b:1::/48'],
  ])('%s is %s (%s)', (address, kind, range) => {
    expect(blockedRange(parseIpAddress(address)!)).toEqual({ kind, range });
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback', 'IPv4-mapped IPv6'],
    ['::ffff:7f00:1', 'loopback', 'IPv4-mapped IPv6'],
    ['::ffff:a9fe:a9fe', 'link-local', 'IPv4-mapped IPv6'],
    ['::ffff:0:10.0.0.1', 'private', 'IPv4-translated IPv6'],
    ['64:ff9b::127.0.0.1', 'loopback', 'NAT64'],
    ['64:ff9b::a9fe:a9fe', 'link-local', 'NAT64'],
    ['2002:7f00:1::', 'loopback', '6to4'],
    ['2002:c0a8:101::1', 'private', '6to4'],
    // Teredo keeps the client's address inverted: 80ff:fffe is 127.0.0.1.
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback', 'Teredo'],
    ['::127.0.0.1', 'loopback', 'IPv4-compatible IPv6'],
    ['::10.1.2.3', 'private', 'IPv4-compatible IPv6'],
  ])('%s carries a %s IPv4 address as %s', (address, kind, via) => {
    expect(blockedRange(parseIpAddress(address)!)).toMatchObject({ kind, via });
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2001:db8::1',
  ])('%s is public', (address) => {
    expect(blockedRange(parseIpAddress(address)!)).toBeUndefined();
  });
});

describe('URL hostnames, as WHATWG URL normalises them', () => {
  it.each([
    ['http://127.1/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.0.0.1./', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]:8080/', '::ffff:7f00:1'],
    ['http://[0:0:0:0:0:0:0:1]/', '::1'],
    ['http://LOCALHOST./x', 'localhost'],
    ['http://user:pw@Example.COM/', 'example.com'],
  ])('%s is %s, and refused unless public', (url, hostname) => {
    expect(urlHostname(new URL(url))).toBe(hostname);
    if (hostname !== 'example.com') expect(egressByName(hostname, EMPTY_ALLOW_LIST)).toMatchObject({ allowed: false });
  });
});

describe('parseEgressAllowList', () => {
  it('reads names, addresses and ranges, ignoring blanks and spacing', () => {
    const list = parseEgressAllowList(
      ' git.Example.com , 127.0.0.2/32,, 10.0.0.5 ,fd00::/8, [::1], xn--bcher-kva.example., bücher.example ',
    );
    expect([...list.names].sort()).toEqual(['git.example.com', 'xn--bcher-kva.example']);
    expect(list.ranges.map((range) => [hex(range.bytes), range.prefix])).toEqual([
      ['7f000002', 32],
      ['0a000005', 32],
      [`fd${'0'.repeat(30)}`, 8],
      [`${'0'.repeat(31)}1`, 128],
    ]);
    expect(parseEgressAllowList(undefined)).toEqual({ names: new Set(), ranges: [] });
    expect(parseEgressAllowList('')).toEqual({ names: new Set(), ranges: [] });
  });

  it.each([
    '127.1',
    '0x7f000001',
    '010.0.0.1',
    '10.0.0.0/33',
    '*.example.com',
    'example.com:8080',
    'http://example.com',
    'user@example.com',
    'exa mple.com',
    'a/b',
    '::1/200',
    '[::1',
    '%6cocalhost',
    'fe80::1%eth0',
  ])('refuses %j with an error naming the setting', (entry) => {
    expect(() => parseEgressAllowList(`ok.example, ${entry}`)).toThrow(/TOOLGATE_EGRESS_ALLOW_HOSTS.*none of them/);
  });
});

describe('deciding a host', () => {
  const allow = parseEgressAllowList('127.0.0.2/32, internal.example, 10.1.0.0/16, fd00::/8');

  it.each([
    // [hostname, addresses it resolves to, allowed]
    ['8.8.8.8', undefined, true],
    ['127.0.0.1', undefined, false],
    ['127.0.0.2', undefined, true],
    ['::ffff:7f00:2', undefined, true],
    ['::ffff:7f00:1', undefined, false],
    ['10.1.2.3', undefined, true],
    ['10.2.0.1', undefined, false],
    ['fd00::5', undefined, true],
    ['fc00::5', undefined, false],
    ['localhost', undefined, false],
    ['db.localhost', undefined, false],
    ['internal.example', ['127.0.0.1'], true],
    ['public.example', ['93.184.216.34'], true],
    ['public.example', ['93.184.216.34', '127.0.0.1'], false],
    ['rebind.example', ['::ffff:169.254.169.254'], false],
    ['two.example', ['127.0.0.2', '10.1.0.1'], true],
    ['odd.example', ['not-an-address'], false],
  ] as [string, string[] | undefined, boolean][])('%s (%j): allowed %s', (hostname, addresses, allowed) => {
    const verdict =
      addresses === undefined
        ? egressByName(hostname, allow)
        : (egressByName(hostname, allow) ?? egressByAddress(hostname, addresses, allow));
    expect(verdict?.allowed).toBe(allowed);
  });

  it('leaves a name that is not listed and not localhost to what it resolves to', () => {
    expect(egressByName('public.example', allow)).toBeUndefined();
  });

  it('refuses with forbidden, naming the host, the address and the setting, and the URL without credentials', () => {
    const verdict = egressByAddress('vm', ['127.0.0.1'], EMPTY_ALLOW_LIST);
    if (verdict.allowed) throw new Error('expected a refusal');
    const error = egressRefusal(new URL('http://alice:s3cret@vm:8080/repo.git'), verdict);
    expect(error).toBeInstanceOf(ToolError);
    expect(error.code).toBe('forbidden');
    expect(error.message).toBe(
      'toolgate does not connect to vm, which resolves to 127.0.0.1, a loopback address (127.0.0.0/8); to allow it, list vm in TOOLGATE_EGRESS_ALLOW_HOSTS.',
    );
    expect(error.details).toEqual({ url: 'http://vm:8080/repo.git', address: '127.0.0.1' });

    const mapped = egressByName('::ffff:7f00:1', EMPTY_ALLOW_LIST);
    if (!mapped || mapped.allowed) throw new Error('expected a refusal');
    expect(egressRefusal(new URL('http://[::ffff:7f00:1]/'), mapped).message).toBe(
      'toolgate does not connect to ::ffff:7f00:1, a loopback address (127.0.0.0/8, as IPv4-mapped IPv6); to allow it, list ::ffff:7f00:1 in TOOLGATE_EGRESS_ALLOW_HOSTS.',
    );
    const named = egressByName('localhost', EMPTY_ALLOW_LIST);
    if (!named || named.allowed) throw new Error('expected a refusal');
    const byName = egressRefusal(new URL('http://localhost:1/'), named);
    expect(byName.message).toBe(
      'toolgate does not connect to localhost, a loopback name; to allow it, list localhost in TOOLGATE_EGRESS_ALLOW_HOSTS.',
    );
    expect(byName.details).toEqual({ url: 'http://localhost:1/' });
  });
});
