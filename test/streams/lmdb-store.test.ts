// The persistent engine: buffered writes are visible at once, survive a reopen only once flushed, ranges merge
// the buffer with the files in byte order, restored records keep changelog order, and the checkpoint file
// round-trips in Kafka's format.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readCheckpoint, writeCheckpoint } from '../../src/streams/runtime/checkpoint.js';
import { LmdbBytesStore } from '../../src/streams/state/lmdb-store.js';
import { stateDir } from './streams-helpers.js';

const b = (s: string) => Buffer.from(s);

describe('LMDB store', () => {
  it('reads its write buffer, persists on flush, and ranges in byte order over both', () => {
    const dir = stateDir();
    try {
      const path = join(dir, 'store');
      const store = new LmdbBytesStore(path);
      assert.equal(store.reopened, false);
      store.put(b('b'), b('2'));
      store.put(b('a'), b('1'));
      assert.deepEqual(store.get(b('a')), b('1'));
      store.flush();
      store.put(b('c'), b('3'));
      store.put(b('a'), null);
      assert.equal(store.get(b('a')), null);
      assert.deepEqual(
        store.range(null, null).map((e) => e.key.toString()),
        ['b', 'c'],
      );
      assert.deepEqual(
        store.range(b('b'), b('b')).map((e) => e.value.toString()),
        ['2'],
      );
      store.close(); // flushes
      const again = new LmdbBytesStore(path);
      assert.equal(again.reopened, true);
      assert.deepEqual(
        again.range(null, null).map((e) => `${e.key}=${e.value}`),
        ['b=2', 'c=3'],
      );
      assert.equal(again.count(), 2);
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restored records are written in changelog order, seen by reads and puts, and survive a reopen', () => {
    const dir = stateDir();
    try {
      const path = join(dir, 'store');
      const store = new LmdbBytesStore(path);
      store.put(b('x'), b('0')); // buffered before the restoration: written first
      // Views into one "fetched" buffer, as the restore consumer hands them over; reused afterwards.
      const fetched = Buffer.from('k1v1k2v2k1v3');
      store.putRestored(fetched.subarray(0, 2), fetched.subarray(2, 4));
      store.putRestored(fetched.subarray(4, 6), fetched.subarray(6, 8));
      store.putRestored(fetched.subarray(8, 10), fetched.subarray(10, 12));
      store.putRestored(b('x'), null);
      assert.deepEqual(store.get(b('k1')), b('v3'), 'a later record of a key wins');
      fetched.fill(0); // written already: the store holds no view any more
      assert.deepEqual(store.get(b('k2')), b('v2'));
      assert.equal(store.get(b('x')), null);
      store.putRestored(b('k2'), b('v4'));
      store.put(b('k2'), b('v5')); // a put after restored records comes after them
      assert.deepEqual(
        store.range(null, null).map((e) => `${e.key}=${e.value}`),
        ['k1=v3', 'k2=v5'],
      );
      for (let i = 0; i < 10_050; i++) store.putRestored(b(`r${i}`), b(`${i}`));
      store.close();
      const again = new LmdbBytesStore(path);
      assert.equal(again.count(), 2 + 10_050);
      assert.deepEqual(again.get(b('r10049')), b('10049'));
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restored records of a timestamped store: the timestamp before each value, whatever their sizes', () => {
    const dir = stateDir();
    try {
      const store = new LmdbBytesStore(join(dir, 'store'));
      const expected = new Map<string, { timestamp: number; value: string }>();
      // Values of growing and shrinking sizes (past the engine's first scratch buffer), overwrites, tombstones,
      // and plain records mixed in: every stored value must be the one written for it, not a later one's bytes.
      for (let i = 0; i < 25_000; i++) {
        const key = `k${i % 7000}`;
        if (i % 11 === 0) {
          store.putRestored(b(key), null, i);
          expected.delete(key);
          continue;
        }
        const value = 'v'.repeat((i * 37) % 1500) + i;
        const timestamp = i % 5 === 0 ? 2 ** 41 + i : i;
        store.putRestored(b(key), b(value), timestamp);
        expected.set(key, { timestamp, value });
      }
      store.putRestored(b('plain'), b('as it came'), null);
      store.flush();
      assert.deepEqual(store.get(b('plain')), b('as it came'));
      assert.equal(store.count(), expected.size + 1);
      for (const [key, { timestamp, value }] of expected) {
        const stored = store.get(b(key))!;
        assert.equal(Number(stored.readBigInt64BE(0)), timestamp, key);
        assert.equal(stored.subarray(8).toString(), value, key);
      }
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checkpoint files are Kafka OffsetCheckpoint text, and a torn or foreign file reads as none', () => {
    const dir = stateDir();
    try {
      writeCheckpoint(dir, new Map([['app-store-changelog:3', 41]]));
      assert.equal(readFileSync(join(dir, '.checkpoint'), 'utf8'), '0\n1\napp-store-changelog 3 41\n');
      assert.deepEqual(readCheckpoint(dir), new Map([['app-store-changelog:3', 41]]));
      for (const bad of ['1\n1\nt 0 1\n', '0\n2\nt 0 1\n', '0\n1\nt 0 -5\n']) {
        writeFileSync(join(dir, '.checkpoint'), bad);
        assert.deepEqual(readCheckpoint(dir), new Map(), bad);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
