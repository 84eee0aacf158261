// Which followers a leader proposes to add to the ISR (Kafka's Partition.isFollowerInSync): a follower joins once
// its log end has reached both the high watermark and the offset the leader started its current epoch at
// (KAFKA-7128). A new leader's high watermark moves only once its ISR fetches from it, so it can be behind what
// the previous leader had committed; a follower that reached only that high watermark may lack committed records,
// and if it joined the ISR it could be elected leader without them. Both tests fail without the epoch start rule.
//
// A real Partition over a real log; fetches are recordFollowerEnd calls with explicit times.

import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { TopicLogSettings } from '../../src/broker/config/topic-log-settings.js';
import { Partition } from '../../src/broker/replica/partition.js';
import { type BrokerId, toOffset } from '../../src/common/ids.js';
import { openHarness } from '../storage/log-harness.js';

const B1 = 1 as BrokerId;
const B2 = 2 as BrokerId;
const B3 = 3 as BrokerId;
const LAG_TIME_MAX_MS = 10_000;
const T0 = 1_000_000;

/** A log of `records` records written at epoch 4 by another leader, of which this broker heard `highWatermark`. */
function followerLog(t: TestContext, records: number, highWatermark: number) {
  const h = openHarness(t);
  for (let i = 0; i < records; i++) h.append({}, 4);
  h.log.setHighWatermark(toOffset(highWatermark));
  return h;
}

describe('ISR expansion', () => {
  it('a new leader whose high watermark lags takes a follower in only once it reached the epoch start', (t) => {
    // Broker 1 followed the leader of epoch 4 and has its 10 records, but heard a high watermark of 6 only:
    // the previous leader may have acknowledged up to 10 already.
    const h = followerLog(t, 10, 6);
    const p = new Partition('t', 0, '', h.log, B1, {} as TopicLogSettings);
    p.becomeLeader(5, 1, [B1, B2, B3], [B1, B2], T0);
    assert.equal(h.log.highWatermark, 6, 'broker 2, in the ISR, has not fetched from this leader yet');

    // Broker 3, outside the ISR, fetched the log end once; then its fetches come from offset 7: it restarted
    // and lost the tail it had not flushed, on a fetch without its broker epoch (before Fetch v15, or a topic
    // without an id), so nothing tells this leader it is another incarnation.
    p.recordFollowerEnd(B3, 10, T0 + 1);
    p.recordFollowerEnd(B3, 7, T0 + 2);
    assert.equal(
      p.proposedIsr(T0 + 3, LAG_TIME_MAX_MS),
      null,
      'broker 3 is past the high watermark (6) but lacks records 7 to 9, which may be committed',
    );

    // Once it has fetched them again it joins.
    p.recordFollowerEnd(B3, 10, T0 + 4);
    assert.deepEqual(p.proposedIsr(T0 + 5, LAG_TIME_MAX_MS), [B1, B2, B3]);
  });

  it('a leader elected again at a new epoch takes a follower in only once it reached the new epoch start', (t) => {
    const h = followerLog(t, 0, 0);
    const p = new Partition('t', 0, '', h.log, B1, {} as TopicLogSettings);
    p.becomeLeader(5, 1, [B1, B2, B3], [B1, B2], T0);
    for (let i = 0; i < 8; i++) h.append({}, 5);
    p.recordFollowerEnd(B2, 8, T0 + 1);
    // Broker 3 fetches from the log end (8) and is caught up; before the next ISR check, two more records come.
    p.recordFollowerEnd(B3, 8, T0 + 1);
    for (let i = 0; i < 2; i++) h.append({}, 5);
    p.maybeAdvanceHighWatermark();

    // The controller elects this broker again at epoch 6 (a preferred-leader election): the epoch starts at 10.
    p.becomeLeader(6, 2, [B1, B2, B3], [B1, B2], T0 + 2);
    p.recordFollowerEnd(B3, 8, T0 + 3);
    assert.equal(h.log.highWatermark, 8, 'broker 2 has only 8 records');
    assert.equal(
      p.proposedIsr(T0 + 4, LAG_TIME_MAX_MS),
      null,
      'broker 3 reached the high watermark, not where epoch 6 starts',
    );
    p.recordFollowerEnd(B3, 10, T0 + 5);
    assert.deepEqual(p.proposedIsr(T0 + 6, LAG_TIME_MAX_MS), [B1, B2, B3]);
  });
});
