// KIP-279, as Kafka's Partition.makeLeader: a broker that becomes leader records where its epoch starts (its log
// end) at once, not at its first write. Without it, a follower whose last epoch this leader never wrote (records
// of the previous leader that this one lacks) got no end offset from OffsetForLeaderEpoch and truncated to its
// own high watermark, below the committed one: an ISR member dropped acknowledged records (data-plane simulation,
// seed 28). And a follower that recorded such an epoch as leader and wrote nothing in it drops the empty epoch
// when it truncates to its log end (Kafka's UnifiedLog.truncateTo), or its fetches name an epoch no leader knows.
// Both fail before the fix.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TopicLogSettings } from '../../src/broker/config/topic-log-settings.js';
import { Partition } from '../../src/broker/replica/partition.js';
import { type BrokerId, toLeaderEpoch, toOffset } from '../../src/common/ids.js';
import { openHarness } from '../storage/log-harness.js';

const B1 = 1 as BrokerId;
const B2 = 2 as BrokerId;
const B3 = 3 as BrokerId;

describe('leader epoch start offsets', () => {
  it('a new leader answers the end of an epoch it never wrote from the start of its own epoch', (t) => {
    const h = openHarness(t);
    for (let i = 0; i < 5; i++) h.append({}, 2);
    const p = new Partition('t', 0, '', h.log, B1, {} as TopicLogSettings);
    p.becomeLeader(5, 0, [B1, B2, B3], [B1, B2, B3]);
    // A follower that fetched epoch-4 records from the previous leader: the logs agree up to the end of epoch 2.
    assert.deepEqual(h.log.epochCache.endOffsetFor(toLeaderEpoch(4), h.log.logEndOffset), {
      epoch: 2,
      endOffset: 5,
    });
    assert.equal(h.log.epochCache.latestEpoch, 5);
    // Staying leader at a newer epoch records that one instead (epoch 5 holds no record: it is replaced).
    p.becomeLeader(6, 1, [B1, B2, B3], [B1, B2, B3]);
    assert.equal(h.log.epochCache.latestEpoch, 6);
    assert.deepEqual(h.log.epochCache.endOffsetFor(toLeaderEpoch(5), h.log.logEndOffset), {
      epoch: 2,
      endOffset: 5,
    });
  });

  it('truncating to the log end drops an epoch that starts there with no record in it', (t) => {
    const h = openHarness(t);
    for (let i = 0; i < 3; i++) h.append({}, 2);
    h.log.epochCache.assign(toLeaderEpoch(3), toOffset(3));
    h.log.truncateTo(toOffset(3));
    assert.equal(h.log.epochCache.latestEpoch, 2);
    assert.equal(h.log.logEndOffset, 3);
  });
});
