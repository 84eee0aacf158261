// `npm run bench -- mirror [--records N] [--repeats R] [--quick]`: MirrorMaker 2's copy rate against Brook's
// plain consume-and-produce between the same two broker processes, in the same run (BENCHMARKS.md: a ratio
// against what it is built on, medians of R alternating repetitions with the range):
//   mirror   MirrorMaker (dedicated mode, in this process) copying a preloaded topic of N 100-byte records in
//            4 partitions from cluster A to `A.<topic>` on B (acks=all, offsets and offset syncs stored)
//   plain    one Consumer reading the same kind of topic and one Producer (acks=all) writing each record to the
//            same partition of a topic on B, every poll's records sent without waiting for the previous ones,
//            unacknowledged bytes bounded by buffer.memory as MirrorMaker's are (plain-copy.ts)
// Rates count from the first record read upstream to the N-th acknowledged by the target, so start-up is left
// out of both (for MirrorMaker, 1-5 s here: reading its offsets topic, creating
// the remote and internal topics, starting three connectors).

import { Admin, Producer } from '../../src/client/index.js';
import { mirrorMetrics } from '../../src/connect/mirror/metrics.js';
import { MirrorMaker } from '../../src/connect/mirror/mirror-maker.js';
import { MirrorSourceTask } from '../../src/connect/mirror/source-connector.js';
import { startBroker } from '../../test/helpers/broker-process.js';
import { numberOption } from '../harness/options.js';
import { summarize } from '../harness/repeat.js';
import { ResultWriter } from '../harness/results.js';
import { plainCopy } from './plain-copy.js';

export const PARTITIONS = 4;
const VALUE_BYTES = 100;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * When a MirrorSourceTask first returned records of `topic` from poll(), taken as it happens (a timer that looks at
 * the metrics runs only when the task's loop yields, which may be after a whole prefetched fetch is copied).
 */
const firstRead = new Map<string, number>();
{
  const proto = MirrorSourceTask.prototype;
  const poll = proto.poll;
  proto.poll = async function (this: MirrorSourceTask) {
    const records = await poll.call(this);
    const topic = records?.[0]?.topic;
    if (topic !== undefined && !firstRead.has(topic)) firstRead.set(topic, performance.now());
    return records;
  };
}

/**
 * Records/s of MirrorMaker copying `remoteTopic`: from its task's first record read to the N-th record
 * acknowledged by the target (replication-latency-ms counts one observation per acknowledged record, in its
 * in-process metrics, checked every millisecond).
 */
function mirrorRate(remoteTopic: string, records: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 600_000;
    const timer = setInterval(() => {
      const first = firstRead.get(remoteTopic);
      const acked = mirrorMetrics
        .all()
        .filter((m) => m.topic === remoteTopic)
        .reduce((n, m) => n + m.replicationLatencyMs.count, 0);
      if (first !== undefined && acked >= records) {
        clearInterval(timer);
        resolve((records * 1000) / (performance.now() - first));
      } else if (Date.now() > deadline) {
        clearInterval(timer);
        reject(new Error(`${remoteTopic}: ${acked} of ${records} acknowledged after 10 minutes`));
      }
    }, 1);
  });
}

export async function preload(bootstrap: string, topic: string, records: number): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  await admin.createTopics([{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  await admin.close();
  const producer = new Producer({ bootstrapServers: bootstrap, lingerMs: 5, batchSize: 131072 });
  const value = Buffer.alloc(VALUE_BYTES, 'x');
  for (let start = 0; start < records; start += 10_000) {
    const n = Math.min(10_000, records - start);
    await producer.sendBatch(
      Array.from({ length: n }, (_, i) => ({ topic, partition: (start + i) % PARTITIONS, key: null, value })),
    );
  }
  await producer.close();
}

/** The mm2.properties of the benchmark: A -> B for one topic, every replication factor 1. */
export function mirrorProperties(from: string, to: string, topic: string): Record<string, string> {
  return {
    clusters: 'A, B',
    'A.bootstrap.servers': from,
    'B.bootstrap.servers': to,
    'A->B.enabled': 'true',
    'A->B.topics': topic,
    'replication.factor': '1',
    'offset-syncs.topic.replication.factor': '1',
    'heartbeats.topic.replication.factor': '1',
    'checkpoints.topic.replication.factor': '1',
    'offset.storage.replication.factor': '1',
    'offset.flush.interval.ms': '10000',
  };
}

/** Copies `records` records with the plain loop; records/s from the first record read to the last acknowledged. */
async function plainRate(
  from: string,
  to: string,
  topic: string,
  target: string,
  records: number,
): Promise<number> {
  const admin = new Admin({ bootstrapServers: to });
  await admin.createTopics([{ topic: target, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  await admin.close();
  const ms = await plainCopy({ from, to, topic, partitions: PARTITIONS, target, records });
  return (records * 1000) / ms;
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--help')) {
    process.stdout.write('usage: npm run bench -- mirror [--records N] [--repeats R] [--quick]\n');
    return;
  }
  const quick = args.includes('--quick');
  // 1,000,000 by default: a topic that fits under the runtime's 32 MiB window (200,000 x 100 B) is read whole in a
  // burst and then drained, so the rate is not the steady copy's (bench/README.md, MirrorMaker 2 sections).
  const records = numberOption(args, '--records', quick ? 100_000 : 1_000_000);
  const repeats = numberOption(args, '--repeats', quick ? 1 : 3);
  const [a, b] = await Promise.all([startBroker(), startBroker()]);
  const results = { mirror: [] as number[], plain: [] as number[] };
  const writer = new ResultWriter({ bench: 'mirror', args });
  const details = { records, valueBytes: VALUE_BYTES, partitions: PARTITIONS };
  try {
    for (let rep = 0; rep < repeats; rep++) {
      const mirrored = `bench-mirror-${rep}`;
      await preload(a.bootstrap, mirrored, records);
      const rate = mirrorRate(`A.${mirrored}`, records);
      const mm = await MirrorMaker.start(mirrorProperties(a.bootstrap, b.bootstrap, mirrored), () => {});
      results.mirror.push(await rate);
      await mm.stop();

      const plain = `bench-plain-${rep}`;
      await preload(a.bootstrap, plain, records);
      results.plain.push(await plainRate(a.bootstrap, b.bootstrap, plain, `copy-${plain}`, records));
      writer.write('repetition', {
        repetition: rep + 1,
        mirrorRecordsPerSec: results.mirror.at(-1),
        plainRecordsPerSec: results.plain.at(-1),
        ratio: results.mirror.at(-1)! / results.plain.at(-1)!,
        ...details,
      });
      process.stdout.write(
        `repetition ${rep + 1}: MirrorMaker ${Math.round(results.mirror.at(-1)!)} rec/s, plain ${Math.round(results.plain.at(-1)!)} rec/s\n`,
      );
    }
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
  writer.figure('mirror', 'records/s', summarize(results.mirror), details);
  writer.figure('plain-consume-produce', 'records/s', summarize(results.plain), details);
  // The same-run ratio per repetition (mirror and plain alternate, so each pair saw the same machine load).
  writer.figure(
    'ratio',
    'mirror/plain',
    summarize(results.mirror.map((m, i) => m / results.plain[i]!)),
    details,
  );
  process.stdout.write(`results: ${writer.path}\n`);
  const fmt = (xs: number[]) =>
    `${Math.round(median(xs))} (${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))})`;
  process.stdout.write(
    `records per side: ${records} x ${VALUE_BYTES} B in ${PARTITIONS} partitions, repeats: ${repeats}\n`,
  );
  process.stdout.write(
    `MirrorMaker  ${fmt(results.mirror)} rec/s   plain consume-and-produce  ${fmt(results.plain)} rec/s   ratio ${(median(results.mirror) / median(results.plain)).toFixed(2)}\n`,
  );
}
