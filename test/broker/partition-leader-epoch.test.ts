// What a leader keeps of its followers when a LeaderAndIsr names it leader again, as Kafka's Partition.makeLeader
// does: at a new epoch of its own leadership (a dead follower taken out of the ISR, a preferred-leader election
// of the current leader) it keeps each follower's log end offset, restarts the caught-up time of the followers in
// the new ISR and sets it to 0 for the others; a broker that becomes leader anew knows nothing of its followers.
// Acks=all writes wait in a purgatory checked where the broker checks it: after a LeaderAndIsr is applied and
// after a follower's fetch moved the high watermark.

import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { TopicLogSettings } from '../../src/broker/config/topic-log-settings.js';
import { Purgatory } from '../../src/broker/purgatory.js';
import { Partition } from '../../src/broker/replica/partition.js';
import { type BrokerId, toOffset } from '../../src/common/ids.js';
import { openHarness } from '../storage/log-harness.js';

const LEADER = 1 as BrokerId;
const B1 = LEADER;
const B2 = 2 as BrokerId;
const B3 = 3 as BrokerId;
const LAG_TIME_MAX_MS = 10_000;
const T0 = 1_000_000;

function leaderOf(t: TestContext, isr: readonly BrokerId[]) {
  const h = openHarness(t);
  const p = new Partition('t', 0, '', h.log, LEADER, {} as TopicLogSettings);
  p.becomeLeader(5, 0, [B1, B2, B3], isr, T0);
  const append = (count: number): void => {
    for (let i = 0; i < count; i++) h.append({}, p.leaderEpoch);
    p.maybeAdvanceHighWatermark();
  };
  const purgatory = new Purgatory('produce', 10);
  t.after(() => purgatory.completeAll());
  /** Parks an acks=all write whose last offset is `lastOffset`, as the produce handler does. */
  const parkAcksAll = (lastOffset: number): { answered: boolean } => {
    const write = { answered: false };
    purgatory.tryCompleteElseWatch(
      {
        tryComplete: () => h.log.highWatermark > lastOffset,
        onComplete: (satisfied) => {
          write.answered = satisfied;
        },
      },
      [p.key],
      60_000,
    );
    return write;
  };
  /** A follower's fetch, and the purgatory check the fetch handler makes when the high watermark moved. */
  const fetch = (id: BrokerId, offset: number, nowMs: number): void => {
    if (p.recordFollowerEnd(id, offset, nowMs)) purgatory.checkAndComplete(p.key);
  };
  /** A LeaderAndIsr naming this broker leader, and the purgatory check made after one is applied. */
  const leaderAndIsr = (
    epoch: number,
    replicas: readonly BrokerId[],
    isrNow: readonly BrokerId[],
    nowMs: number,
  ): void => {
    p.becomeLeader(epoch, p.partitionEpoch + 1, replicas, isrNow, nowMs);
    purgatory.checkAndComplete(p.key);
  };
  return { p, log: h.log, append, parkAcksAll, fetch, leaderAndIsr };
}

describe('partition leader epoch bump', () => {
  it('keeps the followers of a leader that stays leader at the next epoch with the same ISR', (t) => {
    const { p, log, append, parkAcksAll, fetch, leaderAndIsr } = leaderOf(t, [B1, B2, B3]);
    append(5);
    fetch(B2, 5, T0);
    fetch(B3, 3, T0);
    assert.equal(log.highWatermark, 3, 'broker 3 has 3 records');
    const write = parkAcksAll(4);

    const bumpMs = T0 + LAG_TIME_MAX_MS - 1;
    leaderAndIsr(6, [B1, B2, B3], [B1, B2, B3], bumpMs);
    assert.equal(log.highWatermark, 3);
    assert.equal(write.answered, false);
    // Broker 2 reported the log end at epoch 5 and need not fetch again: broker 3 catching up is enough.
    fetch(B3, 5, bumpMs + 1);
    assert.equal(log.highWatermark, 5, 'broker 2 is known to hold all 5 records');
    assert.equal(write.answered, true, 'the acks=all write is answered at broker 3 fetch');

    // The followers in the ISR count as caught up from the new epoch on, not from their last fetch at epoch 5
    // (Kafka sets lastCaughtUpTimeMs to now for them).
    assert.equal(p.proposedIsr(bumpMs + LAG_TIME_MAX_MS, LAG_TIME_MAX_MS), null, 'nobody leaves the ISR');
    assert.deepEqual(p.proposedIsr(bumpMs + LAG_TIME_MAX_MS + 1, LAG_TIME_MAX_MS), [1, 3]);
  });

  it('lets the high watermark past a follower taken out of the ISR at once, and takes it back only caught up', (t) => {
    const { p, log, append, parkAcksAll, fetch, leaderAndIsr } = leaderOf(t, [B1, B2, B3]);
    append(5);
    fetch(B2, 5, T0);
    fetch(B3, 3, T0);
    const write = parkAcksAll(4);
    assert.equal(log.highWatermark, 3, 'broker 3 holds the high watermark back');

    // The controller takes broker 3 (dead for a while) out of the ISR; broker 2 has every record already.
    const bumpMs = T0 + 2 * LAG_TIME_MAX_MS;
    leaderAndIsr(6, [B1, B2, B3], [B1, B2], bumpMs);
    assert.equal(log.highWatermark, 5, 'broker 2 reported the log end at epoch 5');
    assert.equal(write.answered, true, 'the acks=all write is answered when the LeaderAndIsr is applied');

    // Broker 3 comes back and reaches the high watermark, which is where the leader's end was at its last fetch,
    // but not the log end: that makes it caught up as of its last fetch, too long ago, so it is not proposed back
    // (Kafka sets its lastCaughtUpTimeMs to 0 at the bump and keeps lastFetchTimeMs).
    append(2);
    fetch(B3, 5, bumpMs + 1);
    assert.equal(p.proposedIsr(bumpMs + 1, LAG_TIME_MAX_MS), null, 'broker 3 has not caught up since');
    assert.equal(log.highWatermark, 5, 'broker 2 holds the two new records back, broker 3 does not count');
    fetch(B3, 7, bumpMs + 2);
    assert.deepEqual(p.proposedIsr(bumpMs + 2, LAG_TIME_MAX_MS), [1, 2, 3], 'caught up, broker 3 joins');
  });

  it('counts a follower that keeps up with a busy leader as caught up, though the leader always has more', (t) => {
    const { p, append, fetch } = leaderOf(t, [B1, B2, B3]);
    append(5);
    fetch(B2, 5, T0);
    fetch(B3, 5, T0);
    // For three lag times, every fetch of broker 3 comes from where the leader's end was at its previous fetch,
    // and the leader has appended more in between; broker 2 fetches from the end each time.
    let end = 5;
    for (let nowMs = T0 + 1000; nowMs <= T0 + 3 * LAG_TIME_MAX_MS; nowMs += 1000) {
      append(2);
      fetch(B3, end, nowMs);
      end += 2;
      fetch(B2, end, nowMs);
    }
    assert.equal(
      p.proposedIsr(T0 + 3 * LAG_TIME_MAX_MS, LAG_TIME_MAX_MS),
      null,
      'broker 3 reached the leader end of its previous fetch every time: it stays in the ISR',
    );
    // Falling behind that for longer than replica.lag.time.max.ms takes it out.
    const stalledMs = T0 + 3 * LAG_TIME_MAX_MS;
    append(2);
    fetch(B2, end + 2, stalledMs + LAG_TIME_MAX_MS + 1);
    fetch(B3, end - 1, stalledMs + LAG_TIME_MAX_MS + 1);
    assert.deepEqual(p.proposedIsr(stalledMs + LAG_TIME_MAX_MS + 1, LAG_TIME_MAX_MS), [1, 2]);
  });

  it('knows nothing of its followers when it becomes leader anew: the high watermark waits for their fetches', (t) => {
    const { p, log, append, fetch, leaderAndIsr } = leaderOf(t, [B1, B2, B3]);
    append(5);
    fetch(B2, 5, T0);
    fetch(B3, 3, T0);
    assert.equal(log.highWatermark, 3);

    // Broker 3 leads epoch 6 from its log end 3; this broker and broker 2 truncate to it. Then this broker is
    // elected again: the records it appends at epoch 7 from offset 3 are not those broker 2 reported at epoch 5.
    p.becomeFollower(B3, 6, p.partitionEpoch + 1, [B1, B2, B3]);
    log.truncateTo(toOffset(3));
    leaderAndIsr(7, [B1, B2, B3], [B1, B2, B3], T0 + 100);
    append(2);
    assert.equal(log.highWatermark, 3);
    fetch(B3, 5, T0 + 101);
    assert.equal(log.highWatermark, 3, 'broker 2 has not fetched from this leader yet');
    fetch(B2, 5, T0 + 102);
    assert.equal(log.highWatermark, 5);
  });

  it('forgets a follower the next epoch removes from the replicas', (t) => {
    const { log, append, fetch, leaderAndIsr } = leaderOf(t, [B1, B2, B3]);
    append(5);
    fetch(B2, 3, T0);
    fetch(B3, 5, T0);
    assert.equal(log.highWatermark, 3);

    // A reassignment removes broker 3 (its log is deleted) and later adds it back.
    leaderAndIsr(6, [B1, B2], [B1, B2], T0 + 100);
    leaderAndIsr(7, [B1, B2, B3], [B1, B2, B3], T0 + 200);
    fetch(B2, 5, T0 + 201);
    assert.equal(log.highWatermark, 3, 'what broker 3 reported before its removal no longer counts');
    fetch(B3, 5, T0 + 202);
    assert.equal(log.highWatermark, 5);
  });
});
