// The in-memory engine keys its map by latin1 strings and keeps no key Buffers: ranges must still come out in
// the keys' byte order (bytes above 0x7f, prefixes, empty bounds), return keys equal to what was put, and
// restored changelog records must leave the last value of each key, deletes applied.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemoryBytesStore } from '../../../src/streams/state/bytes-store.js';
import { restoreInto } from '../../../src/streams/state/store-stack.js';

const hex = (b: Buffer) => b.toString('hex');

describe('in-memory bytes store', () => {
  it('ranges in byte order over keys with high bytes and prefixes, bounds inclusive', () => {
    const store = new InMemoryBytesStore();
    const keys = ['ff', '7f', '80', '00', '0000', '7fff', 'c3a9', 'ff00'];
    for (const k of keys) store.put(Buffer.from(k, 'hex'), Buffer.from(`v${k}`));
    const expected = keys
      .map((k) => Buffer.from(k, 'hex'))
      .sort(Buffer.compare)
      .map(hex);
    assert.deepEqual(
      store.range(null, null).map((e) => hex(e.key)),
      expected,
    );
    assert.deepEqual(
      store.range(Buffer.from('7f', 'hex'), Buffer.from('c3a9', 'hex')).map((e) => hex(e.key)),
      ['7f', '7fff', '80', 'c3a9'],
    );
    assert.deepEqual(
      store.range(Buffer.from('ff', 'hex'), null).map((e) => hex(e.key)),
      ['ff', 'ff00'],
    );
    assert.deepEqual(
      store.range(null, Buffer.from('00', 'hex')).map((e) => hex(e.key)),
      ['00'],
    );
    for (const e of store.range(null, null)) assert.equal(e.value.toString(), `v${hex(e.key)}`);
  });

  it("keeps no reference to the caller's key Buffer", () => {
    const store = new InMemoryBytesStore();
    const key = Buffer.from('abc');
    store.put(key, Buffer.from('1'));
    key.fill(0x7a); // the caller reuses its buffer
    assert.deepEqual(store.get(Buffer.from('abc')), Buffer.from('1'));
    assert.equal(store.get(Buffer.from('zzz')), null);
    assert.deepEqual(
      store.range(null, null).map((e) => e.key.toString()),
      ['abc'],
    );
  });

  it('restored records: a later value of a key wins, a tombstone deletes, timestamps prefix the value', () => {
    const store = new InMemoryBytesStore();
    // Views into one "fetched" buffer, as the restore consumer hands them over.
    const fetched = Buffer.from('k1v1k2v2k1v3k3v4');
    const view = (i: number) => fetched.subarray(i * 2, i * 2 + 2);
    restoreInto(store, true, view(0), view(1), 1);
    restoreInto(store, true, view(2), view(3), 2);
    restoreInto(store, true, view(4), view(5), 3);
    restoreInto(store, true, view(6), view(7), 2 ** 40 + 5);
    restoreInto(store, true, view(2), null, 4);
    fetched.fill(0); // the store copied what it keeps
    assert.equal(store.count(), 2);
    const k1 = store.get(Buffer.from('k1'))!;
    assert.equal(k1.readBigInt64BE(0), 3n);
    assert.equal(k1.subarray(8).toString(), 'v3');
    assert.equal(store.get(Buffer.from('k2')), null);
    const k3 = store.get(Buffer.from('k3'))!;
    assert.equal(k3.readBigInt64BE(0), BigInt(2 ** 40 + 5));
    assert.equal(k3.subarray(8).toString(), 'v4');
  });
});
