// processing.guarantee=exactly_once_v2 through a broker. Two word-count instances (processes) share the tasks;
// one is killed with SIGKILL while it processes. The survivor takes its tasks over once the group has dropped it
// and the coordinator has aborted its open transaction, restores the counts from the changelog (read_committed),
// and finishes. Read with read_committed, each word's count updates are then exactly 1, 2, ..., n in its
// partition: nothing lost, nothing counted twice, no update of the aborted transaction visible.
// A thread whose member the group drops (its event loop blocked past session.timeout.ms in mid-transaction)
// aborts the transaction, rejoins and still counts exactly once.
// Also: output order without the thread holding records back while a topic's metadata loads (the producer keeps
// send order itself): at_least_once word count into fresh topics, each word's updates 1..n in order.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer, type IsolationLevel } from '../../src/client/consumer.js';
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
import { seeded, stateDir } from './streams-helpers.js';

const PARTITIONS = 4;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
const APP = join(import.meta.dirname, 'fixtures', 'word-count-app.js');

/** Every count update of a topic in partition order (read_committed unless told): word -> counts. */
class CommittedCounts {
  readonly updates = new Map<string, number[]>();
  /** Updates read per partition. */
  readonly perPartition = new Array<number>(PARTITIONS).fill(0);
  private readonly consumer: Consumer;
  private running = true;
  private loop: Promise<void> = Promise.resolve();

  constructor(bootstrap: string, topic: string, isolationLevel: IsolationLevel = 'read_committed') {
    this.consumer = new Consumer({ bootstrapServers: bootstrap, isolationLevel });
    const tps = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition }));
    this.consumer.assign(tps);
    for (const tp of tps) this.consumer.seek(tp, 0);
  }

  start(): void {
    this.loop = (async () => {
      while (this.running) {
        for (const r of await this.consumer.poll(100)) {
          const word = r.key?.toString() ?? '';
          let list = this.updates.get(word);
          if (list === undefined) this.updates.set(word, (list = []));
          list.push(Number(r.value!.readBigInt64BE(0)));
          this.perPartition[r.partition]!++;
        }
      }
    })();
  }

  get total(): number {
    return [...this.updates.values()].reduce((n, l) => n + l.length, 0);
  }

  latest(word: string): number {
    return this.updates.get(word)?.at(-1) ?? -1;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.consumer.close();
  }
}

function instance(
  bootstrap: string,
  dir: string,
  appId: string,
): { child: ChildProcess; running: Promise<void> } {
  const child = spawn(process.execPath, [APP], {
    env: {
      ...process.env,
      BOOTSTRAP: bootstrap,
      STATE_DIR: dir,
      APP_ID: appId,
      GUARANTEE: 'exactly_once_v2',
      // Long enough that the killed instance has processed records in a transaction it never commits.
      COMMIT_INTERVAL_MS: '2000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const running = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('running')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`instance exited with ${code}`)));
  });
  running.catch(() => {});
  return { child, running };
}

function lines(seed: number, count: number): string[] {
  const random = seeded(seed);
  return Array.from({ length: count }, () =>
    Array.from(
      { length: 1 + Math.floor(random() * 5) },
      () => WORDS[Math.floor(random() * WORDS.length)]!,
    ).join(' '),
  );
}

function reference(all: string[]): Map<string, number> {
  const expected = new Map<string, number>();
  for (const l of all) for (const w of l.split(' ')) expected.set(w, (expected.get(w) ?? 0) + 1);
  return expected;
}

/** Each word's updates are exactly 1..n: any loss, duplicate or reordering breaks the sequence. */
function assertExactSequences(counts: CommittedCounts, expected: Map<string, number>): void {
  for (const [word, n] of expected) {
    const seen = counts.updates.get(word) ?? [];
    const want = Array.from({ length: n }, (_, i) => i + 1);
    assert.deepEqual(seen, want, `updates of ${word}`);
  }
}

describe('exactly_once_v2', () => {
  let broker: BrokerProcess;
  const dirs = [stateDir(), stateDir(), stateDir()];
  const children: ChildProcess[] = [];

  before(async () => {
    broker = await startBroker({
      overrides: {
        'transaction.state.log.num.partitions': 2,
        'transaction.state.log.replication.factor': 1,
        'transaction.state.log.min.isr': 1,
      },
    });
  });

  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await broker?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function topics(input: string, output: string): Promise<void> {
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    await admin.createTopics([
      { topic: input, numPartitions: PARTITIONS, replicationFactor: 1 },
      { topic: output, numPartitions: PARTITIONS, replicationFactor: 1 },
    ]);
    await admin.close();
  }

  it('an instance killed with SIGKILL: the committed output counts each word exactly once', async () => {
    const bootstrap = broker.bootstrap;
    await topics('text-lines', 'word-counts');
    const all = lines(7, 1500);
    const expected = reference(all);
    const producer = new Producer({ bootstrapServers: bootstrap });
    const send = (from: number, to: number) =>
      producer.sendBatch(
        all
          .slice(from, to)
          .map((l, i) => ({ topic: 'text-lines', key: Buffer.from(`l${from + i}`), value: Buffer.from(l) })),
      );
    const counts = new CommittedCounts(bootstrap, 'word-counts');
    const uncommitted = new CommittedCounts(bootstrap, 'word-counts', 'read_uncommitted');
    counts.start();
    uncommitted.start();
    try {
      const a = instance(bootstrap, dirs[0]!, 'wc-eos');
      const b = instance(bootstrap, dirs[1]!, 'wc-eos');
      children.push(a.child, b.child);
      await Promise.all([a.running, b.running]);
      await send(0, 500);
      await waitUntil(
        () => [...counts.updates.values()].reduce((n, l) => n + l.length, 0) > 300,
        60_000,
        () => `${counts.updates.size} words so far`,
      );
      // Lines 500..1000 trickle in; the instance is killed at a moment when every output partition that gets
      // updates has some written that no commit has made visible yet. Each instance owns count tasks (the streams assignor gives
      // each two of the four), so the killed one dies with a transaction that holds written updates.
      let trickle = 500;
      const trickling = (async () => {
        // Over ten seconds or so: several commit intervals of each instance.
        for (; trickle < 1000; trickle += 5) {
          await send(trickle, trickle + 5);
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      // (The eight words land in three of the four output partitions: the empty one is left out.)
      const allOpen = () => uncommitted.perPartition.every((n, p) => n === 0 || n > counts.perPartition[p]!);
      // The committed reader lags a commit: updates seen written but not committed may belong to a transaction
      // whose commit is already under way, and a kill then would abort nothing (seen once in CI). So the instance
      // is frozen first and killed only if the updates are still uncommitted a second later; else it goes on and
      // the next such moment is tried.
      let killed = false;
      while (!killed) {
        await waitUntil(
          () => allOpen() || trickle >= 1000,
          60_000,
          () => `${uncommitted.total} updates written, ${counts.total} committed`,
        );
        if (!allOpen()) break;
        a.child.kill('SIGSTOP');
        await new Promise((r) => setTimeout(r, 1_000));
        if (allOpen()) {
          a.child.kill('SIGKILL');
          killed = true;
        } else {
          a.child.kill('SIGCONT');
        }
      }
      assert.ok(killed, 'no moment with written, uncommitted updates in every partition');
      await trickling;
      await send(1000, 1500);
      await waitUntil(
        () => [...expected].every(([w, n]) => counts.latest(w) >= n),
        120_000,
        () =>
          `counts ${JSON.stringify(WORDS.map((w) => [w, counts.latest(w)]))}, expected ${JSON.stringify([...expected])}`,
      );
      // Anything more (a duplicate written late) would show within a few commits.
      await new Promise((r) => setTimeout(r, 1_500));
      assertExactSequences(counts, expected);
      assert.equal(b.child.exitCode, null, 'the survivor stopped');
      b.child.kill('SIGTERM');
      // The aborted updates are in the log: read_uncommitted sees more than each word's 1..n.
      assert.ok(uncommitted.total > counts.total, `${uncommitted.total} written, ${counts.total} committed`);
    } finally {
      await counts.stop();
      await uncommitted.stop();
      await producer.close();
    }
  });

  it('at_least_once into fresh topics: each word its updates in order, without records held back for metadata', async () => {
    const bootstrap = broker.bootstrap;
    await topics('order-in', 'order-out');
    const builder = new StreamsBuilder();
    builder
      .stream('order-in', Consumed.with(Serdes.String(), Serdes.String()))
      .flatMapValues((line) => line.split(' '))
      .groupBy((_k, word) => word)
      .count(Materialized.as('order-counts'))
      .toStream()
      .to('order-out', Produced.with(Serdes.String(), Serdes.Long()));
    const all = lines(11, 600);
    const expected = reference(all);
    // The input is there before the application starts: its first records go to the repartition, changelog
    // and output topics at once, before the thread's producer has any of their metadata.
    const producer = new Producer({ bootstrapServers: bootstrap });
    await producer.sendBatch(
      all.map((l, i) => ({ topic: 'order-in', key: Buffer.from(`l${i}`), value: Buffer.from(l) })),
    );
    await producer.close();
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'order-app',
      'bootstrap.servers': bootstrap,
      'state.dir': dirs[2]!,
      'commit.interval.ms': 100,
      // No record cache: every update goes out, so that each word's sequence of counts can be checked.
      'statestore.cache.max.bytes': 0,
    });
    const counts = new CommittedCounts(bootstrap, 'order-out');
    counts.start();
    try {
      await streams.start();
      await waitUntil(
        () => [...expected].every(([w, n]) => counts.latest(w) >= n),
        60_000,
        () => `counts ${JSON.stringify(WORDS.map((w) => [w, counts.latest(w)]))}`,
      );
      assertExactSequences(counts, expected);
    } finally {
      await streams.close();
      await counts.stop();
    }
  });

  it('a member the group dropped (its event loop blocked past session.timeout.ms) carries on, exactly once', async () => {
    const bootstrap = broker.bootstrap;
    await topics('stall-in', 'stall-out');
    let stalled = false;
    const builder = new StreamsBuilder();
    builder
      .stream('stall-in', Consumed.with(Serdes.String(), Serdes.String()))
      .peek((key) => {
        // Once, in the middle of a transaction: nothing runs (no heartbeat) for longer than the session timeout,
        // so the coordinator drops the member, and the transaction's offsets are refused at its next commit.
        if (key !== 'l300' || stalled) return;
        stalled = true;
        const until = Date.now() + 8_000;
        while (Date.now() < until) {
          // busy: the event loop is blocked
        }
      })
      .flatMapValues((line) => line.split(' '))
      .groupBy((_k, word) => word)
      .count(Materialized.as('stall-counts'))
      .toStream()
      .to('stall-out', Produced.with(Serdes.String(), Serdes.Long()));
    const all = lines(13, 600);
    const expected = reference(all);
    const producer = new Producer({ bootstrapServers: bootstrap });
    await producer.sendBatch(
      all.map((l, i) => ({
        topic: 'stall-in',
        partition: 0,
        key: Buffer.from(`l${i}`),
        value: Buffer.from(l),
      })),
    );
    await producer.close();
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'stall-app',
      'bootstrap.servers': bootstrap,
      'state.dir': dirs[2]!,
      'processing.guarantee': 'exactly_once_v2',
      'session.timeout.ms': 6000,
      'heartbeat.interval.ms': 500,
      'statestore.cache.max.bytes': 0,
    });
    const log: string[] = [];
    streams.setLogger((m) => log.push(m));
    const counts = new CommittedCounts(bootstrap, 'stall-out');
    counts.start();
    try {
      await streams.start();
      await waitUntil(
        () => [...expected].every(([w, n]) => counts.latest(w) >= n),
        90_000,
        () => `counts ${JSON.stringify(WORDS.map((w) => [w, counts.latest(w)]))}; state ${streams.state()}`,
      );
      await new Promise((r) => setTimeout(r, 1_000));
      assert.ok(stalled);
      assertExactSequences(counts, expected);
      assert.equal(streams.state(), 'RUNNING', log.join('\n'));
      assert.ok(
        log.some((l) => /group moved on|: lost /.test(l)),
        `the member was not dropped:\n${log.join('\n')}`,
      );
    } finally {
      await streams.close();
      await counts.stop();
    }
  });
});
