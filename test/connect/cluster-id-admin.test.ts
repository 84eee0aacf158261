// The admin client with which a worker looks up the Kafka cluster id (`GET /`'s kafka_cluster_id), as Kafka 3.9's
// WorkerConfig.lookupKafkaClusterId creates it from the worker config's originals: the worker's `client.id`
// names it. Seen on the wire: a proxy in front of the broker records the client id of every request; the lookup's
// DescribeCluster carries `w9`. Before the fix Brook's admin took only the worker's security keys and went as
// `adminclient-<n>`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';

test("the cluster id lookup's admin takes the worker's client.id, as Kafka's lookupKafkaClusterId", async (t) => {
  const proxy = await startBrokerBehindClientIdProxy({
    'num.partitions': 1,
    'group.initial.rebalance.delay.ms': 0,
  });
  const props = distributedWorkerProps(proxy.bootstrap, 'cluster-id', { 'client.id': 'w9' });
  const worker = await startDistributed(props, () => {}).catch(async (err) => {
    await proxy.stop();
    throw err;
  });
  t.after(async () => {
    await worker.stop();
    await proxy.stop();
  });

  const root = await rest(worker.restUrl, 'GET', '/');
  assert.equal(root.status, 200);
  assert.equal(typeof (root.body as { kafka_cluster_id: unknown }).kafka_cluster_id, 'string');
  const describing = proxy.clientIds(ApiKey.DESCRIBE_CLUSTER);
  assert.ok(describing.has('w9'), `DescribeCluster from ${[...describing].join(', ')}`);
});
