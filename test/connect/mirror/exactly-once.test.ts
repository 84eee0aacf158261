// Exactly-once mirroring (KIP-618 in dedicated mode, `<target>.exactly.once.source.support=enabled` as Kafka 3.5+
// reads it): a producer writes to the source throughout; the mirror process is killed with SIGKILL mid-copy and
// started again. Read read_committed, the target topic then holds every source record exactly once. The same run
// with exactly-once off copies again what the killed process had copied since its last offset flush: the test
// sees those duplicates, so it can fail.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import { sleep } from '../../helpers/wait.js';
import { type MirrorProcess, mirrorStatus, startMirrorMaker, writeTwoClusterMm2 } from './mirror-process.js';

const PARTITIONS = 3;
/** Records written before the upgrade test's exactly-once step (values 0..n-1). */
const PRE_UPGRADE_RECORDS = 2000;

let a: BrokerProcess;
let b: BrokerProcess;
let dir: string;
const mirrors: MirrorProcess[] = [];

before(async () => {
  const overrides = { 'group.initial.rebalance.delay.ms': 0 };
  [a, b] = await Promise.all([startBroker({ overrides }), startBroker({ overrides })]);
  dir = mkdtempSync(join(tmpdir(), 'brook-mirror-eos-'));
});

after(async () => {
  for (const m of mirrors) await m.stop();
  await Promise.all([a?.stop(), b?.stop()]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/**
 * A flow from alias `source` (cluster a) to `T` (cluster b) of one topic, exactly once (`true`: `enabled`), not,
 * or in the first step of a rolling upgrade (`'preparing'`).
 */
function mm2(source: string, topic: string, exactlyOnce: boolean | 'preparing'): string {
  const flow = {
    source,
    target: 'T',
    sourceBootstrap: a.bootstrap,
    targetBootstrap: b.bootstrap,
    topics: topic,
  };
  return writeTwoClusterMm2(dir, flow, {
    ...(exactlyOnce === 'preparing'
      ? { 'T.exactly.once.source.support': 'preparing' }
      : exactlyOnce
        ? { 'T.exactly.once.source.support': 'enabled' }
        : {}),
    'dedicated.mode.enable.internal.rest': true,
    listeners: 'http://127.0.0.1:0',
    'source.consumer.isolation.level': 'read_committed',
    'emit.heartbeats.enabled': false,
    'emit.checkpoints.enabled': false,
    // No offset flush while the test runs: without exactly-once, what was copied before the kill is copied again.
    'offset.flush.interval.ms': 600_000,
  });
}

/** Writes unique values `<n>` to `topic` (partition n % PARTITIONS) until stopped; resolves to the count. */
function produceContinuously(topic: string, from = 0): { stop: () => Promise<number> } {
  const producer = new Producer({ bootstrapServers: a.bootstrap, lingerMs: 5 });
  let n = from;
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const batch = Array.from({ length: 100 }, () => {
        const seq = n++;
        return { topic, partition: seq % PARTITIONS, value: Buffer.from(String(seq)) };
      });
      await producer.sendBatch(batch);
      await sleep(5);
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      await producer.close();
      return n;
    },
  };
}

/** Polls an async condition every 200 ms until it holds, failing after `timeoutMs` with `describe()`. */
async function waitFor(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting:\n${describe()}`);
    await sleep(200);
  }
}

async function endOffsetSum(bootstrap: string, topic: string): Promise<number> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    const ends = await admin.listOffsets(
      Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, spec: 'latest' as const })),
    );
    return ends.reduce((s, o) => s + Math.max(0, o.offset), 0);
  } catch {
    return 0;
  } finally {
    await admin.close();
  }
}

/**
 * Reads `topic` on the target read_committed from the start: first until `count` distinct values arrived, then
 * (after `settle`, which stops the mirror cleanly) on to the partitions' end offsets. Returns each value's count.
 */
async function readCommitted(
  topic: string,
  count: number,
  settle: () => Promise<void>,
): Promise<Map<string, number>> {
  const consumer = new Consumer({
    bootstrapServers: b.bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
    isolationLevel: 'read_committed',
  });
  const tps = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition }));
  const seen = new Map<string, number>();
  const take = async () => {
    for (const r of await consumer.poll(500)) {
      const v = r.value!.toString();
      seen.set(v, (seen.get(v) ?? 0) + 1);
    }
  };
  try {
    consumer.assign(tps);
    const deadline = Date.now() + 180_000;
    while (seen.size < count) {
      assert.ok(Date.now() < deadline, `only ${seen.size} of ${count} records reached the target`);
      await take();
    }
    await settle();
    // Nothing is written any more: the end offsets are final (no transaction is left open after a clean stop).
    const ends = await consumer.endOffsets(tps);
    const end = new Map(ends.map((e) => [e.partition, e.offset]));
    const readDeadline = Date.now() + 60_000;
    for (;;) {
      const positions = await Promise.all(tps.map((tp) => consumer.position(tp)));
      if (positions.every((p, i) => p >= end.get(i)!)) break;
      assert.ok(Date.now() < readDeadline, `never read to the end: ${positions} of ${[...end.values()]}`);
      await take();
    }
  } finally {
    await consumer.close();
  }
  return seen;
}

/**
 * Mirrors `topic` while it is written to, kills the mirror with SIGKILL mid-copy, restarts it; counts copies.
 * `before` runs first, once the topic exists (the upgrade test's preparing step).
 */
async function killMidCopy(
  source: string,
  topic: string,
  exactlyOnce: boolean,
  before: (() => Promise<void>) | null = null,
): Promise<{ produced: number; copies: Map<string, number>; output: string }> {
  const admin = new Admin({ bootstrapServers: a.bootstrap });
  try {
    await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
  await before?.();
  const producer = produceContinuously(topic, before === null ? 0 : PRE_UPGRADE_RECORDS);
  const file = mm2(source, topic, exactlyOnce);
  const first = await startMirrorMaker(file);
  mirrors.push(first);
  const remote = `${source}.${topic}`;
  // Mid-copy: a good part is on the target (committed or not) and the producer is still writing.
  await waitFor(async () => (await endOffsetSum(b.bootstrap, remote)) >= 3000, 120_000, first.output);
  await first.kill();
  const second = await startMirrorMaker(file);
  mirrors.push(second);
  // The restarted mirror copies while the producer still writes, then the producer stops.
  const base = await endOffsetSum(b.bootstrap, remote);
  await waitFor(async () => (await endOffsetSum(b.bootstrap, remote)) > base + 1000, 120_000, second.output);
  const produced = await producer.stop();
  const copies = await readCommitted(remote, produced, async () => {
    assert.equal(await second.stop(), 0, second.output());
  });
  return { produced, copies, output: second.output() };
}

test('exactly once: SIGKILL mid-copy and a restart leave every source record once on the target', async () => {
  const { produced, copies, output } = await killMidCopy('EOS', 'orders', true);
  const twice = [...copies.values()].filter((n) => n > 1).length;
  for (let i = 0; i < produced; i++) assert.ok(copies.has(String(i)), `record ${i} missing`);
  assert.equal(copies.size, produced, 'no value that was not produced');
  assert.equal(twice, 0, `${twice} of ${produced} records copied more than once\n${output}`);
  process.stdout.write(`# exactly once: ${produced} records, none twice\n`);
});

test('at least once (exactly-once off): the same kill copies records twice, which the check above catches', async () => {
  const { produced, copies } = await killMidCopy('ALO', 'payments', false);
  for (let i = 0; i < produced; i++) assert.ok(copies.has(String(i)), `record ${i} missing`);
  const twice = [...copies.values()].filter((n) => n > 1).length;
  assert.ok(twice > 0, 'without transactions the records copied before the kill are copied again');
  process.stdout.write(`# at least once: ${twice} of ${produced} records copied twice\n`);
});

test('rolling upgrade: a preparing step, then exactly once from the offsets it stored', async () => {
  const source = 'UPG';
  const topic = 'invoices';
  const preparing = async () => {
    const producer = new Producer({ bootstrapServers: a.bootstrap, lingerMs: 5 });
    try {
      await producer.sendBatch(
        Array.from({ length: PRE_UPGRADE_RECORDS }, (_, i) => ({
          topic,
          partition: i % PARTITIONS,
          value: Buffer.from(String(i)),
        })),
      );
    } finally {
      await producer.close();
    }
    // Step one: every worker of the flow on `preparing` (the leader already writes configs through a fencable
    // producer; tasks do not use transactions yet).
    const file = mm2(source, topic, 'preparing');
    const first = await startMirrorMaker(file);
    mirrors.push(first);
    // Everything copied, the process stops cleanly (SIGTERM), storing its position: lag 0 on every partition.
    await waitFor(
      async () => (await endOffsetSum(b.bootstrap, `${source}.${topic}`)) >= PRE_UPGRADE_RECORDS,
      120_000,
      first.output,
    );
    assert.equal(await first.stop(), 0, first.output());
    const status = mirrorStatus(file);
    const rows = status.split('\n').filter((l) => l.startsWith(`${source}->T `));
    assert.equal(rows.length, PARTITIONS, status);
    for (const row of rows) assert.match(row.trim(), /\s0$/, status);
  };
  // Step two: `enabled`; the exactly-once tasks start from the preparing step's offsets and survive SIGKILL.
  const { produced, copies, output } = await killMidCopy(source, topic, true, preparing);
  const twice = [...copies.values()].filter((n) => n > 1).length;
  for (let i = 0; i < produced; i++) assert.ok(copies.has(String(i)), `record ${i} missing`);
  assert.equal(copies.size, produced, 'no value that was not produced');
  assert.equal(twice, 0, `${twice} of ${produced} records copied more than once\n${output}`);
  process.stdout.write(
    `# upgrade: ${PRE_UPGRADE_RECORDS} records in the preparing step, ${produced} in all, none twice\n`,
  );
});
