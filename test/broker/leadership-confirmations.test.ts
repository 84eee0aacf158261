// The counting rule of leadership confirmations (broker/replica/leadership-confirmations.ts), on partitions that
// only carry the fields it reads and a manual clock. The wire test is test/cluster/deposed-leader-stable-reads.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeadershipConfirmations } from '../../src/broker/replica/leadership-confirmations.js';
import type { Partition } from '../../src/broker/replica/partition.js';
import { ManualClock } from '../../src/common/clock.js';
import type { BrokerId } from '../../src/common/ids.js';

interface FakePartition {
  key: string;
  isLeader: boolean;
  leaderId: BrokerId;
  leaderEpoch: number;
  replicas: BrokerId[];
  maximalIsr: BrokerId[];
  settings: { minInsyncReplicas: number };
}

/** Broker 0 leading replicas 0, 1, 2 with this maximal ISR and min.insync.replicas. */
function leader(isr: number[], minInsyncReplicas = 1): FakePartition {
  return {
    key: 'p-0',
    isLeader: true,
    leaderId: 0 as BrokerId,
    leaderEpoch: 5,
    replicas: [0, 1, 2] as BrokerId[],
    maximalIsr: isr as BrokerId[],
    settings: { minInsyncReplicas },
  };
}

function setup() {
  const clock = new ManualClock();
  const woken: string[] = [];
  const confirmations = new LeadershipConfirmations(clock, (key) => woken.push(key));
  const outcome = (p: FakePartition, timeoutMs = 1000) => {
    const state: { value: boolean | undefined } = { value: undefined };
    void confirmations.confirm(p as unknown as Partition, timeoutMs).then((v) => {
      state.value = v;
    });
    return state;
  };
  const fetch = (p: FakePartition, follower: number) =>
    confirmations.onFollowerFetch(p as unknown as Partition, follower as BrokerId);
  return { clock, woken, confirmations, outcome, fetch };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('leadership confirmations', () => {
  it('need two fetches of every in-sync follower, and wake the parked ones', async () => {
    const { woken, confirmations, outcome, fetch } = setup();
    const p = leader([0, 1, 2]);
    const result = outcome(p);
    assert.deepEqual(woken, ['p-0']);
    assert.ok(confirmations.shouldAnswerAtOnce('p-0', 1 as BrokerId));
    assert.ok(!confirmations.shouldAnswerAtOnce('p-1', 1 as BrokerId));
    fetch(p, 1);
    fetch(p, 2);
    fetch(p, 1);
    // Broker 1 has done its part: its fetches go back to long polls while broker 2's are still needed.
    assert.ok(!confirmations.shouldAnswerAtOnce('p-0', 1 as BrokerId));
    assert.ok(confirmations.shouldAnswerAtOnce('p-0', 2 as BrokerId));
    await settle();
    // Broker 2's first fetch may have been sent before the confirmation began.
    assert.equal(result.value, undefined);
    fetch(p, 2);
    await settle();
    assert.equal(result.value, true);
    assert.ok(!confirmations.active);
  });

  it('with min.insync.replicas 2 of 3, need one follower: a write elsewhere would need two that left', async () => {
    const { outcome, fetch } = setup();
    const p = leader([0, 1, 2], 2);
    const result = outcome(p);
    fetch(p, 2);
    await settle();
    assert.equal(result.value, undefined);
    fetch(p, 2);
    await settle();
    assert.equal(result.value, true);
  });

  it('count only replicas, and drop an ISR follower once a shrink is accepted', async () => {
    const { outcome, fetch } = setup();
    const p = leader([0, 1, 2]);
    const result = outcome(p);
    fetch(p, 3);
    fetch(p, 3);
    fetch(p, 1);
    fetch(p, 1);
    await settle();
    assert.equal(result.value, undefined);
    // The controller accepted a shrink without broker 2: it can no longer be elected.
    p.maximalIsr = [0, 1] as BrokerId[];
    fetch(p, 1);
    await settle();
    assert.equal(result.value, true);
  });

  it('fail when the time runs out or the leader epoch changes', async () => {
    const { clock, outcome, fetch, confirmations } = setup();
    const timedOut = outcome(leader([0, 1]), 500);
    clock.advance(499);
    await settle();
    assert.equal(timedOut.value, undefined);
    clock.advance(1);
    await settle();
    assert.equal(timedOut.value, false);

    const p = leader([0, 1]);
    const moved = outcome(p);
    fetch(p, 1);
    p.leaderEpoch = 6;
    fetch(p, 1);
    await settle();
    assert.equal(moved.value, false);
    assert.ok(!confirmations.active);
  });

  it('answer at once for a leader alone in its ISR or needing no follower, and for a broker that does not lead', async () => {
    const { outcome, confirmations } = setup();
    const alone = outcome(leader([0]));
    const allInsync = outcome(leader([0, 1, 2], 3));
    const follower = outcome({ ...leader([0, 1]), isLeader: false });
    await settle();
    assert.equal(alone.value, true);
    assert.equal(allInsync.value, true);
    assert.equal(follower.value, false);
    assert.ok(!confirmations.active);
  });
});
