// KIP-875's offsets changes on a distributed worker (exactly.once.source.support=enabled) against a broker
// process, as Kafka's DistributedHerder.modifyConnectorOffsets guards them. First, the leader reads the config
// topic to its end before it judges the connector STOPPED with no task configs (modifyConnectorOffsetsChecks'
// refreshConfigSnapshot): a stop written by another worker that the leader's follow of the config topic has not
// handed over yet still counts. Before, Brook judged on what it had read so far and answered 400 "must be in the
// STOPPED state". Second, the leader fences the zombie tasks of an exactly-once source connector before writing
// its offsets (doFenceZombieSourceTasks): a producer still holding an old task's transactional id can no longer
// commit, so it cannot overwrite the offsets just written. Before, nothing was fenced and the zombie committed.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Consumer, type ConsumerRecord, Producer } from '../../src/client/index.js';
import {
  type DistributedWorker,
  startDistributed,
} from '../../src/connect/runtime/distributed/distributed.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { distributedWorkerProps, pluginDirWith, rest } from '../helpers/connect-worker.js';
import { eventually, sleep } from '../helpers/wait.js';

const GROUP = 'offsets-safety-cluster';
const CONFIGS = 'offsets-safety-configs';
let broker: BrokerProcess;
let dir: string;
let worker: DistributedWorker | undefined;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-offsets-safety-'));
  worker = await startDistributed(
    distributedWorkerProps(broker.bootstrap, 'offsets-safety', {
      'group.id': GROUP,
      'exactly.once.source.support': 'enabled',
      'plugin.path': pluginDirWith(dir, 'counting-source'),
    }),
    () => {},
  );
});

after(async () => {
  await worker?.stop().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function states(name: string): Promise<string[]> {
  const r = await rest(worker!.restUrl, 'GET', `/connectors/${name}/status`);
  if (r.status !== 200) return [];
  const s = r.body as { connector: { state: string }; tasks: { state: string }[] };
  return [s.connector.state, ...s.tasks.map((t) => t.state)];
}

/** The values of one key in the config topic, as any consumer reads them. */
async function configRecords(key: string): Promise<string[]> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap });
  try {
    const tp = { topic: CONFIGS, partition: 0 };
    consumer.assign([tp]);
    await consumer.seekToBeginning([tp]);
    const [end] = await consumer.endOffsets([tp]);
    const out: string[] = [];
    while ((await consumer.position(tp)) < end!.offset) {
      for (const r of await consumer.poll(500)) if (r.key?.toString() === key) out.push(r.value!.toString());
    }
    return out;
  } finally {
    await consumer.close();
  }
}

/** An exactly-once CountingSource with one task, running. */
async function createRunning(name: string): Promise<void> {
  const created = await rest(worker!.restUrl, 'POST', '/connectors', {
    name,
    config: {
      'connector.class': 'test.CountingSourceConnector',
      topic: `${name}-out`,
      'tasks.max': '1',
      'poll.delay.ms': '100',
      'exactly.once.support': 'required',
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await eventually(
    async () => (await states(name)).join() === 'RUNNING,RUNNING',
    60_000,
    `${name} and its task running`,
  );
}

/**
 * Holds the worker's follow of the config topic: records written meanwhile are not handed to the herder until
 * release() (the shape of a leader whose view of the topic lags a write another worker made). The consumer,
 * its fetches and the broker are the real ones; only the loop's next poll waits.
 */
async function holdConfigFollow(): Promise<{ release(): void }> {
  const log = (worker!.herder as unknown as { configs: { log: { consumer: Consumer } } }).configs.log;
  const consumer = log.consumer;
  const poll = consumer.poll.bind(consumer);
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let entered!: () => void;
  const held = new Promise<void>((r) => {
    entered = r;
  });
  consumer.poll = async (timeoutMs?: number): Promise<ConsumerRecord[]> => {
    entered();
    await released;
    return poll(timeoutMs);
  };
  // The poll in flight when the hold was set may still return records: wait until the loop polls again.
  await held;
  return {
    release() {
      consumer.poll = poll;
      release();
    },
  };
}

test("an offsets change is judged on the config topic read to its end (Kafka's refreshConfigSnapshot)", async () => {
  await eventually(async () => worker!.herder.leaderUrl() !== null, 30_000, 'a leader');
  await createRunning('lagging');
  const hold = await holdConfigFollow();
  let released = false;
  try {
    // Another worker's stop (no task configs, then STOPPED), not yet handed to this worker's herder.
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    try {
      await producer.send({
        topic: CONFIGS,
        key: Buffer.from('commit-lagging'),
        value: Buffer.from('{"tasks":0}'),
      });
      await producer.send({
        topic: CONFIGS,
        key: Buffer.from('target-state-lagging'),
        value: Buffer.from(JSON.stringify({ state: 'PAUSED', 'state.v2': 'STOPPED' })),
      });
    } finally {
      await producer.close();
    }
    const answer = rest(worker!.restUrl, 'PATCH', '/connectors/lagging/offsets', {
      offsets: [{ partition: { task: 0 }, offset: { n: 3 } }],
    });
    // The leader may only answer once it has read the stop: after the follow goes on.
    const early = await Promise.race([answer, sleep(1500).then(() => null)]);
    hold.release();
    released = true;
    assert.equal(early, null, `answered before reading the config topic: ${JSON.stringify(early)}`);
    const altered = await answer;
    assert.equal(altered.status, 200, JSON.stringify(altered.body));
  } finally {
    if (!released) hold.release();
  }
  await eventually(async () => (await states('lagging'))[0] === 'STOPPED', 30_000, 'lagging stopped');
  const offsets = await rest(worker!.restUrl, 'GET', '/connectors/lagging/offsets');
  assert.deepEqual(offsets.body, { offsets: [{ partition: { task: 0 }, offset: { n: 3 } }] });
  assert.equal((await rest(worker!.restUrl, 'DELETE', '/connectors/lagging')).status, 204);
});

test("an exactly-once source's zombie tasks are fenced before its offsets change (Kafka's zombie fencing)", async () => {
  await eventually(async () => worker!.herder.leaderUrl() !== null, 30_000, 'a leader');
  await createRunning('fenced');
  await eventually(
    async () => (await configRecords('tasks-fencing-fenced')).length > 0,
    30_000,
    'the first task count record',
  );
  assert.equal((await rest(worker!.restUrl, 'PUT', '/connectors/fenced/stop')).status, 204);
  await eventually(async () => (await states('fenced')).join() === 'STOPPED', 30_000, 'fenced stopped');
  // A zombie: task 0 of the old generation, still running somewhere, in the middle of a transaction.
  const zombie = new Producer({ bootstrapServers: broker.bootstrap, transactionalId: `${GROUP}-fenced-0` });
  try {
    await zombie.initTransactions();
    zombie.beginTransaction();
    await zombie.send({ topic: 'fenced-out', value: Buffer.from('zombie') });
    const altered = await rest(worker!.restUrl, 'PATCH', '/connectors/fenced/offsets', {
      offsets: [{ partition: { task: 0 }, offset: { n: 7 } }],
    });
    assert.equal(altered.status, 200, JSON.stringify(altered.body));
    await assert.rejects(zombie.commitTransaction(), /fenced|epoch/i);
  } finally {
    await zombie.close().catch(() => {});
  }
  // As Kafka's fencing round, the task count of the stopped generation is recorded afterwards.
  assert.deepEqual(await configRecords('tasks-fencing-fenced'), ['{"task-count":1}', '{"task-count":0}']);
  const offsets = await rest(worker!.restUrl, 'GET', '/connectors/fenced/offsets');
  assert.deepEqual(offsets.body, { offsets: [{ partition: { task: 0 }, offset: { n: 7 } }] });
});

/** The last value of each key of the worker's offsets topic, as a read_committed consumer reads them. */
async function committedOffsets(): Promise<Map<string, string | null>> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, isolationLevel: 'read_committed' });
  try {
    const tp = { topic: 'offsets-safety-offsets', partition: 0 };
    consumer.assign([tp]);
    await consumer.seekToBeginning([tp]);
    const [end] = await consumer.endOffsets([tp]);
    const out = new Map<string, string | null>();
    while ((await consumer.position(tp)) < end!.offset) {
      for (const r of await consumer.poll(500))
        if (r.key !== null) out.set(r.key.toString(), r.value?.toString() ?? null);
    }
    return out;
  } finally {
    await consumer.close();
  }
}

test("an exactly-once source's offsets are written in a transaction of its task 0's transactional id (Kafka's Worker)", async () => {
  // Kafka's Worker.modifySourceConnectorOffsets, exactly-once enabled: the offsets go out through a producer with
  // the transactional id of the connector's task 0, so its initTransactions() fences whoever holds that id even
  // when no fencing round is due (the stopped generation was fenced by an earlier change).
  await eventually(async () => worker!.herder.leaderUrl() !== null, 30_000, 'a leader');
  await createRunning('rewound');
  assert.equal((await rest(worker!.restUrl, 'PUT', '/connectors/rewound/stop')).status, 204);
  await eventually(async () => (await states('rewound')).join() === 'STOPPED', 30_000, 'rewound stopped');
  const first = await rest(worker!.restUrl, 'PATCH', '/connectors/rewound/offsets', {
    offsets: [{ partition: { task: 0 }, offset: { n: 5 } }],
  });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const key = '["rewound",{"task":0}]';
  const zombie = new Producer({ bootstrapServers: broker.bootstrap, transactionalId: `${GROUP}-rewound-0` });
  try {
    await zombie.initTransactions();
    zombie.beginTransaction();
    await zombie.send({ topic: 'rewound-out', value: Buffer.from('zombie') });
    const altered = await rest(worker!.restUrl, 'PATCH', '/connectors/rewound/offsets', {
      offsets: [{ partition: { task: 0 }, offset: { n: 11 } }],
    });
    assert.equal(altered.status, 200, JSON.stringify(altered.body));
    // The zombie's stale offset, written after the change, must never commit over it.
    await assert.rejects(async () => {
      await zombie.send({
        topic: 'offsets-safety-offsets',
        key: Buffer.from(key),
        value: Buffer.from('{"n":1}'),
      });
      await zombie.commitTransaction();
    }, /fenced|epoch/i);
  } finally {
    await zombie.close().catch(() => {});
  }
  assert.equal((await committedOffsets()).get(key), '{"n":11}');
  const offsets = await rest(worker!.restUrl, 'GET', '/connectors/rewound/offsets');
  assert.deepEqual(offsets.body, { offsets: [{ partition: { task: 0 }, offset: { n: 11 } }] });
  // A reset goes the same way: a tombstone, committed.
  const reset = await rest(worker!.restUrl, 'DELETE', '/connectors/rewound/offsets');
  assert.equal(reset.status, 200, JSON.stringify(reset.body));
  const after = await committedOffsets();
  assert.ok(after.has(key) && after.get(key) === null, `a tombstone for ${key}: ${after.get(key)}`);
  assert.deepEqual((await rest(worker!.restUrl, 'GET', '/connectors/rewound/offsets')).body, { offsets: [] });
});
