// The gauge of a returned broker's cancels not written yet (brook_controller_selfhealing_pendingcancels), scraped
// over HTTP from a real metrics endpoint whose controller is a self-healing controller on an in-process store;
// the other sources of the broker's metrics are empty. Every write of the partition's assignment fails while the
// broker returns, so its cancel waits for the 5 s retry: the gauge counts it until a retry writes it.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { CapturingLogger } from '../../src/common/logger.js';
import type { Controller } from '../../src/controller/controller.js';
import { topicPath } from '../../src/controller/zk-layout/index.js';
import type { MetricsSources } from '../../src/metrics/broker-metrics.js';
import { MetricsEndpoint } from '../../src/metrics/metrics-endpoint.js';
import { parseMetricsListener } from '../../src/metrics/metrics-listener.js';
import { scrape } from '../metrics/scrape.js';
import { FaultySession, settle } from './helpers.js';
import { createTopicT, fourBrokers, healingController, replicas } from './self-healing-setup.js';

const PENDING = 'brook_controller_selfhealing_pendingcancels';

/** A broker's metric sources with only its controller: no partitions, groups, transactions or reads. */
function controllerOnly(controller: Controller): MetricsSources {
  return {
    controller,
    replicas: { all: () => [].values(), offlineCount: 0, get: () => undefined },
    metadata: { topic: () => undefined },
    groupCoordinator: { list: () => ({ groups: [] }) },
    transactionCoordinator: { list: () => [] },
    networkStats: { requestsInFlight: 0 },
    framePool: null,
    inlineReads: { stats: { reads: 0, bytes: 0, slow: 0, turnedOff: 0 } },
    isrChanges: { shrinks: 0, expands: 0 },
    followerLags: () => [],
  } as unknown as MetricsSources;
}

test('a returned broker’s cancel that failed every attempt counts in the pendingcancels gauge until written', async () => {
  const cluster = await fourBrokers();
  const link = new FaultySession(cluster.brokers.get(1)!.session);
  const { controller, timers } = healingController(cluster, 1, {
    store: link,
    logger: new CapturingLogger(),
  });
  const listener = parseMetricsListener('http://127.0.0.1:0');
  assert.ok(listener.ok);
  const endpoint = new MetricsEndpoint(listener.value, () => ({}) as never, new CapturingLogger());
  const port = (await endpoint.start()).port;
  after(() => endpoint.stop());
  endpoint.attach(controllerOnly(controller));

  await controller.start();
  await createTopicT(cluster, controller, [[4, 1, 2]]);
  assert.equal((await scrape(port)).value(PENDING), 0);
  cluster.killBroker(4);
  await settle(controller);
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [3], 'the replica moves off broker 4');

  let failing = true;
  link.multiFault = (ops) => (failing && ops.some((op) => op.path === topicPath('t')) ? 'fail' : null);
  await cluster.addBroker(4, 'c');
  await settle(controller);
  assert.equal(timers.length, 1, 'the cancel waits for its retry');
  assert.equal((await scrape(port)).value(PENDING), 1);

  // A retry that fails again leaves it counted; one that is written ends it.
  timers.shift()!.run();
  await settle(controller);
  assert.equal((await scrape(port)).value(PENDING), 1);
  failing = false;
  timers.shift()!.run();
  await settle(controller);
  assert.deepEqual((await replicas(cluster, 0)).addingReplicas, [], 'the move is cancelled');
  const after_ = await scrape(port);
  assert.equal(after_.value(PENDING), 0);
  assert.equal(after_.value('brook_controller_selfhealing_moves', { outcome: 'cancelled' }), 1);
});
