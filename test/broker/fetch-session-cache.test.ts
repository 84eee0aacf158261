import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FETCH_SESSION_ID_NOT_FOUND,
  FetchSessionCache,
  INVALID_FETCH_SESSION_EPOCH,
  type SessionPartition,
} from '../../src/broker/fetch-session-cache.js';
import { toOffset } from '../../src/common/ids.js';

function part(partition: number, fetchOffset = 0): SessionPartition {
  return {
    key: `t:${partition}`,
    topicName: 't',
    topicId: '',
    partition,
    fetchOffset: toOffset(fetchOffset),
    partitionMaxBytes: 1024,
    logStartOffset: 0,
    currentLeaderEpoch: -1,
    lastFetchedEpoch: -1,
    sentHighWatermark: -1,
    sentLastStableOffset: -1,
    sentLogStartOffset: -1,
  };
}

function cache(slots = 10, now = () => 0): FetchSessionCache {
  return new FetchSessionCache({ slots, evictionMs: 120_000, nowMs: now });
}

describe('fetch session cache (KIP-227)', () => {
  it('serves epoch -1 without a session as a sessionless fetch', () => {
    assert.deepEqual(cache().resolve(0, -1, [part(0)], [], false), { kind: 'sessionless' });
  });

  it('opens a session on epoch 0, then accepts increasing epochs and rejects a wrong one', () => {
    const c = cache();
    const opened = c.resolve(0, 0, [part(0), part(1)], [], false);
    assert.equal(opened.kind, 'full');
    const id = opened.kind === 'full' ? opened.session.id : 0;
    assert.ok(id > 0);
    const next = c.resolve(id, 1, [part(1, 50)], ['t:0'], false);
    assert.equal(next.kind, 'incremental');
    if (next.kind === 'incremental') {
      assert.deepEqual([...next.session.partitions.keys()], ['t:1']);
      assert.equal(next.session.partitions.get('t:1')!.fetchOffset, 50);
    }
    assert.deepEqual(c.resolve(id, 1, [], [], false), {
      kind: 'error',
      errorCode: INVALID_FETCH_SESSION_EPOCH,
    });
    assert.equal(c.resolve(id, 2, [], [], false).kind, 'incremental');
    assert.deepEqual(c.resolve(12345, 1, [], [], false), {
      kind: 'error',
      errorCode: FETCH_SESSION_ID_NOT_FOUND,
    });
  });

  it('closes a session on epoch -1', () => {
    const c = cache();
    const opened = c.resolve(0, 0, [part(0)], [], false);
    const id = opened.kind === 'full' ? opened.session.id : 0;
    assert.deepEqual(c.resolve(id, -1, [part(0)], [], false), { kind: 'sessionless' });
    assert.equal(c.size, 0);
  });

  it('includes a partition in an incremental response only when something changed', () => {
    const c = cache();
    const p = part(0);
    c.remember(p, 10, 10, 0);
    assert.equal(c.shouldInclude(p, false, 0, 10, 10, 0), false);
    assert.equal(c.shouldInclude(p, false, 0, 11, 11, 0), true);
    assert.equal(c.shouldInclude(p, false, 0, 11, 11, 0), false);
    assert.equal(c.shouldInclude(p, true, 0, 11, 11, 0), true);
    assert.equal(c.shouldInclude(p, false, 6, 11, 11, 0), true);
  });

  it('bounds the number of sessions and evicts only idle ones (or consumers for a follower)', () => {
    let now = 0;
    const c = cache(1, () => now);
    assert.equal(c.resolve(0, 0, [part(0)], [], false).kind, 'full');
    assert.equal(c.resolve(0, 0, [part(0)], [], false).kind, 'sessionless', 'full cache: no new session');
    assert.equal(c.resolve(0, 0, [part(0)], [], true).kind, 'full', 'a follower evicts a consumer session');
    now = 200_000;
    assert.equal(c.resolve(0, 0, [part(0)], [], false).kind, 'full', 'an idle session is evicted');
    assert.equal(c.size, 1);
  });

  /** Opens a session of `partitions` partitions; its id, or 0 when the cache gave none. */
  const open = (c: FetchSessionCache, partitions: number, privileged: boolean): number => {
    const r = c.resolve(
      0,
      0,
      Array.from({ length: partitions }, (_, i) => part(i)),
      [],
      privileged,
    );
    return r.kind === 'full' ? r.session.id : 0;
  };
  const alive = (c: FetchSessionCache, id: number, epoch: number): boolean =>
    c.resolve(id, epoch, [], [], false).kind === 'incremental';

  it("evicts by Kafka's worth: a follower takes the smallest consumer session, even a new one", () => {
    const c = cache(2);
    // The larger session is the least recently used: size, not age, decides.
    const big = open(c, 5, false);
    const small = open(c, 1, false);
    assert.ok(open(c, 1, true) > 0, 'a follower evicts a consumer at once');
    assert.equal(alive(c, small, 1), false, 'the smaller consumer session went');
    assert.equal(alive(c, big, 1), true);
  });

  it("never lets a consumer evict a follower's session in use, however large the consumer's", () => {
    let now = 0;
    const c = cache(2, () => now);
    const follower = open(c, 1, true);
    const consumer = open(c, 1, false);
    now = 130_000;
    assert.equal(alive(c, follower, 1), true);
    assert.equal(alive(c, consumer, 1), true);
    assert.ok(open(c, 50, false) > 0, 'the settled consumer session is evicted');
    assert.equal(alive(c, consumer, 2), false);
    assert.equal(open(c, 100, false), 0, 'the follower session is not, nor the new consumer one');
    assert.equal(alive(c, follower, 2), true);
  });

  it('lets a larger follower session evict a settled smaller follower session, not a new one', () => {
    let now = 0;
    const c = cache(1, () => now);
    const follower = open(c, 2, true);
    assert.equal(open(c, 3, true), 0, 'too new to be evicted');
    now = 121_000;
    assert.equal(alive(c, follower, 1), true);
    assert.equal(open(c, 2, true), 0, 'not worth more');
    assert.ok(open(c, 3, true) > 0);
  });
});
