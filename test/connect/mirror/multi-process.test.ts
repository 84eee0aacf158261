// Multi-process dedicated mode (KIP-710): two `brook mirror-maker` processes on the same mm2.properties, with
// `dedicated.mode.enable.internal.rest=true`, join the flow's Connect group on the target and share the
// MirrorSourceConnector's tasks (their statuses name both processes' worker ids). One is killed with SIGKILL
// while a producer writes: the other takes every task and nothing written to the source is missing on the target.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import { sleep } from '../../helpers/wait.js';
import {
  describeStatuses,
  flowStatuses,
  startTwoProcesses,
  type UnitStatus,
  waitFor,
  withPrefix,
} from './flow-status.js';
import { type MirrorProcess, writeTwoClusterMm2 } from './mirror-process.js';

const PARTITIONS = 6;
const TASKS = 4;

let a: BrokerProcess;
let b: BrokerProcess;
let dir: string;
const mirrors: MirrorProcess[] = [];

before(async () => {
  const overrides = { 'group.initial.rebalance.delay.ms': 0 };
  [a, b] = await Promise.all([startBroker({ overrides }), startBroker({ overrides })]);
  dir = mkdtempSync(join(tmpdir(), 'brook-mirror-multi-'));
});

after(async () => {
  for (const m of mirrors) await m.stop();
  await Promise.all([a?.stop(), b?.stop()]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The latest status of every connector and task of the flow, from its status topic on the target. */
const taskStatuses = () => flowStatuses(b.bootstrap);

/** The MirrorSourceConnector tasks among them. */
async function sourceTaskStatuses(): Promise<Map<string, UnitStatus>> {
  return withPrefix(await taskStatuses(), 'status-task-MirrorSourceConnector-');
}

test('two processes share the flow; when one is killed the other takes all the work and nothing is lost', async () => {
  const admin = new Admin({ bootstrapServers: a.bootstrap });
  try {
    await admin.createTopics([{ topic: 'clicks', numPartitions: PARTITIONS, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
  const flow = { sourceBootstrap: a.bootstrap, targetBootstrap: b.bootstrap, topics: 'clicks' };
  const file = writeTwoClusterMm2(dir, flow, {
    // Connect's group settings of the flow's workers are the target cluster's keys (Kafka's workerConfig).
    'B.scheduled.rebalance.max.delay.ms': 2000,
    'B.session.timeout.ms': 6000,
    'B.heartbeat.interval.ms': 1000,
    'dedicated.mode.enable.internal.rest': true,
    listeners: 'http://127.0.0.1:0',
    'tasks.max': TASKS,
    'emit.checkpoints.interval.ms': 1000,
    'offset.flush.interval.ms': 1000,
  });

  const producer = new Producer({ bootstrapServers: a.bootstrap, lingerMs: 5 });
  let produced = 0;
  let producing = true;
  const writer = (async () => {
    while (producing) {
      await producer.sendBatch(
        Array.from({ length: 30 }, () => {
          const seq = produced++;
          return { topic: 'clicks', partition: seq % PARTITIONS, value: Buffer.from(String(seq)) };
        }),
      );
      await sleep(20);
    }
  })();

  try {
    // The second process joins once the first runs every task: the join is then a pure load-balancing round,
    // in which the first gives up half of its tasks.
    const { first, second, ids } = await startTwoProcesses(file, b.bootstrap, TASKS, mirrors);
    let statuses = new Map<string, UnitStatus>();

    // Shared: TASKS tasks running, some on each process.
    await waitFor(
      async () => {
        statuses = await sourceTaskStatuses();
        const running = [...statuses.values()].filter((s) => s.state === 'RUNNING');
        return running.length === TASKS && ids.every((id) => running.some((s) => s.worker === id));
      },
      120_000,
      () =>
        `tasks not shared by ${ids.join(' and ')}:\n${describeStatuses(statuses)}\n${first.output()}\n${second.output()}`,
    );
    process.stdout.write(`# shared:\n# ${describeStatuses(statuses).replaceAll('\n', '\n# ')}\n`);

    // The internal REST server serves the flow's internal endpoints only: an unsigned task-config hand-over
    // reaches the herder, which refuses it; Connect's public API is not there.
    const base = `http://${ids[1]!.slice(0, ids[1]!.indexOf('/'))}`;
    const unsigned = await fetch(`${base}/A/B/connectors/MirrorSourceConnector/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[]',
    });
    assert.equal(unsigned.status, 400);
    assert.match(((await unsigned.json()) as { message: string }).message, /signature/);
    assert.equal((await fetch(`${base}/connectors`)).status, 404);
    // A pair the file does not have (B->A runs here too, for its heartbeats, as in Kafka).
    assert.equal(
      (await fetch(`${base}/A/C/connectors/MirrorSourceConnector/fence`, { method: 'PUT' })).status,
      404,
    );

    await first.kill();
    // The survivor takes every task once the group has dropped the dead member (session timeout) and the
    // scheduled rebalance delay has passed.
    await waitFor(
      async () => {
        statuses = await sourceTaskStatuses();
        const running = [...statuses.values()].filter((s) => s.state === 'RUNNING' && s.worker === ids[1]);
        return running.length === TASKS;
      },
      120_000,
      () =>
        `the survivor ${ids[1]} did not take every task:\n${describeStatuses(statuses)}\n${second.output()}`,
    );
    process.stdout.write(`# after the kill:\n# ${describeStatuses(statuses).replaceAll('\n', '\n# ')}\n`);
  } finally {
    producing = false;
    await writer;
    await producer.close();
  }

  // Every record produced, before and after the kill, reaches the target (at least once).
  const consumer = new Consumer({
    bootstrapServers: b.bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const seen = new Set<string>();
  try {
    consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: 'A.clicks', partition })));
    const deadline = Date.now() + 120_000;
    while (seen.size < produced && Date.now() < deadline) {
      for (const r of await consumer.poll(500)) seen.add(r.value!.toString());
    }
  } finally {
    await consumer.close();
  }
  const missing = Array.from({ length: produced }, (_, i) => String(i)).filter((v) => !seen.has(v));
  assert.deepEqual(
    missing.slice(0, 10),
    [],
    `${missing.length} of ${produced} records missing on the target`,
  );
  process.stdout.write(`# ${produced} records, none lost\n`);
});
