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
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { useStreamsBroker } from './streams-helpers.js';

const INPUT = 'fence-input';
const OUTPUT = 'fence-counts';
const PARTITIONS = 2;
const KEYS = 8;

/** Reads OUTPUT with read_committed from the beginning: key -> every count, in order. */
class CommittedCounts {
  readonly counts = new Map<string, number[]>();
  private readonly consumer: Consumer;
  private running = true;
  private loop: Promise<void> = Promise.resolve();

  constructor(bootstrap: string) {
    this.consumer = new Consumer({
      bootstrapServers: bootstrap,
      autoOffsetReset: 'earliest',
      isolationLevel: 'read_committed',
    });
  }

  start(): void {
    this.consumer.assign(
      Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: OUTPUT, partition })),
    );
    this.loop = (async () => {
      while (this.running) {
        for (const r of await this.consumer.poll(100)) {
          const key = r.key!.toString('utf8');
          let list = this.counts.get(key);
          if (list === undefined) this.counts.set(key, (list = []));
          list.push(Number(r.value!.readBigInt64BE(0)));
        }
      }
    })();
  }

  total(): number {
    return [...this.counts.values()].reduce((sum, list) => sum + list.length, 0);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop.catch(() => {});
    await this.consumer.close();
  }
}

describe('exactly_once_v2: a fenced producer', () => {
  const env = useStreamsBroker({ [INPUT]: PARTITIONS, [OUTPUT]: PARTITIONS }, 1);

  it('is a task migration: the thread makes a new producer, rejoins and counts every input exactly once', async () => {
    const app = 'fence-app';
    const builder = new StreamsBuilder();
    builder
      .stream(INPUT, Consumed.with(Serdes.String(), Serdes.String()))
      .groupByKey()
      .count(Materialized.as('counts'))
      .toStream()
      .to(OUTPUT, Produced.with(Serdes.String(), Serdes.Long()));
    const streams = new KafkaStreams(builder.build(), {
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
    const output = new CommittedCounts(env.bootstrap);
    output.start();
    const fencer = new Producer({
      bootstrapServers: env.bootstrap,
      transactionalId: `${app}-${streams.processId}-1`,
    });
    try {
      await streams.start();
      await send(200);
      await waitUntil(
        () => output.total() === 200,
        60_000,
        () => `${output.total()} counts of 200 committed`,
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
      await waitUntil(
        () =>
          states.includes('ERROR') ||
          (output.total() >= sent && [...expected].every(([k, n]) => output.counts.get(k)?.at(-1) === n)),
        60_000,
        () => `${output.total()} counts of ${sent}; states ${states.join(' ')}\n${log.slice(-20).join('\n')}`,
      );
      assert.ok(
        !states.includes('ERROR'),
        `the instance never failed: ${states.join(' ')}\n${log.join('\n')}`,
      );
      // Later records may only be duplicates; give them a moment to show before the exact check.
      await sleep(500);
      assert.ok(
        log.some((m) => m.includes('the producer was fenced')),
        `the fence reached the thread:\n${log.join('\n')}`,
      );
      for (const [key, n] of expected) {
        assert.deepEqual(
          output.counts.get(key),
          Array.from({ length: n }, (_, i) => i + 1),
          `the committed counts of ${key}`,
        );
      }
      assert.equal(streams.state(), 'RUNNING');
    } finally {
      await fencer.close().catch(() => {});
      await producer.close();
      await streams.close();
      await output.stop();
    }
  });
});
