import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrokerId, LeaderEpoch } from '../../src/common/ids.js';
import {
  controlledShutdownLeadership,
  initialLeadership,
  type Leadership,
  type Liveness,
  preferredLeaderElection,
  reconcileLeadership,
  uncleanLeaderElection,
} from '../../src/controller/leader-election.js';
import {
  finishedLeadership,
  movingAssignment,
  movingLeadership,
  targetInSync,
  targetProblem,
} from '../../src/controller/reassignment.js';

const ids = (...xs: number[]) => xs as BrokerId[];

function liveness(alive: number[], shuttingDown: number[] = []): Liveness {
  return {
    alive: (b) => alive.includes(b),
    eligible: (b) => alive.includes(b) && !shuttingDown.includes(b),
  };
}

function led(leader: number, isr: number[], leaderEpoch = 3, leaderRecoveryState: 0 | 1 = 0): Leadership {
  return {
    leader: leader as BrokerId,
    leaderEpoch: leaderEpoch as LeaderEpoch,
    isr: ids(...isr),
    leaderRecoveryState,
  };
}

test('a new partition is led by its first live replica with all live replicas in sync', () => {
  assert.deepEqual(initialLeadership(ids(3, 1, 2), liveness([1, 2])), led(1, [1, 2], 0));
  assert.equal(initialLeadership(ids(3), liveness([1])), null);
  assert.deepEqual(
    initialLeadership(ids(1, 2), liveness([1, 2], [1])),
    led(2, [2], 0),
    'not a broker shutting down',
  );
});

test('a lost leader is replaced by the first ISR replica in assignment order; a lost follower leaves the ISR', () => {
  const replicas = ids(1, 2, 3);
  assert.deepEqual(reconcileLeadership(replicas, led(1, [1, 3, 2]), liveness([2, 3]), false), {
    kind: 'change',
    next: led(2, [3, 2], 4),
    unclean: false,
  });
  assert.deepEqual(reconcileLeadership(replicas, led(1, [1, 3]), liveness([1]), false), {
    kind: 'change',
    next: led(1, [1], 4),
    unclean: false,
  });
  assert.deepEqual(reconcileLeadership(replicas, led(1, [1, 2, 3]), liveness([1, 2, 3]), false), {
    kind: 'unchanged',
  });
});

test('without a live ISR member: leaderless keeping the last member, or an unclean leader when allowed', () => {
  const replicas = ids(1, 2, 3);
  const current = led(1, [1]);
  assert.deepEqual(reconcileLeadership(replicas, current, liveness([2, 3]), null), {
    kind: 'needsUncleanDecision',
  });
  assert.deepEqual(reconcileLeadership(replicas, current, liveness([2, 3]), false), {
    kind: 'change',
    next: led(-1, [1], 4),
    unclean: false,
  });
  assert.deepEqual(reconcileLeadership(replicas, current, liveness([3]), true), {
    kind: 'change',
    next: led(3, [3], 4, 1),
    unclean: true,
  });
  assert.deepEqual(
    reconcileLeadership(replicas, led(3, [3], 4, 1), liveness([1, 2]), false),
    { kind: 'change', next: led(-1, [3], 5, 1), unclean: false },
    'a recovering leader that dies leaves the partition recovering',
  );
  assert.deepEqual(reconcileLeadership(replicas, led(-1, [1], 4), liveness([2]), false), {
    kind: 'unchanged',
  });
  assert.deepEqual(reconcileLeadership(replicas, led(-1, [1], 4), liveness([1]), false), {
    kind: 'change',
    next: led(1, [1], 5),
    unclean: false,
  });
});

test('controlled shutdown moves leadership only to an eligible ISR member and drops a follower from the ISR', () => {
  assert.deepEqual(
    controlledShutdownLeadership(ids(1, 2, 3), led(1, [1, 2, 3]), 1 as BrokerId, liveness([1, 2, 3], [1])),
    led(2, [2, 3], 4),
  );
  assert.equal(
    controlledShutdownLeadership(ids(1, 2), led(1, [1]), 1 as BrokerId, liveness([1, 2], [1])),
    null,
  );
  assert.deepEqual(
    controlledShutdownLeadership(ids(2, 1), led(2, [2, 1]), 1 as BrokerId, liveness([1, 2], [1])),
    led(2, [2], 4),
  );
});

test('preferred and unclean ElectLeaders outcomes', () => {
  assert.deepEqual(preferredLeaderElection(ids(1, 2), led(2, [2, 1]), liveness([1, 2])), {
    ok: true,
    next: led(1, [2, 1], 4),
  });
  assert.deepEqual(preferredLeaderElection(ids(1, 2), led(1, [1, 2]), liveness([1, 2])), {
    ok: false,
    errorCode: 'ELECTION_NOT_NEEDED',
  });
  assert.deepEqual(preferredLeaderElection(ids(1, 2), led(2, [2]), liveness([1, 2])), {
    ok: false,
    errorCode: 'PREFERRED_LEADER_NOT_AVAILABLE',
  });
  assert.deepEqual(uncleanLeaderElection(ids(1, 2), led(-1, [1]), liveness([2])), {
    ok: true,
    next: led(2, [2], 4, 1),
  });
  assert.deepEqual(uncleanLeaderElection(ids(1, 2), led(-1, [1]), liveness([])), {
    ok: false,
    errorCode: 'ELIGIBLE_LEADERS_NOT_AVAILABLE',
  });
});

test('reassignment rules: the moving set, finishing, and refused targets', () => {
  const current = { replicas: ids(1, 2, 3), addingReplicas: [], removingReplicas: [] };
  const moving = movingAssignment(current, ids(4, 2, 5));
  assert.deepEqual(moving, { replicas: [4, 2, 5, 1, 3], addingReplicas: [4, 5], removingReplicas: [1, 3] });
  assert.equal(targetInSync(moving, led(1, [1, 2, 3, 4])), false);
  assert.equal(targetInSync(moving, led(1, [1, 2, 4, 5])), true);
  assert.deepEqual(
    finishedLeadership(ids(4, 2, 5), led(1, [1, 2, 4, 5]), liveness([1, 2, 3, 4, 5])),
    led(4, [2, 4, 5], 4),
  );
  // Replacing the move: 5 was being added and is dropped, so it leaves the ISR.
  const replaced = movingAssignment(moving, ids(2, 6));
  assert.deepEqual(replaced, { replicas: [2, 6, 1, 3], addingReplicas: [6], removingReplicas: [1, 3] });
  assert.deepEqual(movingLeadership(replaced, led(5, [5, 2]), liveness([2, 5, 6])), led(2, [2], 4));
  assert.equal(
    targetProblem([], [], new Set([1]))?.errorMessage,
    'Empty replica list specified in partition reassignment.',
  );
  assert.match(targetProblem([1, 1], [], new Set([1]))!.errorMessage, /Duplicate replica ids/);
  assert.match(targetProblem([1, 9], [9], new Set([1]))!.errorMessage, /not alive/);
  assert.equal(targetProblem([1], [], new Set([1])), null);
  // A replica kept on a broker that is down is no problem; only added replicas must be alive.
  assert.equal(targetProblem([1, 9], [1], new Set([1])), null);
});
