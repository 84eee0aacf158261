// suppress(untilWindowCloses) survives the loss of an instance: two instances (processes) of a windowed count
// share the two tasks; once every input record is processed and committed, so that each instance holds
// buffered counts of windows still open, one is killed with SIGKILL. The survivor takes its task over, restores
// the suppress buffer from `<application.id>-KTABLE-SUPPRESS-STATE-STORE-0000000004-changelog`, and when a
// later record closes the windows it emits their final counts. Checked against a reference counted here:
// with exactly_once_v2 each window's final count exactly once (read_committed), with at_least_once each window
// at least once with at least its count. Without the buffer's changelog the killed instance's windows are never
// emitted (this test fails before it).

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { waitUntil } from '../helpers/wait.js';
import { seeded, useStreamsBroker } from './streams-helpers.js';

const APP = join(import.meta.dirname, 'fixtures', 'suppress-app.js');
const PARTITIONS = 2;
const WINDOW_MS = 1000;
const KEYS = 12;
const RECORDS = 300;

interface Instance {
  child: ChildProcess;
  /** The active tasks it printed last (null before its first RUNNING). */
  tasks: () => string[] | null;
}

function instance(env: Record<string, string>): Instance {
  const child = spawn(process.execPath, [APP], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let tasks: string[] | null = null;
  let pending = '';
  child.stdout!.on('data', (d: Buffer) => {
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const m = /^tasks (.*)$/.exec(line);
      if (m) tasks = m[1] === '' ? [] : m[1]!.split(',');
    }
  });
  return { child, tasks: () => tasks };
}

/** Reads a topic's records from the beginning of both partitions: key -> every value, in order. */
class OutputReader {
  readonly values = new Map<string, number[]>();
  private readonly consumer: Consumer;
  private running = true;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    bootstrap: string,
    private readonly topic: string,
  ) {
    this.consumer = new Consumer({ bootstrapServers: bootstrap, isolationLevel: 'read_committed' });
    const tps = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition }));
    this.consumer.assign(tps);
    for (const tp of tps) this.consumer.seek(tp, 0);
  }

  start(): void {
    this.loop = (async () => {
      while (this.running) this.take(await this.consumer.poll(100));
    })();
  }

  /** Stops following, then reads on until each partition's position reaches its end offset given. */
  async readToEnd(ends: { partition: number; offset: number }[]): Promise<void> {
    this.running = false;
    await this.loop.catch(() => {});
    const deadline = Date.now() + 60_000;
    for (;;) {
      let behind = false;
      for (const e of ends)
        if ((await this.consumer.position({ topic: this.topic, partition: e.partition })) < e.offset)
          behind = true;
      if (!behind) return;
      assert.ok(Date.now() < deadline, 'the output was not read to its end within 60 s');
      this.take(await this.consumer.poll(100));
    }
  }

  private take(records: { key: Buffer | null; value: Buffer | null }[]): void {
    for (const r of records) {
      const key = r.key?.toString() ?? '';
      let list = this.values.get(key);
      if (list === undefined) this.values.set(key, (list = []));
      list.push(Number(r.value!.readBigInt64BE(0)));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop.catch(() => {});
    await this.consumer.close();
  }
}

const broker = useStreamsBroker(
  {
    'sup-eos-in': PARTITIONS,
    'sup-eos-out': PARTITIONS,
    'sup-alos-in': PARTITIONS,
    'sup-alos-out': PARTITIONS,
  },
  4,
);

describe('suppress(untilWindowCloses) across the loss of an instance', () => {
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  async function run(guarantee: 'exactly_once_v2' | 'at_least_once', seed: number, dirs: string[]) {
    const name = guarantee === 'exactly_once_v2' ? 'eos' : 'alos';
    const [input, output, appId] = [`sup-${name}-in`, `sup-${name}-out`, `sup-${name}-app`];
    // Recent timestamps, so that retention never removes the input; windows are WINDOW_MS wide and aligned.
    const baseMs = Math.floor((Date.now() - 600_000) / WINDOW_MS) * WINDOW_MS;
    const random = seeded(seed);
    // Key k<i> lives in partition i % 2; records fall in the first three windows, which (grace 5 s) stay open.
    const records = Array.from({ length: RECORDS }, () => {
      const k = Math.floor(random() * KEYS);
      return {
        key: `k${k}`,
        partition: k % PARTITIONS,
        timestamp: baseMs + Math.floor(random() * 3 * WINDOW_MS),
      };
    });
    const expected = new Map<string, number>();
    for (const r of records) {
      const window = `${r.key}@${r.timestamp - ((r.timestamp - baseMs) % WINDOW_MS)}`;
      expected.set(window, (expected.get(window) ?? 0) + 1);
    }
    const perPartition = [0, 0];
    for (const r of records) perPartition[r.partition]!++;

    const env = {
      BOOTSTRAP: broker.bootstrap,
      APP_ID: appId,
      GUARANTEE: guarantee,
      INPUT: input,
      OUTPUT: output,
    };
    const a = instance({ ...env, STATE_DIR: dirs[0]! });
    const b = instance({ ...env, STATE_DIR: dirs[1]! });
    children.push(a.child, b.child);
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    const reader = new OutputReader(broker.bootstrap, output);
    reader.start();
    try {
      // Each instance runs one of the two tasks.
      await waitUntil(
        () => a.tasks()?.length === 1 && b.tasks()?.length === 1 && a.tasks()![0] !== b.tasks()![0],
        90_000,
        () => `tasks: ${JSON.stringify(a.tasks())} and ${JSON.stringify(b.tasks())}`,
      );
      await producer.sendBatch(
        records.map((r) => ({
          topic: input,
          partition: r.partition,
          key: Buffer.from(r.key),
          value: Buffer.from('v'),
          timestamp: r.timestamp,
        })),
      );
      // Processed and committed (under EOS: the transaction with the buffer's changelog records committed).
      const committed = async () => {
        const offsets = await admin.listConsumerGroupOffsets(appId, [
          { topic: input, partition: 0 },
          { topic: input, partition: 1 },
        ]);
        return offsets.every((o) => o.offset === perPartition[o.partition]);
      };
      const deadline = Date.now() + 90_000;
      while (!(await committed())) {
        assert.ok(Date.now() < deadline, 'the input was not committed within 90 s');
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(reader.values.size, 0, 'no window may close before the closing records');
      a.child.kill('SIGKILL');
      // One record per partition far enough ahead to close every window of the input (end + grace).
      await producer.sendBatch(
        [0, 1].map((partition) => ({
          topic: input,
          partition,
          key: Buffer.from(`closer${partition}`),
          value: Buffer.from('v'),
          timestamp: baseMs + 60_000,
        })),
      );
      await waitUntil(
        () => [...expected.keys()].every((w) => reader.values.has(w)),
        120_000,
        () =>
          `windows emitted: ${[...expected.keys()].filter((w) => reader.values.has(w)).length} of ${expected.size}; survivor exit ${b.child.exitCode}`,
      );
      assert.equal(b.child.exitCode, null, 'the survivor stopped');
      // A clean close commits what the survivor still holds; then the output is complete.
      const exited = new Promise((r) => b.child.once('exit', r));
      b.child.kill('SIGTERM');
      // Bounded: a close that hangs fails here instead of holding the test until the runner's timeout.
      await waitUntil(
        () => b.child.exitCode !== null || b.child.signalCode !== null,
        60_000,
        () => 'the survivor did not exit within 60 s of SIGTERM',
      );
      await exited;
      assert.equal(b.child.exitCode, 0, 'the survivor closed cleanly');
      const ends = await admin.listOffsets(
        [0, 1].map((partition) => ({ topic: output, partition, spec: 'latest' as const })),
        { isolationLevel: 'read_committed' },
      );
      await reader.readToEnd(ends.map((e) => ({ partition: e.partition, offset: Number(e.offset) })));
      return { expected, got: reader.values };
    } finally {
      await reader.stop();
      await admin.close();
      await producer.close();
      if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
      if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill('SIGKILL');
    }
  }

  it('exactly_once_v2: every window final count once, equal to the reference', async () => {
    const { expected, got } = await run('exactly_once_v2', 18, broker.dirs.slice(0, 2));
    for (const [w, n] of expected) assert.deepEqual(got.get(w), [n], `window ${w}`);
    assert.deepEqual(
      [...got.keys()].filter((w) => !expected.has(w)),
      [],
      'no window outside the input (the closers windows stay open)',
    );
  });

  it('at_least_once: every window final count at least once, at least the reference', async () => {
    const { expected, got } = await run('at_least_once', 81, broker.dirs.slice(2, 4));
    for (const [w, n] of expected) {
      const counts = got.get(w) ?? [];
      assert.ok(counts.length >= 1 && counts.every((c) => c >= n), `window ${w}: ${counts} for ${n}`);
    }
  });
});
