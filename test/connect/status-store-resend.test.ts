// A status write that fails with a retriable error is sent again by the status store itself, as Kafka 3.9's
// KafkaStatusBackingStore.send (its producer has retries=0; the callback resubmits the record unless the status
// was superseded). A delivery timeout is such an error (Kafka's TimeoutException is retriable). Seen on the wire: a
// proxy in front of the broker hides the status topic's leader in Metadata answers for longer than the worker's
// delivery.timeout.ms (an unprefixed worker key, which reaches the store's producer as in Kafka), then shows it
// again; the task's RUNNING status must still reach the broker. Before the fix the producer gave up on the
// record after delivery.timeout.ms and the status was lost. And a safe write (UNASSIGNED) answered with a retriable
// error after a later status of its key was written is not sent again; before the fix the producer retried it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { internalTopicLogs } from '../../src/connect/runtime/distributed/kafka-based-log.js';
import { StatusStore } from '../../src/connect/runtime/distributed/status-store.js';
import { Loggers } from '../../src/connect/runtime/loggers.js';
import { loadWorkerConfig } from '../../src/connect/runtime/worker-config.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { brokerBehind, startProduceProxy } from '../helpers/produce-proxy.js';
import { eventually, sleep } from '../helpers/wait.js';

test('a status write that outlives delivery.timeout.ms is sent again and lands once the topic is back', async (t) => {
  const proxy = await startProduceProxy();
  const broker = await brokerBehind(proxy, { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 });
  const dir = mkdtempSync(join(tmpdir(), 'brook-status-resend-'));
  const props = distributedWorkerProps(`127.0.0.1:${proxy.port}`, 'resend', {
    'delivery.timeout.ms': '2500',
    'request.timeout.ms': '2000',
    'linger.ms': '0',
  });
  const worker = await startDistributed(props, () => {}).catch(async (err) => {
    await broker.stop();
    await proxy.close();
    throw err;
  });
  // One hook, in this order: the worker writes its last statuses before the broker goes.
  t.after(async () => {
    proxy.hideLeader('resend-status', 0, false);
    await worker.stop();
    await broker.stop();
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /**
   * The states of the task's status records that reached the broker, in order. The task's is the status written
   * last; the connector's RUNNING, written in the generation before the task's, is given up on as superseded once
   * the task's status of a newer generation is written (Kafka's store does the same).
   */
  const statesSent = () =>
    proxy.forwarded
      .filter((b) => b.topic === 'resend-status')
      .flatMap((b) => b.keys.map((k, i) => [k, b.values[i]!] as const))
      .filter(([k]) => k === 'status-task-src-0')
      .map(([, v]) => (JSON.parse(v) as { state: string }).state);

  proxy.hideLeader('resend-status', 0);
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'a\n');
  const created = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'src',
    config: { 'connector.class': 'FileStreamSource', file: input, topic: 'resend-lines' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // The worker holds the statuses at once; their records wait for a leader, longer than the delivery timeout.
  await eventually(
    async () =>
      ((await rest(worker.restUrl, 'GET', '/connectors/src/status')).body as { tasks?: { state: string }[] })
        .tasks?.[0]?.state === 'RUNNING',
    30_000,
    'the task running',
  );
  await sleep(4_000);
  assert.deepEqual(statesSent(), [], 'nothing reached the status topic while its leader was hidden');

  proxy.hideLeader('resend-status', 0, false);
  await eventually(
    async () => statesSent().includes('RUNNING'),
    15_000,
    "the task's RUNNING status sent once the leader is back",
  );
});

test('a safe write (UNASSIGNED) that fails retriably is not sent again once a later status of its key was written', async (t) => {
  // Kafka's send callback: a putSafe status is resubmitted only while its entry's sequence is still its own.
  const proxy = await startProduceProxy();
  const broker = await brokerBehind(proxy, { 'num.partitions': 1 });
  t.after(async () => {
    await broker.stop();
    await proxy.close();
  });
  const config = loadWorkerConfig(distributedWorkerProps(`127.0.0.1:${proxy.port}`, 'safe'), 'distributed');
  const store = new StatusStore(internalTopicLogs(config, new Loggers(() => {})).status);
  await store.start();
  t.after(() => store.stop());
  const states = () =>
    proxy.forwarded
      .filter((b) => b.topic === 'safe-status')
      .flatMap((b) => b.values.map((v) => (JSON.parse(v) as { state: string }).state));

  const held = proxy.holdNext(0, false);
  const unassigned = store.putTask('c', 0, { state: 'UNASSIGNED', trace: null, workerId: 'w:1' }, 1);
  await held.caught;
  const running = store.putTask('c', 0, { state: 'RUNNING', trace: null, workerId: 'w:1' }, 1);
  // NOT_LEADER_OR_FOLLOWER: retriable, but the UNASSIGNED was replaced meanwhile.
  held.answer(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  await running;
  await unassigned;
  await sleep(500);
  assert.deepEqual(states(), ['RUNNING']);
});
