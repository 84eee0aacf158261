// The reason and the action `brook topics --describe` prints for a reported partition, from what Metadata, the
// live broker list, a reassignment in progress and the controller's self-healing timeout say.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { healthFields, partitionHealth } from '../../src/cli/partition-health.js';

const live = new Set([0, 1, 2]);

test('a healthy partition has no reason and adds no fields', () => {
  const h = partitionHealth(
    { leader: 0, replicas: [0, 1, 2], isr: [0, 1, 2], offlineReplicas: [] },
    { live, minIsr: 2, selfHealingTimeoutMs: 300000 },
  );
  assert.equal(h, null);
  assert.equal(healthFields(h), '');
});

test('a gone broker: the reason names it, the action says when self-healing moves its replicas, or that it is off', () => {
  const p = { leader: 0, replicas: [0, 3, 1], isr: [0], offlineReplicas: [3] };
  const on = partitionHealth(p, { live, minIsr: 2, selfHealingTimeoutMs: 60000 })!;
  assert.match(on.reason, /broker 3 gone/);
  assert.match(on.reason, /replica 1 out of the ISR/);
  assert.match(on.reason, /ISR 1 < min.insync.replicas 2/);
  assert.doesNotMatch(on.reason, /log directory/, 'a gone broker is not a failed directory');
  assert.match(on.action, /self-healing moves the replicas of broker 3 once it has been gone 60000 ms/);
  assert.match(on.action, /waiting for the follower to catch up/);
  const off = partitionHealth(p, { live, minIsr: 2, selfHealingTimeoutMs: -1 })!;
  assert.match(off.action, /self-healing is off/);
  const unknown = partitionHealth(p, { live, minIsr: 2, selfHealingTimeoutMs: null })!;
  assert.match(unknown.action, /none reported/);
  assert.equal(healthFields(on), `\tReason: ${on.reason}\tAction: ${on.action}`);
});

test('an offline partition, a failed log directory and a move in progress', () => {
  const offline = partitionHealth(
    { leader: -1, replicas: [3, 4], isr: [3], offlineReplicas: [3, 4] },
    { live, minIsr: 1, selfHealingTimeoutMs: 1000 },
  )!;
  assert.match(offline.reason, /^no leader: no in-sync replica is alive; broker 3,4 gone/);
  const dir = partitionHealth(
    { leader: 0, replicas: [0, 1], isr: [0], offlineReplicas: [1] },
    { live, minIsr: 1, selfHealingTimeoutMs: 1000 },
  )!;
  assert.equal(dir.reason, 'log directory offline on broker 1');
  assert.match(dir.action, /stays offline until its directory is back/);
  const moving = partitionHealth(
    { leader: 0, replicas: [0, 3, 2], isr: [0], offlineReplicas: [3] },
    {
      live,
      minIsr: 2,
      selfHealingTimeoutMs: 1000,
      reassignment: { addingReplicas: [2], removingReplicas: [3] },
    },
  )!;
  assert.equal(moving.action, 'moving: adding 2, removing 3');
});
