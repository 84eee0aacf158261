// The generic record cache under the caching stores: eviction and flush both go least recently written first, a
// rewrite moves an id to the most recent end, and the shared thread budget counts every entry exactly once.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CacheBudget, ENTRY_OVERHEAD_BYTES, RecordCache } from '../../../src/streams/state/record-cache.js';

/** A cache of string values whose write-through records what left, in order. */
function recordingCache(budget: CacheBudget) {
  const written: string[] = [];
  const cache = new RecordCache<string>(budget, (entry) => written.push(entry));
  return { cache, written };
}

// Ids of one character and values of 10 bytes: each entry costs the same.
const entryBytes = 1 + 10 + ENTRY_OVERHEAD_BYTES;

describe('RecordCache', () => {
  it('evicts the least recently written entries when the budget is exceeded, a rewrite counting as recent', () => {
    const budget = new CacheBudget(3 * entryBytes);
    const { cache, written } = recordingCache(budget);
    cache.put('a', 'a1', 10);
    cache.put('b', 'b1', 10);
    cache.put('c', 'c1', 10);
    assert.deepEqual(written, [], 'three entries fit');
    assert.equal(budget.usedBytes, 3 * entryBytes);
    cache.put('a', 'a2', 10); // a becomes the most recent: b is now the oldest
    assert.equal(budget.usedBytes, 3 * entryBytes, 'a rewrite replaces the earlier entry in the budget');
    cache.put('d', 'd1', 10);
    assert.deepEqual(written, ['b1'], 'the least recently written entry leaves first');
    cache.put('e', 'e1', 10);
    assert.deepEqual(written, ['b1', 'c1']);
    assert.equal(cache.get('b'), undefined, 'an evicted entry is read from the store');
    assert.equal(cache.get('a'), 'a2', 'the cache holds the latest write');
    assert.equal(cache.size, 3);
    assert.equal(budget.usedBytes, 3 * entryBytes);
  });

  it('flushes every entry least recently written first and returns their bytes', () => {
    const budget = new CacheBudget(1 << 20);
    const { cache, written } = recordingCache(budget);
    for (const id of ['x', 'y', 'z']) cache.put(id, `${id}1`, 10);
    cache.put('x', 'x2', 10);
    assert.deepEqual(
      [...cache.entries()].map(([id]) => id),
      ['y', 'z', 'x'],
    );
    cache.flush();
    assert.deepEqual(written, ['y1', 'z1', 'x2']);
    assert.equal(cache.size, 0);
    assert.equal(budget.usedBytes, 0);
    cache.flush();
    assert.equal(written.length, 3, 'an empty cache writes nothing');
  });

  it('empties itself before the first write-through of a flush, so writes it causes are kept for later', () => {
    const budget = new CacheBudget(1 << 20);
    const written: string[] = [];
    const cache: RecordCache<string> = new RecordCache(budget, (entry) => {
      written.push(entry);
      if (entry === 'a1') cache.put('a', 'a2', 10); // as a downstream processor writing back into the store
    });
    cache.put('a', 'a1', 10);
    cache.put('b', 'b1', 10);
    cache.flush();
    assert.deepEqual(written, ['a1', 'b1']);
    assert.equal(cache.get('a'), 'a2');
    assert.equal(budget.usedBytes, entryBytes);
  });

  it('shares one budget among the caches of a thread: a write into one may evict from itself only', () => {
    const budget = new CacheBudget(3 * entryBytes);
    const first = recordingCache(budget);
    const second = recordingCache(budget);
    first.cache.put('a', 'a1', 10);
    first.cache.put('b', 'b1', 10);
    second.cache.put('c', 'c1', 10);
    second.cache.put('d', 'd1', 10);
    // Over budget by one entry: the cache that wrote (second) evicts its own oldest, as Kafka's ThreadCache does.
    assert.deepEqual(second.written, ['c1']);
    assert.deepEqual(first.written, []);
    assert.equal(budget.usedBytes, 3 * entryBytes);
  });

  it('writes an entry bigger than the whole budget through at once, and drop gives bytes back unwritten', () => {
    const budget = new CacheBudget(entryBytes);
    const { cache, written } = recordingCache(budget);
    cache.put('big', 'big1', 1000);
    assert.deepEqual(written, ['big1']);
    assert.equal(budget.usedBytes, 0);
    cache.put('a', 'a1', 10);
    cache.drop();
    assert.deepEqual(written, ['big1'], 'dropped entries are not written');
    assert.equal(budget.usedBytes, 0);
    assert.equal(cache.get('a'), undefined);
  });
});
