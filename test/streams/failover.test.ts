// Fault test with two application instances (two processes) sharing the tasks of a word count: one is killed
// with SIGKILL while it processes; the other takes its tasks over, restores their counts from the changelog and
// finishes. With at_least_once nothing may be lost: every count reaches at least the reference (records
// processed after the killed instance's last commit are processed again, so a count may exceed it).

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { seeded, stateDir, TopicFollower } from './streams-helpers.js';

const PARTITIONS = 4;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
const APP = join(import.meta.dirname, 'fixtures', 'word-count-app.js');

function instance(
  bootstrap: string,
  dir: string,
  env: Record<string, string> = {},
): { child: ChildProcess; running: Promise<void>; output: () => string } {
  const child = spawn(process.execPath, [APP], {
    env: { ...process.env, BOOTSTRAP: bootstrap, STATE_DIR: dir, APP_ID: 'wc-failover', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const running = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      if (d.toString().includes('running')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`instance exited with ${code}`)));
  });
  running.catch(() => {});
  return { child, running, output: () => output };
}

describe('two instances, one killed', () => {
  let broker: BrokerProcess;
  const dirs = [stateDir(), stateDir(), stateDir(), stateDir()];
  const children: ChildProcess[] = [];

  before(async () => {
    broker = await startBroker();
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    await admin.createTopics([
      { topic: 'text-lines', numPartitions: PARTITIONS, replicationFactor: 1 },
      { topic: 'word-counts', numPartitions: PARTITIONS, replicationFactor: 1 },
      { topic: 'sb-lines', numPartitions: PARTITIONS, replicationFactor: 1 },
      { topic: 'sb-word-counts', numPartitions: PARTITIONS, replicationFactor: 1 },
    ]);
    await admin.close();
  });

  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await broker?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the survivor takes the tasks over, restores them and loses nothing (at_least_once)', async () => {
    const bootstrap = broker.bootstrap;
    const random = seeded(99);
    const lines = Array.from({ length: 1500 }, () =>
      Array.from(
        { length: 1 + Math.floor(random() * 5) },
        () => WORDS[Math.floor(random() * WORDS.length)]!,
      ).join(' '),
    );
    const expected = new Map<string, number>();
    for (const l of lines) for (const w of l.split(' ')) expected.set(w, (expected.get(w) ?? 0) + 1);
    const producer = new Producer({ bootstrapServers: bootstrap });
    const send = (from: number, to: number) =>
      producer.sendBatch(
        lines
          .slice(from, to)
          .map((l, i) => ({ topic: 'text-lines', key: Buffer.from(`l${from + i}`), value: Buffer.from(l) })),
      );
    const follower = new TopicFollower(bootstrap, 'word-counts', PARTITIONS);
    follower.start();
    try {
      const a = instance(bootstrap, dirs[0]!);
      const b = instance(bootstrap, dirs[1]!);
      children.push(a.child, b.child);
      await Promise.all([a.running, b.running]);
      await send(0, 500);
      await waitUntil(
        () => follower.records.length > 300,
        60_000,
        () => `${follower.records.length} counts`,
      );
      await send(500, 1000);
      a.child.kill('SIGKILL'); // while it processes
      await send(1000, 1500);
      await waitUntil(
        () => [...expected].every(([w, n]) => Number(follower.latest.get(w)?.readBigInt64BE(0) ?? -1) >= n),
        90_000,
        () =>
          `counts ${JSON.stringify([...follower.latest].map(([k, v]) => [k, v === null ? null : Number(v.readBigInt64BE(0))]))}, expected at least ${JSON.stringify([...expected])}`,
      );
      assert.equal(b.child.exitCode, null, 'the survivor stopped');
      b.child.kill('SIGTERM');
    } finally {
      await follower.stop();
      await producer.close();
    }
  });

  it('with num.standby.replicas 1 the survivor of a SIGKILL restores only what its standbys lacked', async () => {
    const bootstrap = broker.bootstrap;
    const random = seeded(7);
    const lines = Array.from({ length: 1500 }, () =>
      Array.from(
        { length: 1 + Math.floor(random() * 5) },
        () => WORDS[Math.floor(random() * WORDS.length)]!,
      ).join(' '),
    );
    const countsAfter = (n: number) => {
      const m = new Map<string, number>();
      for (const l of lines.slice(0, n)) for (const w of l.split(' ')) m.set(w, (m.get(w) ?? 0) + 1);
      return m;
    };
    const producer = new Producer({ bootstrapServers: bootstrap });
    const send = (from: number, to: number) =>
      producer.sendBatch(
        lines
          .slice(from, to)
          .map((l, i) => ({ topic: 'sb-lines', key: Buffer.from(`l${from + i}`), value: Buffer.from(l) })),
      );
    const follower = new TopicFollower(bootstrap, 'sb-word-counts', PARTITIONS);
    const reached = (expected: Map<string, number>) => () =>
      [...expected].every(([w, n]) => Number(follower.latest.get(w)?.readBigInt64BE(0) ?? -1) >= n);
    const env = { APP_ID: 'wc-standby', INPUT: 'sb-lines', OUTPUT: 'sb-word-counts', STANDBY_REPLICAS: '1' };
    follower.start();
    try {
      const a = instance(bootstrap, dirs[2]!, env);
      const b = instance(bootstrap, dirs[3]!, env);
      children.push(a.child, b.child);
      await Promise.all([a.running, b.running]);
      await send(0, 1000);
      await waitUntil(reached(countsAfter(1000)), 90_000, () => `${follower.records.length} counts`);
      // The standbys follow the changelog as it is written; give them a moment past the last update.
      await new Promise((r) => setTimeout(r, 2000));
      a.child.kill('SIGKILL');
      await send(1000, 1500);
      await waitUntil(reached(countsAfter(1500)), 90_000, () => `${follower.records.length} counts`);
      const changelog = countsAfter(1000);
      const changelogRecords = [...changelog.values()].reduce((x, y) => x + y, 0);
      const exited = new Promise((r) => b.child.once('exit', r));
      b.child.kill('SIGTERM');
      await exited;
      const restored = Number(/restored (\d+)/.exec(b.output())?.[1] ?? Number.NaN);
      // Without standbys the survivor would read the killed instance's half of the changelog (about half of
      // these records); with them, only what the standbys had not applied yet.
      assert.ok(
        restored <= changelogRecords / 10,
        `restored ${restored} of ${changelogRecords} changelog records`,
      );
    } finally {
      await follower.stop();
      await producer.close();
    }
  });

  it('num.stream.threads 2: the threads of one instance share the tasks and count right', async () => {
    const bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([
      { topic: 'threads-in', numPartitions: PARTITIONS, replicationFactor: 1 },
      { topic: 'threads-out', numPartitions: PARTITIONS, replicationFactor: 1 },
    ]);
    await admin.close();
    const builder = new StreamsBuilder();
    builder
      .stream('threads-in', Consumed.with(Serdes.String(), Serdes.String()))
      .groupBy((_k, v) => v)
      .count(Materialized.inMemory('thread-counts'))
      .toStream()
      .to('threads-out', Produced.with(Serdes.String(), Serdes.Long()));
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'two-threads',
      'bootstrap.servers': bootstrap,
      'state.dir': dirs[0]!,
      'num.stream.threads': 2,
      'commit.interval.ms': 100,
    });
    const follower = new TopicFollower(bootstrap, 'threads-out', PARTITIONS);
    const producer = new Producer({ bootstrapServers: bootstrap });
    try {
      await streams.start();
      await waitUntil(
        () => streams.state() === 'RUNNING',
        30_000,
        () => streams.state(),
      );
      const values = Array.from({ length: 400 }, (_, i) => WORDS[i % WORDS.length]!);
      await producer.sendBatch(
        values.map((v, i) => ({ topic: 'threads-in', key: Buffer.from(`k${i}`), value: Buffer.from(v) })),
      );
      follower.start();
      await waitUntil(
        () => WORDS.every((w) => Number(follower.latest.get(w)?.readBigInt64BE(0) ?? -1) === 50),
        60_000,
        () => `${follower.records.length} counts`,
      );
      const threads = streams.metadataForLocalThreads();
      assert.equal(threads.length, 2);
      for (const t of threads) assert.ok(t.activeTasks.length > 0, `${t.threadName} has no task`);
      const all = threads.flatMap((t) => t.activeTasks).sort();
      assert.deepEqual(all, ['0_0', '0_1', '0_2', '0_3', '1_0', '1_1', '1_2', '1_3']);
    } finally {
      await streams.close();
      await follower.stop();
      await producer.close();
    }
  });
});
