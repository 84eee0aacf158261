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
});
