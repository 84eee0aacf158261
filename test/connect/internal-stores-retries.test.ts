// A worker-level `retries` reaches the producers of the config and offsets stores, as Kafka 3.9's
// KafkaConfigBackingStore.baseProducerProps and KafkaOffsetBackingStore.configure start them from the worker's
// originals and force only what they need (KafkaBasedLog: acks=all, one request in flight; the stores: no
// idempotence, delivery.timeout.ms=Integer.MAX_VALUE), `retries` not among it; the status store forces retries=0
// whatever the worker says. Seen on the wire: a proxy in front of the broker answers the config write of
// `POST /connectors` with a retriable error (NOT_ENOUGH_REPLICAS) without the broker seeing it. With the worker's
// retries=0 the config producer does not send it again and the request fails, as Kafka's does (500).
//
// Before the fix Brook's client had no `retries` key: the producer kept retrying, the record was written on the
// second attempt and the connector was created (201).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { brokerBehind, startProduceProxy } from '../helpers/produce-proxy.js';
import { sleep } from '../helpers/wait.js';

test("a worker's retries=0 reaches the config store's producer: a write refused once is not sent again", async (t) => {
  const proxy = await startProduceProxy();
  const broker = await brokerBehind(proxy, { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 });
  const props = distributedWorkerProps(`127.0.0.1:${proxy.port}`, 'retries', { retries: '0' });
  const worker = await startDistributed(props, () => {}).catch(async (err) => {
    await broker.stop();
    await proxy.close();
    throw err;
  });
  // One hook, in this order: the worker writes its last statuses before the broker goes.
  t.after(async () => {
    await worker.stop();
    await broker.stop();
    await proxy.close();
  });

  const configWrites = () => proxy.forwarded.filter((b) => b.topic === 'retries-configs').length;
  const before = configWrites();
  // The worker is idle: the next Produce to a partition 0 is the connector config's (one partition per topic).
  const held = proxy.holdNext(0, false);
  const created = rest(worker.restUrl, 'POST', '/connectors', {
    name: 'refused',
    config: { 'connector.class': 'FileStreamSource', file: '/dev/null', topic: 'retries-out' },
  });
  await held.caught;
  held.answer(ErrorCode.NOT_ENOUGH_REPLICAS);
  const res = await created;
  assert.equal(res.status, 500, JSON.stringify(res.body));
  await sleep(1_000);
  assert.equal(configWrites(), before, 'the refused config write was not sent again');
});
