// The leader's high watermark over the ISR, and over an ISR change in flight: the controller may commit a
// proposed expansion and elect a replica it adds (a reassignment finishes when its targets join the ISR) before
// the leader hears the answer, so until then a write is acknowledged only once the added replicas have it too.
// And over the followers outside the ISR that are caught up and alive (Kafka's maybeIncrementLeaderHW), so that one
// reaches the high watermark and joins even while the leader keeps taking writes. Never while the committed ISR is
// below min.insync.replicas (capped at the replicas assigned), as in Kafka 3.7+ (KAFKA-15583).

import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { TopicLogSettings } from '../../src/broker/config/topic-log-settings.js';
import { type FollowerRules, Partition } from '../../src/broker/replica/partition.js';
import { systemClock } from '../../src/common/clock.js';
import type { BrokerId } from '../../src/common/ids.js';
import { openHarness } from '../storage/log-harness.js';

const LEADER = 1 as BrokerId;
const B1 = LEADER;
const B2 = 2 as BrokerId;
const B3 = 3 as BrokerId;

const LAG_TIME_MAX_MS = 10_000;

/** A leader of t-0 on the system clock, or on the harness's manual clock with `rules` when they are given. */
function leaderOf(t: TestContext, isr: readonly BrokerId[], rules?: FollowerRules) {
  const h = openHarness(t);
  const clock = rules === undefined ? systemClock : h.clock;
  const p = new Partition('t', 0, '', h.log, LEADER, {} as TopicLogSettings, clock, rules);
  p.becomeLeader(5, 0, [B1, B2, B3], isr);
  const append = (count: number): void => {
    for (let i = 0; i < count; i++) h.append({}, p.leaderEpoch);
    p.maybeAdvanceHighWatermark();
  };
  return { p, log: h.log, append, clock: h.clock };
}

describe('partition high watermark', () => {
  it('counts the replicas an ISR expansion in flight adds, until the controller answers', (t) => {
    const { p, log, append } = leaderOf(t, [LEADER]);
    append(3);
    assert.equal(log.highWatermark, 3, 'the leader alone is the ISR');
    p.recordFollowerEnd(B2, 3);
    p.recordFollowerEnd(B3, 3);
    const proposed = p.proposedIsr(Date.now(), 1000);
    assert.deepEqual(proposed, [1, 2, 3]);
    p.isrChangeSent(proposed!);
    assert.equal(p.isrChangeInFlight, true);

    // The controller may have committed [1, 2, 3] and made broker 2 the leader already: a record that only
    // this broker has is not acknowledged.
    append(2);
    assert.equal(log.highWatermark, 3, 'the replicas being added hold the high watermark back');
    p.recordFollowerEnd(B2, 5);
    assert.equal(log.highWatermark, 3);
    p.recordFollowerEnd(B3, 5);
    assert.equal(log.highWatermark, 5);

    // Accepted: the committed ISR is the proposed one.
    assert.equal(p.applyIsr([B1, B2, B3], 5, 1), false);
    assert.equal(p.isrChangeEnded(proposed!), false);
    assert.equal(p.isrChangeInFlight, false);
    append(1);
    assert.equal(log.highWatermark, 5);
  });

  it('counts the committed ISR alone again once the change is refused', (t) => {
    // The controller refuses broker 2 as ineligible: its registration is gone (this broker's metadata agrees).
    const { p, log, append, clock } = leaderOf(t, [LEADER], {
      lagTimeMaxMs: LAG_TIME_MAX_MS,
      isAlive: (id) => id !== B2,
    });
    append(2);
    p.recordFollowerEnd(B2, 2);
    const proposed = p.proposedIsr(clock.nowMs(), LAG_TIME_MAX_MS)!;
    assert.deepEqual(proposed, [1, 2]);
    p.isrChangeSent(proposed);
    append(2);
    assert.equal(log.highWatermark, 2);
    assert.equal(p.isrChangeEnded(proposed), true, 'the high watermark moves when the proposal is gone');
    assert.equal(log.highWatermark, 4);
  });

  it('waits for a caught-up follower outside the ISR, which then joins though the leader keeps writing', (t) => {
    const rules = { lagTimeMaxMs: LAG_TIME_MAX_MS, isAlive: () => true };
    const { p, log, append, clock } = leaderOf(t, [B1, B2], rules);
    append(5);
    p.recordFollowerEnd(B2, 5);
    // Broker 3, outside the ISR, fetches from the log end: caught up.
    p.recordFollowerEnd(B3, 5);
    assert.equal(log.highWatermark, 5);

    // Writes keep coming: before each ISR check the leader has more than broker 3's last fetch reached, though
    // each fetch of broker 3 reaches where the leader's end was at its previous one.
    let end = 5;
    for (let i = 0; i < 3; i++) {
      clock.advance(100);
      append(2);
      p.recordFollowerEnd(B2, end + 2);
      p.recordFollowerEnd(B3, end);
      end += 2;
      assert.equal(log.highWatermark, end - 2, 'broker 3, caught up, holds the high watermark back');
    }
    assert.deepEqual(
      p.proposedIsr(clock.nowMs(), LAG_TIME_MAX_MS),
      [1, 2, 3],
      'at the high watermark: joins',
    );
  });

  it('stops waiting for a follower outside the ISR when its caught-up time runs out, or it is not alive', (t) => {
    let alive = true;
    const rules = { lagTimeMaxMs: LAG_TIME_MAX_MS, isAlive: (id: BrokerId) => id !== B3 || alive };
    const { p, log, append, clock } = leaderOf(t, [B1, B2], rules);
    append(2);
    p.recordFollowerEnd(B2, 2);
    p.recordFollowerEnd(B3, 2);
    append(2);
    p.recordFollowerEnd(B2, 4);
    assert.equal(log.highWatermark, 2, 'broker 3 is caught up');
    clock.advance(LAG_TIME_MAX_MS + 1);
    assert.equal(p.maybeAdvanceHighWatermark(), true);
    assert.equal(log.highWatermark, 4, 'broker 3 has not been caught up for longer than the lag time');

    p.recordFollowerEnd(B3, 4);
    append(2);
    p.recordFollowerEnd(B2, 6);
    assert.equal(log.highWatermark, 4, 'caught up again');
    alive = false;
    assert.equal(p.maybeAdvanceHighWatermark(), true);
    assert.equal(log.highWatermark, 6, "broker 3's registration is gone");
  });

  it('keeps the committed ISR while a shrink is in flight', (t) => {
    const { p, log, append } = leaderOf(t, [B1, B2, B3]);
    append(2);
    p.recordFollowerEnd(B2, 2);
    p.recordFollowerEnd(B3, 1);
    assert.equal(log.highWatermark, 1);
    p.isrChangeSent([B1, B2]);
    p.recordFollowerEnd(B2, 2);
    assert.equal(log.highWatermark, 1, 'broker 3 is in the ISR until the controller says otherwise');
  });

  it('does not move while the committed ISR is below min.insync.replicas, an expansion in flight too (KAFKA-15583)', (t) => {
    const { p, log, append, clock } = leaderOf(t, [LEADER], {
      lagTimeMaxMs: LAG_TIME_MAX_MS,
      isAlive: () => true,
    });
    p.settings = { minInsyncReplicas: 2 } as TopicLogSettings;
    append(3);
    assert.equal(log.highWatermark, 0, 'the leader alone is under min ISR');
    p.recordFollowerEnd(B2, 3);
    p.recordFollowerEnd(B3, 3);
    assert.equal(log.highWatermark, 0, 'caught-up followers outside the ISR do not make up for it');
    const proposed = p.proposedIsr(clock.nowMs(), LAG_TIME_MAX_MS)!;
    assert.deepEqual(proposed, [1, 2, 3]);
    p.isrChangeSent(proposed);
    assert.equal(p.maybeAdvanceHighWatermark(), false, 'an expansion counts once the controller accepts it');
    assert.equal(p.applyIsr(proposed, 5, 1), true);
    assert.equal(log.highWatermark, 3);
  });

  it('caps min.insync.replicas at the replicas assigned: one replica under a minimum of 2 moves', (t) => {
    const { p, log, append } = leaderOf(t, [LEADER]);
    p.settings = { minInsyncReplicas: 2 } as TopicLogSettings;
    p.becomeLeader(6, 1, [LEADER], [LEADER]);
    assert.equal(p.effectiveMinIsr, 1);
    append(2);
    assert.equal(log.highWatermark, 2);
  });

  it('forgets a proposal when a LeaderAndIsr makes it leader again; a late answer to it changes nothing', (t) => {
    const { p, log, append } = leaderOf(t, [LEADER]);
    append(2);
    p.recordFollowerEnd(B2, 2);
    const proposed = p.proposedIsr(Date.now(), 1000)!;
    p.isrChangeSent(proposed);
    p.becomeLeader(6, 1, [B1, B2, B3], [LEADER]);
    assert.equal(p.isrChangeInFlight, false);
    p.recordFollowerEnd(B2, 2);
    const again = p.proposedIsr(Date.now(), 1000)!;
    p.isrChangeSent(again);
    assert.equal(p.isrChangeEnded(proposed), false, 'the newer proposal stays in flight');
    assert.equal(p.isrChangeInFlight, true);
    append(1);
    assert.equal(log.highWatermark, 2);
  });

  it('takes broker ids where broker ids go: a plain number or an offset there does not compile (branded ids)', (t) => {
    const { p, log, append } = leaderOf(t, [LEADER]);
    append(2);
    const end = log.logEndOffset;
    // Equal numbers, yet these do not compile: the build of this file fails if the brands go.
    // @ts-expect-error a plain number where a broker id goes
    p.recordFollowerEnd(2, end);
    // @ts-expect-error an offset where a broker id goes
    p.recordFollowerEnd(end, 2);
    // What the partition hands out carries its brand: the ISR it proposes goes back in as broker ids.
    const proposed = p.proposedIsr(Date.now(), 1000);
    assert.deepEqual(proposed, [1, 2]);
    p.isrChangeSent(proposed!);
    assert.equal(p.applyIsr(proposed!, 5, 1), false, 'the high watermark is at the log end already');
    assert.deepEqual(p.isr, [1, 2]);
    // Never run: the constructor, a follower's leader and the replica lists refuse plain numbers too.
    const unbranded = (): void => {
      // @ts-expect-error a plain number as the local broker id
      new Partition('t', 1, '', log, 1, {} as TopicLogSettings);
      // @ts-expect-error a plain number as the leader
      p.becomeFollower(2, 7, 2, [B1, B2, B3]);
      // @ts-expect-error plain numbers as the replicas and the ISR
      p.becomeLeader(7, 2, [1, 2, 3], [1, 2]);
    };
    assert.equal(typeof unbranded, 'function');
  });
});
