// Exactly-once: a stream thread whose producer is fenced goes on (Kafka Streams takes it as a task migration).
// A count per key runs under exactly_once_v2 while input arrives; in the middle, another producer initializes
// the thread's transactional.id (`<application.id>-<processId>-1`), as a zombie's successor would: the
// coordinator aborts the thread's open transaction and bumps the epoch, so the thread's next send or commit is
// answered PRODUCER_FENCED or INVALID_PRODUCER_EPOCH. The thread drops its tasks, makes a new producer, joins
// the group again and reprocesses from the last commit: the instance never reaches ERROR and the
// read_committed output of every key is exactly 1, 2, ..., n. Before, the send error ended the thread and the
// instance went to ERROR.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { KafkaStreams } from '../../src/streams/index.js';
import { sleep } from '../helpers/wait.js';
import { committedCounts, countByKeyTopology, useStreamsBroker } from './streams-helpers.js';

const INPUT = 'fence-input';
const OUTPUT = 'fence-counts';
const PARTITIONS = 2;
const KEYS = 8;

describe('exactly_once_v2: a fenced producer', () => {
  const env = useStreamsBroker({ [INPUT]: PARTITIONS, [OUTPUT]: PARTITIONS }, 1);

  it('is a task migration: the thread makes a new producer, rejoins and counts every input exactly once', async () => {
    const app = 'fence-app';
    const streams = new KafkaStreams(countByKeyTopology(INPUT, OUTPUT, 'counts'), {
      'application.id': app,
      'bootstrap.servers': env.bootstrap,
      'state.dir': env.dirs[0]!,
      'processing.guarantee': 'exactly_once_v2',
      'commit.interval.ms': 100,
      'statestore.cache.max.bytes': 0,
      'session.timeout.ms': 6000,
      'heartbeat.interval.ms': 500,
    });
    const states: string[] = [];
    streams.setStateListener((next) => states.push(next));
    const log: string[] = [];
    streams.setLogger((m) => log.push(m));
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const expected = new Map<string, number>();
    let sent = 0;
    const send = async (records: number) => {
      const batch = Array.from({ length: records }, (_, i) => {
        const key = `k${(sent + i) % KEYS}`;
        expected.set(key, (expected.get(key) ?? 0) + 1);
        return { topic: INPUT, key: Buffer.from(key), value: Buffer.from(`v${sent + i}`) };
      });
      sent += records;
      await producer.sendBatch(batch);
    };
    // The committed counts, read again from the beginning until `done` holds.
    let counts = new Map<string, number[]>();
    const total = () => [...counts.values()].reduce((n, list) => n + list.length, 0);
    const readUntil = async (done: () => boolean, why: () => string) => {
      for (const deadline = Date.now() + 60_000; ; await sleep(200)) {
        counts = await committedCounts(env.bootstrap, OUTPUT, PARTITIONS);
        if (done()) return;
        if (Date.now() > deadline) assert.fail(`timed out waiting:\n${why()}`);
      }
    };
    const fencer = new Producer({
      bootstrapServers: env.bootstrap,
      transactionalId: `${app}-${streams.processId}-1`,
    });
    try {
      await streams.start();
      await send(200);
      await readUntil(
        () => total() === 200,
        () => `${total()} counts of 200 committed`,
      );
      // Input keeps arriving while the fence lands: the thread has a transaction open at about that time.
      const sending = (async () => {
        for (let i = 0; i < 20; i++) {
          await send(20);
          await sleep(25);
        }
      })();
      await sleep(150);
      await fencer.initTransactions();
      await sending;
      await send(100);
      await readUntil(
        () =>
          states.includes('ERROR') ||
          (total() >= sent && [...expected].every(([k, n]) => counts.get(k)?.at(-1) === n)),
        () => `${total()} counts of ${sent}; states ${states.join(' ')}\n${log.slice(-20).join('\n')}`,
      );
      assert.ok(
        !states.includes('ERROR'),
        `the instance never failed: ${states.join(' ')}\n${log.join('\n')}`,
      );
      // Later records may only be duplicates; give them a moment to show before the exact check.
      await sleep(500);
      counts = await committedCounts(env.bootstrap, OUTPUT, PARTITIONS);
      assert.ok(
        log.some((m) => m.includes('the producer was fenced')),
        `the fence reached the thread:\n${log.join('\n')}`,
      );
      for (const [key, n] of expected) {
        assert.deepEqual(
          counts.get(key),
          Array.from({ length: n }, (_, i) => i + 1),
          `the committed counts of ${key}`,
        );
      }
      assert.equal(streams.state(), 'RUNNING');
    } finally {
      await fencer.close().catch(() => {});
      await producer.close();
      await streams.close();
    }
  });
});
