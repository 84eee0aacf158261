// The self-healing state node (/brook_self_healing) records the registered brokers and /brokers/ids' cversion with
// every write. The controller already knows both from its own watched read of /brokers/ids: a write reads none
// of it again, and what it records is what that read saw.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeSelfHealingState, SELF_HEALING_STATE_PATH } from '../../src/controller/self-healing-state.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { BROKER_IDS_PATH } from '../../src/controller/zk-layout/index.js';
import { settle } from './helpers.js';
import { createTopicT, fourBrokers, healingController, replicas } from './self-healing-setup.js';

/** `inner`, counting every call that names /brokers/ids itself (children, exists, get, ...). */
function countingBrokerIdsReads(inner: CoordinationStore): { store: CoordinationStore; reads: () => number } {
  let reads = 0;
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (args[0] === BROKER_IDS_PATH) reads++;
        return value.apply(target, args);
      };
    },
  });
  return { store, reads: () => reads };
}

test('a self-healing state write reads nothing of /brokers/ids and records what the controller saw', async () => {
  const cluster = await fourBrokers();
  const counted = countingBrokerIdsReads(cluster.brokers.get(1)!.session);
  const { controller, timers } = healingController(cluster, 1, { store: counted.store });
  await controller.start();
  await createTopicT(cluster, controller, [[4, 1, 2]]);
  cluster.killBroker(4);
  await settle(controller);

  // The failure timer's round moves the replica and writes the state node (before the move, and after).
  const readsBefore = counted.reads();
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3], 'the replica moves off broker 4');
  assert.equal(counted.reads() - readsBefore, 0, 'reads of /brokers/ids while healing');

  const node = await cluster.observer.get(SELF_HEALING_STATE_PATH);
  assert.ok(node.ok);
  const state = decodeSelfHealingState(node.value.data);
  assert.ok(state.ok);
  const ids = await cluster.observer.exists(BROKER_IDS_PATH);
  assert.ok(ids.ok && ids.value !== null);
  assert.deepEqual(state.value.registered, { cversion: ids.value.cversion, live: [1, 2, 3] });
});
