// `npm run bench -- mirror [--records N] [--repeats R] [--quick]`: MirrorMaker 2's copy rate against Brook's
// plain consume-and-produce between the same two broker processes, in the same run (BENCHMARKS.md: a ratio
// against what it is built on, medians of R alternating repetitions with the range):
//   mirror   MirrorMaker (dedicated mode, in this process) copying a preloaded topic of N 100-byte records in
//            4 partitions from cluster A to `A.<topic>` on B (acks=all, offsets and offset syncs stored)
//   plain    one Consumer reading the same kind of topic and one Producer (acks=all) writing each record to the
//            same partition of a topic on B, every poll's records sent without waiting for the previous ones
// Rates count from the first record read upstream until the target topic holds all N records (end offsets polled
// every 20 ms), so start-up is left out of both (for MirrorMaker, 1-5 s here: reading its offsets topic, creating
// the remote and internal topics, starting three connectors).

import { Admin, Consumer, Producer } from '../../src/client/index.js';
import { mirrorMetrics } from '../../src/connect/mirror/metrics.js';
import { MirrorMaker } from '../../src/connect/mirror/mirror-maker.js';
import { startBroker } from '../../test/helpers/broker-process.js';

const PARTITIONS = 4;
const VALUE_BYTES = 100;

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function endSum(admin: Admin, topic: string): Promise<number> {
  const tps = Array.from({ length: PARTITIONS }, (_, partition) => ({
    topic,
    partition,
    spec: 'latest' as const,
  }));
  try {
    return (await admin.listOffsets(tps)).reduce((s, o) => s + Math.max(0, o.offset), 0);
  } catch {
    return 0;
  }
}

/** Records/s from the time `firstRead()` gives (waited for) until the target topic holds `records` records. */
async function rateFromFirstRead(
  firstRead: () => number | null,
  bootstrap: string,
  topic: string,
  records: number,
): Promise<number> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    // A fresh client each time: one that asked before the topic existed may keep its "unknown topic" answer.
    const admin = new Admin({ bootstrapServers: bootstrap });
    const n = await endSum(admin, topic).finally(() => admin.close());
    const t0 = firstRead();
    if (n >= records && t0 !== null) return (records * 1000) / (performance.now() - t0);
    if (Date.now() > deadline) throw new Error(`${topic}: ${n} of ${records} after 10 minutes`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The time MirrorMaker's task first read a record of `remoteTopic` (polled from its in-process metrics). */
function watchFirstMirrored(remoteTopic: string): { first: () => number | null; stop: () => void } {
  let first: number | null = null;
  const timer = setInterval(() => {
    if (first === null && mirrorMetrics.all().some((m) => m.topic === remoteTopic && m.recordCount > 0))
      first = performance.now();
  }, 1);
  return { first: () => first, stop: () => clearInterval(timer) };
}

async function preload(bootstrap: string, topic: string, records: number): Promise<void> {
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

/** Copies `records` records; `onFirstRead` gets the time the first records were read. */
async function plainCopy(
  from: string,
  to: string,
  topic: string,
  target: string,
  records: number,
  onFirstRead: (t: number) => void,
): Promise<void> {
  const admin = new Admin({ bootstrapServers: to });
  await admin.createTopics([{ topic: target, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  await admin.close();
  const consumer = new Consumer({
    bootstrapServers: from,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const producer = new Producer({ bootstrapServers: to, acks: 'all' });
  consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })));
  let copied = 0;
  const sent: Promise<unknown>[] = [];
  while (copied < records) {
    const batch = await consumer.poll(500);
    if (copied === 0 && batch.length > 0) onFirstRead(performance.now());
    copied += batch.length;
    sent.push(
      producer.sendBatch(
        batch.map((r) => ({
          topic: target,
          partition: r.partition,
          key: r.key,
          value: r.value,
          timestamp: r.timestamp,
          headers: r.headers,
        })),
      ),
    );
  }
  await Promise.all(sent);
  await producer.close();
  await consumer.close();
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--help')) {
    process.stdout.write('usage: npm run bench -- mirror [--records N] [--repeats R] [--quick]\n');
    return;
  }
  const quick = args.includes('--quick');
  const records = option(args, '--records', quick ? 100_000 : 300_000);
  const repeats = option(args, '--repeats', quick ? 1 : 3);
  const [a, b] = await Promise.all([startBroker(), startBroker()]);
  const results = { mirror: [] as number[], plain: [] as number[] };
  try {
    for (let rep = 0; rep < repeats; rep++) {
      const mirrored = `bench-mirror-${rep}`;
      await preload(a.bootstrap, mirrored, records);
      const watch = watchFirstMirrored(`A.${mirrored}`);
      const mm = await MirrorMaker.start(
        {
          clusters: 'A, B',
          'A.bootstrap.servers': a.bootstrap,
          'B.bootstrap.servers': b.bootstrap,
          'A->B.enabled': 'true',
          'A->B.topics': mirrored,
          'replication.factor': '1',
          'offset-syncs.topic.replication.factor': '1',
          'heartbeats.topic.replication.factor': '1',
          'checkpoints.topic.replication.factor': '1',
          'offset.storage.replication.factor': '1',
          'offset.flush.interval.ms': '10000',
        },
        () => {},
      );
      results.mirror.push(await rateFromFirstRead(watch.first, b.bootstrap, `A.${mirrored}`, records));
      watch.stop();
      await mm.stop();

      const plain = `bench-plain-${rep}`;
      await preload(a.bootstrap, plain, records);
      let firstRead: number | null = null;
      const copy = plainCopy(a.bootstrap, b.bootstrap, plain, `copy-${plain}`, records, (t) => {
        firstRead = t;
      });
      results.plain.push(await rateFromFirstRead(() => firstRead, b.bootstrap, `copy-${plain}`, records));
      await copy;
    }
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
  const fmt = (xs: number[]) =>
    `${Math.round(median(xs))} (${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))})`;
  process.stdout.write(
    `records per side: ${records} x ${VALUE_BYTES} B in ${PARTITIONS} partitions, repeats: ${repeats}\n`,
  );
  process.stdout.write(
    `MirrorMaker  ${fmt(results.mirror)} rec/s   plain consume-and-produce  ${fmt(results.plain)} rec/s   ratio ${(median(results.mirror) / median(results.plain)).toFixed(2)}\n`,
  );
}
