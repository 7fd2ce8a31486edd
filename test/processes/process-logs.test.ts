// bash `logs` over the ring buffer: docs/api.md's offsets, clamping and truncation, byte for byte.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fence, memoryStore, runningProcess, toolErrorOf } from './process-fixtures.ts';

const MAX_OUTPUT_CHARS = 1_048_576;

function splitsPair(text: string, at: number): boolean {
  const high = text.charCodeAt(at - 1);
  const low = text.charCodeAt(at);
  return at > 0 && high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

/** What docs/api.md says `logs` answers for output `full` whose oldest held offset is `startOffset`. */
function expectedPage(full: string, startOffset: number, requested: number | undefined, limit: number) {
  const offset = Math.min(Math.max(requested ?? startOffset, startOffset), full.length);
  let length = Math.min(limit, full.length - offset);
  if (length > 0 && splitsPair(full, offset + length)) length -= 1;
  const data = full.slice(offset, offset + length);
  return {
    data,
    offset,
    nextOffset: offset + data.length,
    truncated: requested !== undefined && requested < startOffset,
  };
}

/** Text units that include astral characters (surrogate pairs), NUL, newlines and combining marks. */
const outputText = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', '\n', '\0', 'é', 'e\u0301', '😀', '𝄞', '\r\n'), maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 25 }),
);

describe('bash logs', () => {
  it('answers an empty page for a process without output', () => {
    const { store } = memoryStore();
    const { record } = runningProcess(store);
    expect(store.readLogs('ws', record.id)).toEqual({
      processId: record.id,
      data: '',
      offset: 0,
      nextOffset: 0,
      startOffset: 0,
      truncated: false,
      status: 'running',
    });
    expect(store.readLogs('ws', record.id, 10).offset).toBe(0);
  });

  it('pages through many appends and returns exactly what was appended', () => {
    const { store } = memoryStore({ chunkChars: 100 });
    const { record, token } = runningProcess(store);
    let full = '';
    for (let i = 0; i < 200; i++) {
      const batch = `line ${i}: ${'x'.repeat((i * 37) % 150)}\n`;
      store.appendOutput(record.id, fence(token), batch);
      full += batch;
    }
    let read = '';
    let offset = 0;
    for (;;) {
      const page = store.readLogs('ws', record.id, offset, 333);
      expect(page.offset).toBe(offset);
      expect(page.nextOffset).toBe(offset + page.data.length);
      if (page.data === '') break;
      read += page.data;
      offset = page.nextOffset;
    }
    expect(read).toBe(full);
    expect(store.get('ws', record.id)?.outputChars).toBe(full.length);
  });

  it('matches the slice of the full output docs/api.md describes for any appends, offset and limit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 2, max: 16 }),
        fc.array(outputText, { maxLength: 30 }),
        fc.array(fc.record({ offset: fc.option(fc.nat(400), { nil: undefined }), limit: fc.nat(90) }), {
          minLength: 1,
          maxLength: 12,
        }),
        (maxOutputChars, chunkChars, appends, queries) => {
          const { store, db } = memoryStore({ maxOutputChars, chunkChars });
          const { record, token } = runningProcess(store);
          for (const batch of appends) store.appendOutput(record.id, fence(token), batch);
          const full = appends.join('');
          for (const { offset, limit } of queries) {
            const page = store.readLogs('ws', record.id, offset, limit);
            // At least the last maxOutputChars are held, and less than one more chunk beyond them.
            expect(page.startOffset).toBeLessThanOrEqual(Math.max(0, full.length - maxOutputChars));
            expect(page.startOffset).toBeGreaterThan(full.length - maxOutputChars - chunkChars);
            expect(page).toEqual({
              processId: record.id,
              status: 'running',
              startOffset: page.startOffset,
              ...expectedPage(full, page.startOffset, offset, limit),
            });
          }
          db.close();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reassembles the held output exactly when following nextOffset with any limit of 2 or more', () => {
    fc.assert(
      fc.property(fc.array(outputText, { maxLength: 20 }), fc.integer({ min: 2, max: 50 }), (appends, limit) => {
        const { store, db } = memoryStore({ maxOutputChars: 80, chunkChars: 7 });
        const { record, token } = runningProcess(store);
        for (const batch of appends) store.appendOutput(record.id, fence(token), batch);
        const full = appends.join('');
        let page = store.readLogs('ws', record.id, undefined, limit);
        const start = page.startOffset;
        let read = page.data;
        while (page.data !== '') {
          page = store.readLogs('ws', record.id, page.nextOffset, limit);
          read += page.data;
        }
        expect(read).toBe(full.slice(start));
        db.close();
      }),
      { numRuns: 200 },
    );
  });

  it('drops the oldest output beyond the default 1,048,576 characters and marks older offsets truncated', () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    let full = '';
    for (let i = 0; full.length < 1_600_000; i++) {
      const batch = String.fromCharCode(97 + (i % 26)).repeat(1 + ((i * 7919) % 90_000));
      store.appendOutput(record.id, fence(token), batch);
      full += batch;
    }
    const oldest = store.readLogs('ws', record.id, 0);
    expect(oldest.truncated).toBe(true);
    expect(oldest.startOffset).toBeGreaterThan(0);
    expect(full.length - oldest.startOffset).toBeGreaterThanOrEqual(MAX_OUTPUT_CHARS);
    expect(oldest.offset).toBe(oldest.startOffset);
    expect(oldest.data).toBe(full.slice(oldest.startOffset, oldest.startOffset + 65_536));
    expect(oldest.nextOffset).toBe(oldest.startOffset + 65_536);

    const held = store.readLogs('ws', record.id, full.length - MAX_OUTPUT_CHARS, 10);
    expect(held).toMatchObject({
      truncated: false,
      offset: full.length - MAX_OUTPUT_CHARS,
      data: full.slice(full.length - MAX_OUTPUT_CHARS, full.length - MAX_OUTPUT_CHARS + 10),
    });
    expect(store.readLogs('ws', record.id).truncated).toBe(false);
  });

  it('clamps an offset past the end to the end', () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    store.appendOutput(record.id, fence(token), 'hello');
    expect(store.readLogs('ws', record.id, 99)).toMatchObject({ data: '', offset: 5, nextOffset: 5, truncated: false });
  });

  it('never ends a page inside a surrogate pair', () => {
    const { store } = memoryStore({ chunkChars: 3 });
    const { record, token } = runningProcess(store);
    store.appendOutput(record.id, fence(token), 'a😀😀b');
    expect(store.readLogs('ws', record.id, 0, 2).data).toBe('a');
    expect(store.readLogs('ws', record.id, 1, 3).data).toBe('😀');
    expect(store.readLogs('ws', record.id, 1, 4).data).toBe('😀😀');
    // Returning one fewer character can leave nothing: a limit of 1 cannot hold a pair.
    expect(store.readLogs('ws', record.id, 1, 1)).toMatchObject({ data: '', offset: 1, nextOffset: 1 });
  });

  it('keeps offsets true for lone surrogates, which are stored as U+FFFD', () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    store.appendOutput(record.id, fence(token), 'a\uD800b');
    store.appendOutput(record.id, fence(token), '\uDC00c');
    expect(store.get('ws', record.id)?.outputChars).toBe(5);
    expect(store.readLogs('ws', record.id).data).toBe('a\uFFFDb\uFFFDc');
  });

  it('does not append a resent batch twice when the runner gives its offset, and refuses a gap', () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    expect(store.appendOutput(record.id, fence(token), 'hello ', 0)).toBe(6);
    expect(store.appendOutput(record.id, fence(token), 'hello ', 0)).toBe(6);
    expect(store.appendOutput(record.id, fence(token), ' world', 5)).toBe(11);
    expect(store.readLogs('ws', record.id).data).toBe('hello world');
    const gap = toolErrorOf(() => store.appendOutput(record.id, fence(token), '!', 20), 'conflict');
    expect(gap.details).toEqual({ processId: record.id, end: 11 });
  });

  it('refuses negative or fractional offsets and limits', () => {
    const { store } = memoryStore();
    const { record } = runningProcess(store);
    toolErrorOf(() => store.readLogs('ws', record.id, -1), 'invalid_argument');
    toolErrorOf(() => store.readLogs('ws', record.id, 0, 1.5), 'invalid_argument');
  });

  it('answers not_found for a process of another workspace', () => {
    const { store } = memoryStore();
    const { record } = runningProcess(store);
    toolErrorOf(() => store.readLogs('other', record.id), 'not_found');
  });
});

describe('skipped output from a runner far behind', () => {
  it('counts skipped characters in every offset and keeps the tail it was sent', () => {
    const { store } = memoryStore({ maxOutputChars: 100, chunkChars: 10 });
    const { record, token } = runningProcess(store);
    store.appendOutput(record.id, fence(token), 'a'.repeat(50), 0);
    const tail = `${'t'.repeat(99)}!`;
    expect(store.appendOutput(record.id, fence(token), tail, 50, 1000)).toBe(1150);
    // A resent batch is applied once.
    expect(store.appendOutput(record.id, fence(token), tail, 50, 1000)).toBe(1150);
    const page = store.readLogs('ws', record.id, 0, 1000);
    expect(page).toMatchObject({ offset: 1050, startOffset: 1050, nextOffset: 1150, truncated: true, data: tail });
    expect(store.appendOutput(record.id, fence(token), 'more', 1150)).toBe(1154);
    expect(store.readLogs('ws', record.id, 1140, 100).data).toBe(`${'t'.repeat(9)}!more`);
  });

  it('keeps every offset true after a skip shorter than a chunk, when the last chunk still has room', () => {
    const { store } = memoryStore({ maxOutputChars: 64, chunkChars: 32 });
    const { record, token } = runningProcess(store);
    store.appendOutput(record.id, fence(token), 'a'.repeat(10), 0);
    const tail = Array.from({ length: 64 }, (_, i) => String.fromCharCode(65 + (i % 26))).join('');
    expect(store.appendOutput(record.id, fence(token), tail, 10, 5)).toBe(79);
    expect(store.readLogs('ws', record.id, 0, 1000)).toMatchObject({
      offset: 15,
      startOffset: 15,
      nextOffset: 79,
      truncated: true,
      data: tail,
    });
    for (let offset = 15; offset < 79; offset += 1)
      expect(store.readLogs('ws', record.id, offset, 3).data).toBe(tail.slice(offset - 15, offset - 12));
  });

  it('refuses a skip with a batch shorter than the ring, which would leave a hole', () => {
    const { store } = memoryStore({ maxOutputChars: 100, chunkChars: 10 });
    const { record, token } = runningProcess(store);
    toolErrorOf(() => store.appendOutput(record.id, fence(token), 'short', 0, 10), 'invalid_argument');
    expect(store.readLogs('ws', record.id).nextOffset).toBe(0);
  });
});
