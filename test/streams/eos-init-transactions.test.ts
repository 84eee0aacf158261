// Exactly-once: a stream thread joins its group while its producer's initTransactions() waits. An instance
// restarted during a fault takes back its transactional.id (`<application.id>-<processId>-1`, the process id kept
// in its state directory), and initTransactions() waits until the transaction its last run left open is aborted,
// which takes as long as the leaders of that transaction's partitions take to answer. Here the left-open
// transaction holds a partition of a broker that is down (three brokers; the coordinators and the application's
// topics are on the two others), so the coordinator cannot write the abort marker and answers
// CONCURRENT_TRANSACTIONS. Meanwhile the instance must take its tasks (the group does not wait for it), process
// nothing (no transaction can be opened yet), and close at once when asked. Once the broker is back the marker is
// written and every input is counted exactly once. Before, the thread's first step was initTransactions(): it
// never joined the group while the broker was down, and close() waited for initTransactions' max.block.ms.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { KafkaStreams } from '../../src/streams/index.js';
import { PROCESS_METADATA_FILE } from '../../src/streams/runtime/process-id.js';
import { agreedController, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';
import {
  activeTasks,
  committedCounts,
  countByKeyTopology,
  leavingGroup,
  stateDir,
} from './streams-helpers.js';

const APP = 'init-wait';
const INPUT = 'init-wait-input';
const OUTPUT = 'init-wait-counts';
const STALLED = 'init-wait-stalled';
const KEYS = 6;
const RECORDS = 120;

/** The broker coordinating `key` (FindCoordinator key type 0 group, 1 transaction), asked until it answers. */
async function coordinatorOf(cluster: TestCluster, keyType: 0 | 1, key: string): Promise<number> {
  const b = cluster.brokers[0]!;
  const found = await waitFor(`the coordinator of ${key}`, async () => {
    const c = await WireClient.connect(b.host, b.port);
    try {
      const r = await c.call(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType, coordinatorKeys: [key] });
      return r.coordinators[0].errorCode === ErrorCode.NONE
        ? (r.coordinators[0].nodeId as number)
        : undefined;
    } finally {
      c.close();
    }
  });
  return found;
}

function countingApp(bootstrap: string, dir: string): KafkaStreams {
  return new KafkaStreams(countByKeyTopology(INPUT, OUTPUT, 'counts'), {
    'application.id': APP,
    'bootstrap.servers': bootstrap,
    'state.dir': dir,
    'processing.guarantee': 'exactly_once_v2',
    'commit.interval.ms': 100,
    'statestore.cache.max.bytes': 0,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
  });
}

describe('exactly_once_v2: initTransactions waiting on a left-open transaction', () => {
  let cluster: TestCluster | undefined;
  const dir = stateDir();

  before(async () => {
    cluster = await startCluster({
      brokers: 3,
      overrides: {
        'offsets.topic.num.partitions': 1,
        'offsets.topic.replication.factor': 1,
        'transaction.state.log.num.partitions': 1,
        'transaction.state.log.replication.factor': 1,
        'transaction.state.log.min.isr': 1,
        'group.initial.rebalance.delay.ms': 0,
      },
    });
    await agreedController(cluster.brokers);
  });

  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the thread takes its tasks and closes while it waits, and counts exactly once after', async () => {
    const c = cluster!;
    // The instance's process id, as a restarted instance finds it in its state directory.
    const processId = randomUUID();
    mkdirSync(join(dir, APP), { recursive: true });
    writeFileSync(join(dir, APP, PROCESS_METADATA_FILE), JSON.stringify({ processId }));
    const transactionalId = `${APP}-${processId}-1`;
    const busy = new Set([await coordinatorOf(c, 1, transactionalId), await coordinatorOf(c, 0, APP)]);
    const down = [0, 1, 2].find((id) => !busy.has(id))!;
    const up = [0, 1, 2].filter((id) => id !== down);
    const onUp = { 0: up, 1: [up[1]!, up[0]!] };
    const live = c.brokers[up[0]!]!;
    await createTopicOn(live, INPUT, { assignments: onUp });
    await createTopicOn(live, OUTPUT, { assignments: onUp });
    await createTopicOn(live, `${APP}-counts-changelog`, {
      assignments: onUp,
      configs: { 'cleanup.policy': 'compact' },
    });
    await createTopicOn(live, STALLED, { assignments: { 0: [down] } });
    const bootstrap = up.map((id) => c.brokers[id]!.bootstrap).join(',');

    // The last run's producer: a transaction left open on the stalled partition.
    const zombie = new Producer({ bootstrapServers: bootstrap, transactionalId });
    await zombie.initTransactions();
    zombie.beginTransaction();
    await zombie.send({ topic: STALLED, key: Buffer.from('z'), value: Buffer.from('left open') });
    await zombie.close(0);
    await c.brokers[down]!.kill();

    const producer = new Producer({ bootstrapServers: bootstrap });
    const expected = new Map<string, number>();
    try {
      await producer.sendBatch(
        Array.from({ length: RECORDS }, (_, i) => {
          const key = `k${i % KEYS}`;
          expected.set(key, (expected.get(key) ?? 0) + 1);
          return { topic: INPUT, key: Buffer.from(key), value: Buffer.from(`v${i}`) };
        }),
      );
    } finally {
      await producer.close();
    }

    const first = countingApp(bootstrap, dir);
    const firstLog: string[] = [];
    first.setLogger((m) => firstLog.push(m));
    await first.start();
    await waitUntil(
      () => activeTasks(first).length === 2,
      30_000,
      () => `tasks ${activeTasks(first).join(',')} (state ${first.state()})\n${firstLog.join('\n')}`,
    );
    await sleep(1000);
    assert.equal(
      first.processedRecords(),
      0,
      'nothing is processed before the producer can open transactions',
    );
    const closing = first.close(leavingGroup());
    const closedInTime = await Promise.race([closing.then(() => true), sleep(15_000).then(() => false)]);
    assert.ok(
      closedInTime,
      `close() returned within 15 s while initTransactions waited (state ${first.state()})`,
    );
    assert.equal((await committedCounts(bootstrap, OUTPUT, 2)).size, 0, 'no count was committed');

    // Started again (the same process id) and the broker back: the marker is written, and the counts follow.
    const second = countingApp(bootstrap, dir);
    const secondLog: string[] = [];
    second.setLogger((m) => secondLog.push(m));
    await second.start();
    try {
      await c.start(down);
      await waitUntil(
        () => second.processedRecords() >= RECORDS,
        60_000,
        () => `${second.processedRecords()} processed (state ${second.state()})\n${secondLog.join('\n')}`,
      );
      let counts = new Map<string, number[]>();
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(200)) {
        counts = await committedCounts(bootstrap, OUTPUT, 2);
        if ([...expected].every(([k, n]) => counts.get(k)?.at(-1) === n)) break;
      }
      for (const [key, n] of expected)
        assert.deepEqual(
          counts.get(key),
          Array.from({ length: n }, (_, i) => i + 1),
          `the counts of ${key}`,
        );
      assert.notEqual(second.state(), 'ERROR');
    } finally {
      await second.close();
    }
  });
});
