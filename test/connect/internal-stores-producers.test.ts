// The producers of a distributed worker's internal stores (config, status and offsets topics) as Kafka 3.9 builds
// them: KafkaConfigBackingStore.baseProducerProps, KafkaStatusBackingStore.configure and
// KafkaOffsetBackingStore.configure all set enable.idempotence=false ("Connect disables idempotent behavior for
// all producers"), so these producers never ask the broker for a producer id. Seen on the wire: a proxy in front
// of the broker records the client id of every request. Before the fix, each store's producer was idempotent
// (the client's default) and sent InitProducerId before its first write.
//
// The config and offsets stores' producers also retry a write for as long as a retriable error lasts (Kafka sets
// delivery.timeout.ms=Integer.MAX_VALUE there; the status store keeps the default, its own retries aside). Waiting
// out the client's two minutes is impractical, so the delivery timeout is read from the producer each store's log
// builds against the broker. Before the fix, it was the client's default of 120000 ms for all three.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import {
  internalTopicLogs,
  type KafkaBasedLog,
} from '../../src/connect/runtime/distributed/kafka-based-log.js';
import { Loggers } from '../../src/connect/runtime/loggers.js';
import { loadWorkerConfig } from '../../src/connect/runtime/worker-config.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

const STORE_PRODUCER = /-(configs|statuses|offsets)$/;

test("the config, status and offsets stores' producers are not idempotent, as Kafka's, and named as Kafka's", async (t) => {
  const proxy = await startBrokerBehindClientIdProxy({
    'num.partitions': 1,
    'group.initial.rebalance.delay.ms': 0,
  });
  const dir = mkdtempSync(join(tmpdir(), 'brook-store-producers-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const props = distributedWorkerProps(proxy.bootstrap, 'stores', { 'client.id': 'w1' });
  const worker = await startDistributed(props, () => {}).catch(async (err) => {
    await proxy.stop();
    throw err;
  });
  // One hook, in this order: the worker writes its last statuses before the broker goes.
  t.after(async () => {
    await worker.stop();
    await proxy.stop();
  });

  const input = join(dir, 'in.txt');
  writeFileSync(input, 'one\ntwo\n');
  const config = {
    'connector.class': 'FileStreamSource',
    file: input,
    topic: 'out',
    'offset.flush.interval.ms': '500',
  };
  const created = await rest(worker.restUrl, 'POST', '/connectors', { name: 'lines', config });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // The config (connector, tasks), the statuses and the offsets of both lines are written by then.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await rest(worker.restUrl, 'GET', '/connectors/lines/offsets');
    const offsets = (res.body as { offsets?: { offset: { position: number } }[] }).offsets ?? [];
    if (offsets.some((o) => o.offset.position === 8)) break;
    assert.ok(Date.now() < deadline, `offsets: ${JSON.stringify(res.body)}`);
    await sleep(300);
  }

  // Kafka's ConnectUtils.clientIdBase is `<group.id>-<client.id>-`; each store's producer and consumer add
  // `configs`, `statuses` or `offsets`, and the worker's shared admin (ConnectDistributed) creates the topics.
  const stores = ['stores-cluster-w1-configs', 'stores-cluster-w1-offsets', 'stores-cluster-w1-statuses'];
  const producing = [...proxy.clientIds(ApiKey.PRODUCE)].filter((id) => STORE_PRODUCER.test(id)).sort();
  assert.deepEqual(producing, stores, 'the store producers seen producing');
  const fetching = [...proxy.clientIds(ApiKey.FETCH)].filter((id) => STORE_PRODUCER.test(id)).sort();
  assert.deepEqual(fetching, stores, 'the store consumers seen fetching');
  const creating = proxy.clientIds(ApiKey.CREATE_TOPICS);
  assert.ok(creating.has('stores-cluster-w1-shared-admin'), `CreateTopics from ${[...creating].join(', ')}`);
  const idempotent = [...proxy.clientIds(ApiKey.INIT_PRODUCER_ID)].filter((id) => STORE_PRODUCER.test(id));
  assert.deepEqual(idempotent, [], 'no store producer asked for a producer id');
});

test("the config and offsets stores' producers wait out a retriable error as Kafka's; the status store's keeps the default", async (t) => {
  const proxy = await startBrokerBehindClientIdProxy({ 'num.partitions': 1 });
  t.after(() => proxy.stop());
  const logs = internalTopicLogs(
    loadWorkerConfig(distributedWorkerProps(proxy.bootstrap, 'timeouts'), 'distributed'),
    new Loggers(() => {}),
  );
  const deliveryTimeoutMs = async (log: KafkaBasedLog): Promise<number> => {
    await log.start();
    try {
      // The producer the log built, as the client resolved its settings.
      const { producer } = log as unknown as {
        producer: { settings: { deliveryTimeoutMs: number; idempotent: boolean } };
      };
      assert.equal(producer.settings.idempotent, false);
      return producer.settings.deliveryTimeoutMs;
    } finally {
      await log.stop();
    }
  };
  assert.equal(await deliveryTimeoutMs(logs.config(() => {})), 2_147_483_647);
  assert.equal(await deliveryTimeoutMs(logs.offsets()(() => {})), 2_147_483_647);
  assert.equal(await deliveryTimeoutMs(logs.status(() => {})), 120_000);
});

test("the config topic's transactional leader producer waits out a retriable error as Kafka's", async (t) => {
  // KafkaConfigBackingStore.fencableProducerProps starts from baseProducerProps, delivery.timeout.ms
  // Integer.MAX_VALUE included. Before the fix, the leader's producer kept the client's default of 120000 ms.
  const proxy = await startBrokerBehindClientIdProxy({ 'num.partitions': 1 });
  t.after(() => proxy.stop());
  const props = distributedWorkerProps(proxy.bootstrap, 'leader-timeout', {
    'exactly.once.source.support': 'enabled',
  });
  const log = internalTopicLogs(loadWorkerConfig(props, 'distributed'), new Loggers(() => {})).config(
    () => {},
  );
  await log.start();
  try {
    await log.claimWritePrivileges('leader-timeout-tx');
    const { fencable } = log as unknown as { fencable: { settings: { deliveryTimeoutMs: number } } };
    assert.equal(fencable.settings.deliveryTimeoutMs, 2_147_483_647);
    await log.sendTransactional([{ key: 'k', value: Buffer.from('v') }]);
    assert.ok(proxy.clientIds(ApiKey.PRODUCE).has('leader-timeout-cluster-configs-leader'));
  } finally {
    await log.stop();
  }
});
