// The persistent engine: buffered writes are visible at once, survive a reopen only once flushed, ranges merge
// the buffer with the files in byte order, and the checkpoint file round-trips in Kafka's format.

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
