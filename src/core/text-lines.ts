// Line arithmetic shared by the file tools: lines end at \n, a final line without one counts.

/** Offsets where each line starts; an empty text has no lines. */
export function lineStarts(text: string): number[] {
  const starts: number[] = [];
  if (text.length === 0) return starts;
  starts.push(0);
  for (let index = text.indexOf('\n'); index !== -1 && index + 1 < text.length; index = text.indexOf('\n', index + 1)) {
    starts.push(index + 1);
  }
  return starts;
}

/** Cuts text to at most `max` UTF-16 code units without splitting a surrogate pair. */
export function cutAtChars(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

export function countNewlines(text: string): number {
  let count = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) count += 1;
  return count;
}

/** True when every `\n` is preceded by `\r` and there is at least one: a CRLF text. */
export function isCrlf(text: string): boolean {
  let newlines = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
    if (text[index - 1] !== '\r') return false;
    newlines += 1;
  }
  return newlines > 0;
}
