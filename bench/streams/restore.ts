// State restoration rate of Brook Streams against reading the same changelog raw with Brook's Consumer, in the
// same run, against one broker process started here. A count (record cache off, so every update is a changelog
// record) first fills `<application.id>-<store>-changelog`; then, for each repetition, a new instance with an
// empty state directory restores the store from that changelog (timed by the thread from the first poll of its
// restore consumer to the changelog's end, as it logs "restored N records in M ms"), and a plain Consumer
// assigned to the changelog partitions reads them from the beginning to the same end offsets (timed the same
// way: after assign and seek). Persistent (LMDB) and in-memory stores; medians of the repetitions with the range.
//
//   npm run bench -- streams-restore [--records N] [--reps R] [--quick]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '../../src/client/admin.js';
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
import { startBroker } from '../../test/helpers/broker-process.js';
import { numberOption } from '../harness/options.js';
import { summarize } from '../harness/repeat.js';

const PARTITIONS = 3;
const S = Serdes.String();

function app(bootstrap: string, engine: 'persistent' | 'in-memory', dir: string): KafkaStreams {
  const builder = new StreamsBuilder();
  const store =
    engine === 'persistent'
      ? Materialized.as<string, number>('restore-counts')
      : Materialized.inMemory<string, number>('restore-counts');
  builder
    .stream('restore-in', Consumed.with(S, S))
    .groupByKey()
    .count(store)
    .toStream()
    .to('restore-out', Produced.with(S, Serdes.Long()));
  return new KafkaStreams(builder.build(), {
    'application.id': `restore-${engine}`,
    'bootstrap.servers': bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 1000,
    'statestore.cache.max.bytes': 0,
  });
}

/** Runs the count over the whole input once, so that its changelog holds one record per input record. */
async function fill(bootstrap: string, engine: 'persistent' | 'in-memory', records: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'brook-restore-fill-'));
  const streams = app(bootstrap, engine, dir);
  try {
    await streams.start();
    const admin = new Admin({ bootstrapServers: bootstrap });
    try {
      for (;;) {
        const offsets = await admin.listConsumerGroupOffsets(`restore-${engine}`);
        if (offsets.reduce((n, o) => n + Math.max(0, o.offset), 0) >= records) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await admin.close();
    }
  } finally {
    await streams.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts an instance on an empty state directory and returns what its thread restored and how fast. */
async function restore(
  bootstrap: string,
  engine: 'persistent' | 'in-memory',
): Promise<{ records: number; ms: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'brook-restore-'));
  const streams = app(bootstrap, engine, dir);
  let result: { records: number; ms: number } | null = null;
  streams.setLogger((m) => {
    const match = /restored (\d+) records in (\d+) ms/.exec(m);
    if (match && Number(match[1]) > 0) result = { records: Number(match[1]), ms: Number(match[2]) };
  });
  try {
    await streams.start();
    while (result === null) await new Promise((r) => setTimeout(r, 50));
    return result;
  } finally {
    await streams.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads the changelog from the beginning to its end offsets with a plain Consumer. */
async function rawRead(bootstrap: string, topic: string): Promise<{ records: number; ms: number }> {
  const consumer = new Consumer({ bootstrapServers: bootstrap, autoOffsetReset: 'earliest' });
  try {
    const tps = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition }));
    const ends = new Map((await consumer.endOffsets(tps)).map((e) => [e.partition, e.offset]));
    consumer.assign(tps);
    await consumer.seekToBeginning(tps);
    const started = performance.now();
    let records = 0;
    const pending = new Set(tps.map((tp) => tp.partition));
    while (pending.size > 0) {
      for (const r of await consumer.poll(100)) if (r.offset < ends.get(r.partition)!) records++;
      for (const p of [...pending])
        if ((await consumer.position({ topic, partition: p })) >= ends.get(p)!) pending.delete(p);
    }
    return { records, ms: performance.now() - started };
  } finally {
    await consumer.close();
  }
}

export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const records = numberOption(args, '--records', quick ? 30_000 : 200_000);
  const reps = numberOption(args, '--reps', 3);
  const broker = await startBroker();
  try {
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    await admin.createTopics(
      ['restore-in', 'restore-out'].map((topic) => ({
        topic,
        numPartitions: PARTITIONS,
        replicationFactor: 1,
      })),
    );
    await admin.close();
    const producer = new Producer({ bootstrapServers: broker.bootstrap, lingerMs: 20 });
    const chunk = 5000;
    for (let i = 0; i < records; i += chunk)
      await producer.sendBatch(
        Array.from({ length: Math.min(chunk, records - i) }, (_, j) => ({
          topic: 'restore-in',
          // Every key once: compaction cannot shrink the changelog during the run.
          key: Buffer.from(`key-${i + j}`),
          value: Buffer.from('v'),
        })),
      );
    await producer.close();
    console.log(
      `records: ${records}, ${PARTITIONS} partitions, one broker process, one stream thread, ${reps} repetitions (median [min-max])`,
    );
    for (const engine of ['persistent', 'in-memory'] as const) {
      await fill(broker.bootstrap, engine, records);
      const changelog = `restore-${engine}-restore-counts-changelog`;
      const restoreRates: number[] = [];
      const rawRates: number[] = [];
      const ratios: number[] = [];
      for (let i = 0; i < reps; i++) {
        const raw = await rawRead(broker.bootstrap, changelog);
        const restored = await restore(broker.bootstrap, engine);
        const rawRate = raw.records / (raw.ms / 1000);
        const restoreRate = restored.records / (Math.max(1, restored.ms) / 1000);
        rawRates.push(rawRate);
        restoreRates.push(restoreRate);
        ratios.push(restoreRate / rawRate);
      }
      const fmt = (xs: number[]) =>
        `${Math.round(summarize(xs).median).toString().padStart(8)} records/s [${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))}]`;
      console.log(`${engine.padEnd(10)} raw changelog read ${fmt(rawRates)}`);
      console.log(`${engine.padEnd(10)} store restoration  ${fmt(restoreRates)}`);
      console.log(
        `${engine.padEnd(10)} restoration / raw  ${summarize(ratios).median.toFixed(2)} [${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}]`,
      );
    }
  } finally {
    await broker.stop();
  }
}
