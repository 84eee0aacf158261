// Stream threads in worker threads: records per second of one topology (bench/streams/threads-topology.ts: some
// CPU per record, then a count into LMDB) with num.stream.threads 1 and 2 as worker threads
// (brook.topology.module), and 2 threads sharing the event loop (no module) for reference, on the same preloaded
// input (4 partitions) against one broker process started here, in the same run. Each configuration runs --reps
// times (order rotated); rates from the moment every thread runs its tasks to the last record (processedRecords(),
// read every 20 ms), and the cores the process used meanwhile (its CPU time, all threads, over the wall time); medians and
// ranges, and the ratio of 2 workers over 1. On a shared machine a second core may not be free: the same run
// measures that ceiling as well, the rate of SHA-256 work in 2 plain worker threads over 1 (no Kafka at all), and
// the streams ratio is read against it.
//
//   npm run bench -- streams-threads [--records N] [--reps R] [--work ROUNDS] [--quick]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { KafkaStreams } from '../../src/streams/index.js';
import { startBroker } from '../../test/helpers/broker-process.js';
import { numberOption } from '../harness/options.js';
import { buildTopology } from './threads-topology.js';

const PARTITIONS = 4;
const KEYS = 1000;
const MODULE = new URL('./threads-topology.js', import.meta.url).href;

interface Setup {
  name: string;
  threads: number;
  workers: boolean;
}

const SETUPS: Setup[] = [
  { name: '1 worker thread', threads: 1, workers: true },
  { name: '2 worker threads', threads: 2, workers: true },
  { name: '2 threads, one event loop', threads: 2, workers: false },
];

/** The hashing loop of a plain worker: rounds of SHA-256 for `ms`, posting how many it did. */
const SPIN = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
let d = 'x', n = 0;
const end = Date.now() + workerData;
while (Date.now() < end) { for (let i = 0; i < 100; i++) d = createHash('sha256').update(d).digest('hex'); n += 100; }
parentPort.postMessage(n);
`;

/** SHA-256 rounds per second of `threads` plain workers hashing at once for `ms`. */
async function spin(threads: number, ms: number): Promise<number> {
  const counts = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<number>((resolve, reject) => {
          const w = new Worker(SPIN, { eval: true, workerData: ms });
          w.once('message', (n: number) => {
            resolve(n);
            void w.terminate();
          });
          w.once('error', reject);
        }),
    ),
  );
  return counts.reduce((a, b) => a + b, 0) / (ms / 1000);
}

interface Result {
  rate: number;
  /** CPU seconds of the process (every thread) per wall second while processing. */
  cores: number;
}

async function once(
  bootstrap: string,
  setup: Setup,
  records: number,
  dir: string,
  run: number,
): Promise<Result> {
  const props = {
    'application.id': `bench-mt-${run}`,
    'bootstrap.servers': bootstrap,
    'state.dir': dir,
    'num.stream.threads': setup.threads,
    'commit.interval.ms': 1000,
  };
  const app = setup.workers
    ? await KafkaStreams.fromModule(MODULE, props)
    : new KafkaStreams(buildTopology(), props);
  await app.start();
  try {
    // Timed from the moment every thread runs tasks of its own (the cooperative hand-over of the first
    // rebalance done), counting the records processed from then on.
    let firstMs = 0;
    let firstN = 0;
    let firstCpu = process.cpuUsage();
    const deadline = Date.now() + 600_000;
    for (;;) {
      const n = app.processedRecords();
      if (
        firstMs === 0 &&
        app.state() === 'RUNNING' &&
        app.metadataForLocalThreads().every((t) => t.threadState === 'RUNNING' && t.activeTasks.length > 0)
      ) {
        firstMs = performance.now();
        firstN = n;
        firstCpu = process.cpuUsage();
      }
      if (n >= records && firstMs !== 0) {
        const seconds = (performance.now() - firstMs) / 1000;
        const cpu = process.cpuUsage(firstCpu);
        if (records - firstN < records / 4)
          throw new Error(`${setup.name}: only ${records - firstN} records timed`);
        return { rate: (records - firstN) / seconds, cores: (cpu.user + cpu.system) / 1e6 / seconds };
      }
      if (Date.now() > deadline || app.state() === 'ERROR')
        throw new Error(`${setup.name}: ${n} of ${records} processed, ${app.state()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await app.close();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const records = numberOption(args, '--records', quick ? 30_000 : 100_000);
  const reps = numberOption(args, '--reps', quick ? 1 : 3);
  process.env.BENCH_WORK = String(numberOption(args, '--work', 20));
  const broker = await startBroker({ overrides: { 'group.initial.rebalance.delay.ms': 0 } });
  const dir = mkdtempSync(join(tmpdir(), 'brook-streams-threads-bench-'));
  try {
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    await admin.createTopics(
      ['bench-mt-in', 'bench-mt-out'].map((topic) => ({
        topic,
        numPartitions: PARTITIONS,
        replicationFactor: 1,
      })),
    );
    await admin.close();
    const producer = new Producer({ bootstrapServers: broker.bootstrap, lingerMs: 20 });
    for (let i = 0; i < records; i += 5000)
      await producer.sendBatch(
        Array.from({ length: Math.min(5000, records - i) }, (_, j) => ({
          topic: 'bench-mt-in',
          key: Buffer.from(`key-${(i + j) % KEYS}`),
          value: Buffer.from(`a page view of record ${i + j}`),
        })),
      );
    await producer.close();
    const rates = new Map<string, number[]>(SETUPS.map((s) => [s.name, []]));
    const cores = new Map<string, number[]>(SETUPS.map((s) => [s.name, []]));
    const ceilings: number[] = [];
    let runNo = 0;
    for (let r = 0; r < reps; r++) {
      const ceiling = (await spin(2, 3000)) / (await spin(1, 3000));
      ceilings.push(ceiling);
      console.log(`  plain SHA-256 workers, 2 over 1: ${ceiling.toFixed(2)}`);
      for (let k = 0; k < SETUPS.length; k++) {
        const setup = SETUPS[(k + r) % SETUPS.length]!;
        const result = await once(broker.bootstrap, setup, records, dir, runNo++);
        rates.get(setup.name)!.push(result.rate);
        cores.get(setup.name)!.push(result.cores);
        console.log(
          `  run ${runNo}: ${setup.name.padEnd(26)} ${Math.round(result.rate)} records/s, ${result.cores.toFixed(2)} cores`,
        );
      }
    }
    console.log(
      `records: ${records}, ${PARTITIONS} partitions, ${KEYS} keys, ${process.env.BENCH_WORK} SHA-256 rounds per record, count into LMDB, ${reps} repetitions`,
    );
    const fmt = (xs: number[]) =>
      `${Math.round(median(xs))} [${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))}]`;
    const fmt2 = (xs: number[]) =>
      `${median(xs).toFixed(2)} [${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}]`;
    for (const s of SETUPS)
      console.log(
        `${s.name.padEnd(26)} ${fmt(rates.get(s.name)!)} records/s, cores ${fmt2(cores.get(s.name)!)}`,
      );
    const one = rates.get(SETUPS[0]!.name)!;
    const two = rates.get(SETUPS[1]!.name)!;
    const ratios = two.map((t, i) => t / one[i]!);
    console.log(
      `2 workers / 1 worker: ${fmt2(ratios)} (per repetition); ceiling (plain workers, 2 over 1): ${fmt2(ceilings)}`,
    );
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
