// Index lookups over many entries: the warm tail in memory and the cold part read with pread must give the
// same answers as a brute-force search, before and after reopening and truncation.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { toOffset } from '../../src/common/ids.js';
import {
  type IndexCrypt,
  IndexFileKind,
  SegmentCipher,
} from '../../src/storage/encryption/segment-cipher.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import { STORAGE_LIMITS } from '../../src/storage/log-config.js';
import { OffsetIndex } from '../../src/storage/offset-index.js';
import { TimeIndex } from '../../src/storage/time-index.js';
import { seededRandom } from './batch-builder.js';
import { openHarness } from './log-harness.js';
import { tempDir } from './tmp-dir.js';

const BASE = 1_000_000;

function bruteFloor(entries: { offset: number; position: number }[], target: number) {
  let found: { offset: number; position: number } | null = null;
  for (const e of entries) if (e.offset <= target) found = e;
  return found;
}

/** A segment cipher's index keystream, as a segment's `.enc` gives it (opened again: a new instance, same file). */
function encryptedIndexes(dir: string): { crypt(): IndexCrypt; close(): void } {
  const key = randomBytes(32);
  const keys = { current: () => ({ id: 'k1', key }), kek: (id: string) => (id === 'k1' ? key : undefined) };
  const encPath = join(dir, '00000000000001000000.enc');
  let cipher = SegmentCipher.create(encPath, BASE, keys);
  let first = true;
  return {
    crypt() {
      if (!first) {
        cipher.close();
        cipher = SegmentCipher.open(encPath, BASE, keys);
      }
      first = false;
      return cipher.indexCrypt(IndexFileKind.offset);
    },
    close: () => cipher.close(),
  };
}

for (const encrypted of [false, true]) {
  test(`${encrypted ? 'encrypted ' : ''}offset index lookups agree with brute force across warm and cold entries, reopen and truncation`, (t) => {
    const dir = tempDir(t);
    const path = join(dir, '00000000000001000000.index');
    const enc = encrypted ? encryptedIndexes(dir) : null;
    t.after(() => enc?.close());
    const random = seededRandom(5);
    const index = OffsetIndex.create(path, BASE, 8 * 20_000, enc?.crypt() ?? null);
    const entries: { offset: number; position: number }[] = [];
    let offset = BASE;
    let position = 0;
    for (let i = 0; i < 5000; i++) {
      offset += 1 + Math.floor(random() * 20);
      position += 1 + Math.floor(random() * 5000);
      index.append(offset, position);
      entries.push({ offset, position });
    }
    const check = (idx: OffsetIndex, list: typeof entries, what: string) => {
      for (let i = 0; i < 2000; i++) {
        const target = BASE + Math.floor(random() * (offset - BASE + 50)) - 5;
        const got = idx.lookup(target);
        const want = bruteFloor(list, target);
        assert.deepEqual(
          got === null ? null : { offset: got.offset, position: got.position },
          want,
          `${what} ${target}`,
        );
      }
    };
    check(index, entries, 'live');
    index.file.trimToValidSize();
    index.file.close();
    if (encrypted) {
      const first = Buffer.alloc(8);
      first.writeInt32BE(entries[0]!.offset - BASE, 0);
      first.writeInt32BE(entries[0]!.position, 4);
      assert.equal(readFileSync(path).includes(first), false, 'entries are not in the file as plaintext');
    }
    const reopened = OffsetIndex.open(path, BASE, 8 * 20_000, position + 1, enc?.crypt() ?? null)!;
    assert.equal(reopened.entries, 5000);
    check(reopened, entries, 'reopened');
    const cut = entries[1234]!.offset;
    reopened.truncateTo(cut);
    const kept = entries.filter((e) => e.offset < cut);
    assert.equal(reopened.entries, kept.length);
    check(reopened, kept, 'truncated into the cold part');
    // Appends after a truncation continue the file where it was cut.
    reopened.append(cut + 1, kept[kept.length - 1]!.position + 10);
    assert.deepEqual(reopened.lookup(cut + 5), {
      offset: cut + 1,
      position: kept[kept.length - 1]!.position + 10,
      slot: kept.length,
    });
    // Encrypted, that append moved the index to a new keystream and rewrote what it kept: all of it reads back.
    kept.push({ offset: cut + 1, position: kept[kept.length - 1]!.position + 10 });
    check(reopened, kept, 'appended after the truncation');
    reopened.file.trimToValidSize();
    reopened.file.close();
    const again = OffsetIndex.open(path, BASE, 8 * 20_000, position + 1, enc?.crypt() ?? null)!;
    check(again, kept, 'reopened after the truncation');
    again.file.close();
  });
}

test('time index lookups agree with brute force across warm and cold entries', (t) => {
  const path = join(tempDir(t), '00000000000001000000.timeindex');
  const random = seededRandom(9);
  const index = TimeIndex.create(path, BASE, 12 * 10_000);
  const entries: { timestamp: number; offset: number }[] = [];
  let ts = 1_700_000_000_000;
  let offset = BASE;
  for (let i = 0; i < 3000; i++) {
    ts += 1 + Math.floor(random() * 100);
    offset += Math.floor(random() * 10);
    index.maybeAppend(ts, offset);
    entries.push({ timestamp: ts, offset });
  }
  for (let i = 0; i < 2000; i++) {
    const target = 1_700_000_000_000 + Math.floor(random() * (ts - 1_700_000_000_000 + 100)) - 50;
    let want: (typeof entries)[number] | null = null;
    for (const e of entries) if (e.timestamp <= target) want = e;
    assert.deepEqual(index.lookup(target), want, `target ${target}`);
  }
  assert.equal(index.isFull, false);
  index.file.close();
});

test('a full time index keeps one slot for the entry written at roll', (t) => {
  const path = join(tempDir(t), '00000000000000000000.timeindex');
  const index = TimeIndex.create(path, 0, 12 * 3);
  index.maybeAppend(10, 1);
  index.maybeAppend(20, 2);
  assert.equal(index.isFull, true);
  index.maybeAppend(30, 3);
  assert.equal(index.entries, 2, 'ordinary appends stop one short');
  index.maybeAppend(30, 3, true);
  assert.equal(index.entries, 3, 'the roll entry uses the reserved slot');
  index.file.close();
});

test('a wrong cold index entry that looks well-formed is caught when used, and the index rebuilt', (t) => {
  const h = openHarness(t, { indexIntervalBytes: 0 });
  const written: Buffer[] = [];
  for (let i = 0; i < 3000; i++) written.push(h.append({ values: [Buffer.alloc(10, i)] }));
  h.reopen(true);
  // Entries 100..199 of the .index point one byte past their batches: still increasing, so no shape check
  // can tell, and far from the warm tail.
  const path = join(h.dir, '00000000000000000000.index');
  h.log.close(); // trims the preallocated index to its entries
  const bytes = readFileSync(path);
  assert.equal(bytes.length, 2999 * 8);
  for (let i = 100; i < 200; i++) bytes.writeInt32BE(bytes.readInt32BE(i * 8 + 4) + 1, i * 8 + 4);
  writeFileSync(path, bytes);
  h.reopen(true);
  for (let offset = 90; offset < 210; offset++) {
    const r = h.log.read(toOffset(offset), 1);
    assert.ok(r.errorCode === StorageErrorCode.None);
    assert.deepEqual(r.records, written[offset], `offset ${offset}`);
  }
});

test('indexes touched in one synchronous pass hold a bounded number of descriptors', (t) => {
  // A broker opening thousands of partitions at startup touches every index in one turn of the event loop; each
  // keeps its descriptor until the loop turns, but only up to a bound, past which the oldest is closed.
  const dir = tempDir(t);
  const descriptors = () => readdirSync('/proc/self/fd').length;
  const before = descriptors();
  const indexes = Array.from({ length: 1000 }, (_, i) =>
    OffsetIndex.create(join(dir, `${String(i).padStart(20, '0')}.index`), i, 8 * 100),
  );
  for (const index of indexes) index.file.flush();
  const held = descriptors() - before;
  assert.ok(held <= 300, `${held} descriptors held for 1000 indexes`);
  for (const index of indexes) index.file.close();
  assert.ok(descriptors() - before <= 2, 'closing releases them');
});

test('indexes read for lookups keep their descriptors, a bounded number of them', async (t) => {
  // A lookup in an index's cold entries keeps the descriptor open for the next lookups (consumers reading older
  // data look up in the same segments again), for the most recently looked-up indexes only.
  const dir = tempDir(t);
  const descriptors = () => readdirSync('/proc/self/fd').length;
  const before = descriptors();
  const ENTRIES = 2 * (STORAGE_LIMITS.indexWarmBytes / 8) + 100;
  const indexes = Array.from({ length: 300 }, (_, i) => {
    const index = OffsetIndex.create(join(dir, `${String(i).padStart(20, '0')}.index`), 0, 8 * ENTRIES);
    for (let e = 0; e < ENTRIES; e++) index.append(e, e * 100);
    return index;
  });
  await nextTurn();
  assert.ok(descriptors() - before <= 2, 'appends hold no descriptor past their turn');
  for (let round = 0; round < 2; round++) {
    for (const index of indexes) assert.equal(index.lookup(10)?.position, 1000, 'a cold entry');
    await nextTurn();
    const held = descriptors() - before;
    assert.ok(held >= 50 && held <= 66, `${held} descriptors kept after lookups in 300 indexes`);
  }
  for (const index of indexes) index.file.close();
  assert.ok(descriptors() - before <= 2, 'closing releases them');
});
