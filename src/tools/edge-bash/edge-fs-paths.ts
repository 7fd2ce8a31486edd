// Paths and bytes as the edge engine's filesystem (edge-fs.ts) reads them: virtual paths made
// absolute and normalized by their names alone (as just-bash does before any link is followed), and
// file contents in the encodings the interpreter passes.
import type { BufferEncoding, FileContent } from 'just-bash';

/** A name that normalizing changes: empty (a repeated or trailing slash), `.` or `..`. */
const NOT_NORMAL = /\/(?:\.{1,2})?(?:\/|$)/;

/** `path` absolute, without `.`, `..`, repeated or trailing slashes (`..` above the root stays at it). */
export function lexical(path: string): string {
  if (path === '' || path === '/') return '/';
  // Most paths are normal already (the interpreter resolves them before it asks): kept as they are.
  if (path.charCodeAt(0) === 47 && !NOT_NORMAL.test(path)) return path;
  const names: string[] = [];
  for (const name of path.split('/')) {
    if (name === '' || name === '.') continue;
    if (name === '..') names.pop();
    else names.push(name);
  }
  return `/${names.join('/')}`;
}

/** A name below a directory's path (`''` or `/` for the root). */
export function joined(directory: string, name: string): string {
  return directory === '' || directory === '/' ? `/${name}` : `${directory}/${name}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function toBytes(content: FileContent, encoding?: BufferEncoding): Uint8Array {
  if (content instanceof Uint8Array) return content;
  if (encoding === 'base64') return Uint8Array.from(atob(content), (char) => char.charCodeAt(0));
  if (encoding === 'hex') {
    const bytes = new Uint8Array(content.length >> 1);
    for (let at = 0; at < bytes.length; at += 1) bytes[at] = parseInt(content.slice(at * 2, at * 2 + 2), 16);
    return bytes;
  }
  if (encoding === 'binary' || encoding === 'latin1') {
    const bytes = new Uint8Array(content.length);
    for (let at = 0; at < content.length; at += 1) bytes[at] = content.charCodeAt(at);
    return bytes;
  }
  return encoder.encode(content);
}

export function fromBytes(bytes: Uint8Array, encoding?: BufferEncoding | null): string {
  if (encoding === 'base64') return btoa(latin1(bytes));
  if (encoding === 'hex') return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  if (encoding === 'binary' || encoding === 'latin1') return latin1(bytes);
  return decoder.decode(bytes);
}

/** Each byte as the character of its code: in chunks, since a call takes only so many arguments. */
function latin1(bytes: Uint8Array): string {
  let text = '';
  for (let at = 0; at < bytes.length; at += 0x8000) text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return text;
}
