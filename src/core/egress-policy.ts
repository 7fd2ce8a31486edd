// The egress rule: which hosts and addresses git imports and approval notices may connect to, and the allowlist (TOOLGATE_EGRESS_ALLOW_HOSTS) that lifts it.
import { ToolError } from './errors.ts';

/** An IP address as its bytes: 4 for IPv4, 16 for IPv6. */
export type IpBytes = Uint8Array;

/** A CIDR range: the first `prefix` bits of `bytes`. */
export interface IpRange {
  bytes: IpBytes;
  prefix: number;
  /** As written, for messages. */
  text: string;
}

export type BlockedKind = 'loopback' | 'private' | 'link-local' | 'shared' | 'unspecified' | 'multicast' | 'reserved';

/** Why a host is refused: the range its address lies in (none for a localhost name or an address that cannot be read), and the IPv6 form that carried an IPv4 address when one did. */
export interface BlockedRange {
  kind: BlockedKind | 'unreadable';
  range?: string;
  via?: string;
}

export interface EgressAllowList {
  /** Host names (lowercase, ASCII, no trailing dot) allowed whatever they resolve to. */
  names: ReadonlySet<string>;
  /** Addresses allowed, literal or resolved. */
  ranges: readonly IpRange[];
}

export type EgressVerdict =
  { allowed: true } | { allowed: false; hostname: string; address?: string; blocked: BlockedRange };

export const ALLOW_HOSTS_SETTING = 'TOOLGATE_EGRESS_ALLOW_HOSTS';

export const EMPTY_ALLOW_LIST: EgressAllowList = { names: new Set(), ranges: [] };

/** Dotted-quad IPv4 (four decimal numbers, no leading zeros) or IPv6 text (compressed, with an IPv4 tail, a `%zone` ignored); anything else is undefined. */
export function parseIpAddress(text: string): IpBytes | undefined {
  return text.includes(':') ? parseIpv6(text) : parseIpv4(text);
}

function parseIpv4(text: string): IpBytes | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (const [index, part] of parts.entries()) {
    // A leading zero would be octal to some parsers and decimal to others: refused rather than guessed.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return undefined;
    bytes[index] = Number(part);
  }
  return bytes;
}

function parseIpv6(text: string): IpBytes | undefined {
  // A zone names the interface a link-local address is reached through, not another address.
  const zone = text.indexOf('%');
  const address = zone === -1 ? text : text.slice(0, zone);
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === '') return [];
    const words: number[] = [];
    const parts = half.split(':');
    for (const [index, part] of parts.entries()) {
      if (index === parts.length - 1 && part.includes('.')) {
        const v4 = parseIpv4(part);
        if (!v4) return undefined;
        words.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
        words.push(parseInt(part, 16));
      } else {
        return undefined;
      }
    }
    return words;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  // An IPv4 tail may only end the address.
  if (halves.length === 2 && halves[0]!.includes('.')) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const words = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  words.forEach((word, index) => {
    bytes[index * 2] = word >> 8;
    bytes[index * 2 + 1] = word & 0xff;
  });
  return bytes;
}

/** `10.0.0.0/8`, `fd00::/8`, or a single address (its own /32 or /128); undefined when it is none of them. */
export function parseIpRange(text: string): IpRange | undefined {
  const slash = text.indexOf('/');
  const bytes = text.includes('%') ? undefined : parseIpAddress(slash === -1 ? text : text.slice(0, slash));
  if (!bytes) return undefined;
  const bits = bytes.length * 8;
  if (slash === -1) return { bytes, prefix: bits, text };
  const prefixText = text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > bits) return undefined;
  return { bytes, prefix: Number(prefixText), text };
}

export function rangeContains(range: IpRange, address: IpBytes): boolean {
  if (range.bytes.length !== address.length) return false;
  const whole = Math.floor(range.prefix / 8);
  for (let index = 0; index < whole; index += 1) if (range.bytes[index] !== address[index]) return false;
  const rest = range.prefix % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (range.bytes[whole]! & mask) === (address[whole]! & mask);
}

function table(rows: [string, BlockedKind][]): { range: IpRange; kind: BlockedKind }[] {
  return rows.map(([text, kind]) => ({ range: parseIpRange(text)!, kind }));
}

const BLOCKED_V4 = table([
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.168.0.0/16', 'private'],
  ['224.0.0.0/4', 'multicast'],
  // Reserved for future use, and 255.255.255.255 is broadcast: nothing a remote lives at.
  ['240.0.0.0/4', 'reserved'],
]);

const BLOCKED_V6 = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fc00::/7', 'private'],
  // Site-local, deprecated but still routed as private by some hosts.
  ['fec0::/10', 'private'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
  // Local-use NAT64 (RFC 8215): the site picks where the IPv4 address sits, so it cannot be read out and checked.
  ['64:ff9b:1::/48', 'private'],
]);

/** IPv6 forms that carry an IPv4 address which the connection ends up at: where it sits and what the form is called. */
const EMBEDDING = [
  { range: parseIpRange('::ffff:0:0/96')!, via: 'IPv4-mapped IPv6', at: 12, flip: false },
  { range: parseIpRange('::ffff:0:0:0/96')!, via: 'IPv4-translated IPv6', at: 12, flip: false },
  { range: parseIpRange('64:ff9b::/96')!, via: 'NAT64', at: 12, flip: false },
  { range: parseIpRange('2002::/16')!, via: '6to4', at: 2, flip: false },
  // Teredo keeps the client's IPv4 address in the last 32 bits, inverted.
  { range: parseIpRange('2001::/32')!, via: 'Teredo', at: 12, flip: true },
  { range: parseIpRange('::/96')!, via: 'IPv4-compatible IPv6', at: 12, flip: false },
];

/** The IPv4 address an IPv6 address carries (mapped, translated, NAT64, 6to4, Teredo, compatible), with the form's name. */
export function embeddedIpv4(address: IpBytes): { bytes: IpBytes; via: string } | undefined {
  if (address.length !== 16) return undefined;
  const form = EMBEDDING.find((candidate) => rangeContains(candidate.range, address));
  if (!form) return undefined;
  const bytes = address.slice(form.at, form.at + 4).map((byte) => (form.flip ? ~byte & 0xff : byte));
  return { bytes, via: form.via };
}

/** The blocked range an address lies in, directly or through the IPv4 address it carries; undefined when it may be connected to. */
export function blockedRange(address: IpBytes): BlockedRange | undefined {
  const own = (address.length === 4 ? BLOCKED_V4 : BLOCKED_V6).find((row) => rangeContains(row.range, address));
  if (own) return { kind: own.kind, range: own.range.text };
  const inner = embeddedIpv4(address);
  const carried = inner && BLOCKED_V4.find((row) => rangeContains(row.range, inner.bytes));
  return carried ? { kind: carried.kind, range: carried.range.text, via: inner.via } : undefined;
}

/**
 * Reads the allowlist: host names, IP addresses or CIDR ranges, comma-separated. A bad entry
 * throws an Error naming the setting, so a server refuses to start rather than guess.
 */
export function parseEgressAllowList(raw: string | undefined): EgressAllowList {
  const names = new Set<string>();
  const ranges: IpRange[] = [];
  for (const entry of (raw ?? '').split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const range = parseIpRange(entry.replace(/^\[([^\]]*)\](?=\/|$)/, '$1'));
    if (range) {
      ranges.push(range);
      continue;
    }
    const name = hostName(entry);
    if (name === undefined) {
      throw new Error(
        `${ALLOW_HOSTS_SETTING} is a comma list of host names, IP addresses or CIDR ranges (git.example.com, 10.0.0.5, 10.1.0.0/16, fd00::/8); ${JSON.stringify(entry)} is none of them.`,
      );
    }
    names.add(name);
  }
  return { names, ranges };
}

/** A host name as a URL holds it (lowercase, punycode), without its trailing dot; undefined when it is not a plain name. */
function hostName(entry: string): string | undefined {
  if (/[/:@?#%\s[\]\\*]/.test(entry)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://${entry}/`).hostname;
  } catch {
    return undefined;
  }
  // A name the URL parser reads as an address (127.1, 0x7f000001) is written as the address, so the list says what it allows.
  if (parseIpAddress(hostname)) return undefined;
  const name = hostname.replace(/\.$/, '');
  return /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name) ? name : undefined;
}

/** A URL's host as a name or an address: the hostname WHATWG URL normalised (127.1 is 127.0.0.1 there), without brackets or a trailing dot. */
export function urlHostname(url: URL): string {
  const hostname = url.hostname.toLowerCase();
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname.replace(/\.$/, '');
}

/** `localhost` and every name under it, which resolvers answer with loopback themselves (RFC 6761). */
export function isLocalhostName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

/**
 * What the host alone decides: a listed name is allowed, an address literal is decided as the
 * address, a localhost name is refused; undefined when it depends on what the name resolves to.
 */
export function egressByName(hostname: string, allow: EgressAllowList): EgressVerdict | undefined {
  if (allow.names.has(hostname)) return { allowed: true };
  if (parseIpAddress(hostname)) return egressByAddress(hostname, [hostname], allow);
  if (isLocalhostName(hostname)) return { allowed: false, hostname, blocked: { kind: 'loopback' } };
  return undefined;
}

/** Decides a host by the addresses it resolved to: every one must be listed or outside the blocked ranges; one that cannot be read is refused. */
export function egressByAddress(hostname: string, addresses: readonly string[], allow: EgressAllowList): EgressVerdict {
  if (allow.names.has(hostname)) return { allowed: true };
  for (const address of addresses) {
    const bytes = parseIpAddress(address);
    if (!bytes) return { allowed: false, hostname, address, blocked: { kind: 'unreadable' } };
    const inner = embeddedIpv4(bytes)?.bytes;
    if (
      allow.ranges.some((range) => rangeContains(range, bytes) || (inner !== undefined && rangeContains(range, inner)))
    )
      continue;
    const blocked = blockedRange(bytes);
    if (blocked) return { allowed: false, hostname, address, blocked };
  }
  return { allowed: true };
}

/** The URL as answers and logs show it: without credentials. */
export function shownUrl(url: URL): string {
  const shown = new URL(url.href);
  shown.username = '';
  shown.password = '';
  return shown.href;
}

/** The `forbidden` error of a refused host, saying what it is and how to allow it. */
export function egressRefusal(url: URL, verdict: Extract<EgressVerdict, { allowed: false }>): ToolError {
  const { hostname, address, blocked } = verdict;
  const range =
    blocked.kind === 'unreadable'
      ? 'an address toolgate cannot read'
      : blocked.range === undefined
        ? `${article(blocked.kind)} ${blocked.kind} name`
        : `${article(blocked.kind)} ${blocked.kind} address (${blocked.range}${blocked.via ? `, as ${blocked.via}` : ''})`;
  const what =
    address === undefined || address === hostname
      ? `${hostname}, ${range}`
      : `${hostname}, which resolves to ${address}, ${range}`;
  return new ToolError(
    'forbidden',
    `toolgate does not connect to ${what}; to allow it, list ${hostname} in ${ALLOW_HOSTS_SETTING}.`,
    {
      url: shownUrl(url),
      ...(address === undefined ? {} : { address }),
    },
  );
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}
