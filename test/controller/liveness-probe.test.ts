// The liveness prober (fast failure detection): only refusals in a row make a suspect, once per broker epoch; an
// answered probe resets the count, and a probe that neither connects nor is refused (a timeout: a paused or
// unreachable broker) never counts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { LivenessProber, type ProbeResult } from '../../src/controller/liveness-probe.js';

const B1 = 1 as BrokerId;

function prober(results: ProbeResult[], epoch: { value: number }, refusalsToFence = 2) {
  const suspects: [BrokerId, number][] = [];
  const p = new LivenessProber({
    intervalMs: 1_000_000,
    refusalsToFence,
    brokers: () => [[B1, epoch.value]],
    probe: async () => results.shift() ?? 'reachable',
    onSuspect: (b, e) => suspects.push([b, e]),
  });
  return { p, suspects };
}

const settle = () => new Promise((r) => setTimeout(r, 150));

test('two refusals in a row make a suspect once, confirmed without waiting for the next round', async () => {
  const epoch = { value: 7 };
  const { p, suspects } = prober(['refused', 'refused', 'refused'], epoch);
  p.tick();
  await settle();
  assert.deepEqual(suspects, [[B1, 7]]);
  p.tick();
  await settle();
  assert.deepEqual(suspects, [[B1, 7]], 'reported once per epoch');
  // A new registration (epoch) is watched afresh.
  epoch.value = 9;
  const again = prober(['refused', 'refused'], epoch);
  again.p.tick();
  await settle();
  assert.deepEqual(again.suspects, [[B1, 9]]);
  p.stop();
  again.p.stop();
});

test('a reachable answer resets the count, and timeouts never count', async () => {
  const epoch = { value: 3 };
  const { p, suspects } = prober(['refused', 'reachable', 'unknown', 'unknown', 'unknown'], epoch);
  for (let i = 0; i < 5; i++) {
    p.tick();
    await settle();
  }
  assert.deepEqual(suspects, []);
  p.stop();
  const stopped = prober(['refused', 'refused'], epoch);
  stopped.p.stop();
  stopped.p.tick();
  await settle();
  assert.deepEqual(stopped.suspects, [], 'a stopped prober probes nothing');
});
