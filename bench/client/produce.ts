// Producer benchmark: Brook's client, kafkajs and @platformatic/kafka send the same workload (N records of S
// bytes, acks=all, no compression, idempotence off unless --idempotent) to the same broker process in one run,
// each repeated at least three times in turns, so a noisy neighbour hurts all three alike. Reported per client:
// records/s (median and range) and per-record latency from hand-over to acknowledgement (p50, p99).
//
// Each client is used the way its documentation shows: Brook's send() per record (it batches by linger.ms and
// batch.size); kafkajs and @platformatic/kafka take arrays of messages per call, so they get --chunk records per
// call with up to --window calls in flight. All three have at most window x chunk records outstanding. Usage: node dist/bench/client/produce.js [--records N] [--size S]
// [--chunk C] [--window W] [--repetitions R] [--idempotent] [--bootstrap host:port]

import { Producer as PlatformaticProducer } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { startBroker } from '../../test/helpers/broker-process.js';
import { formatTable, Histogram, repeat, repetitionsMin, summarize } from '../harness/index.js';

interface Options {
  records: number;
  size: number;
  chunk: number;
  window: number;
  repetitions: number;
  idempotent: boolean;
  bootstrap: string | undefined;
}

function parse(args: string[]): Options {
  const o: Options = {
    records: 100_000,
    size: 100,
    chunk: 100,
    window: 16,
    repetitions: repetitionsMin,
    idempotent: false,
    bootstrap: undefined,
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = () => args[++i]!;
    if (a === '--records') o.records = Number(next());
    else if (a === '--size') o.size = Number(next());
    else if (a === '--chunk') o.chunk = Number(next());
    else if (a === '--window') o.window = Number(next());
    else if (a === '--repetitions') o.repetitions = Number(next());
    else if (a === '--idempotent') o.idempotent = true;
    else if (a === '--bootstrap') o.bootstrap = next();
    else if (a === '--help') {
      console.log(
        'options: --records N --size BYTES --chunk N --window N --repetitions N --idempotent --bootstrap host:port',
      );
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  return o;
}

interface Outcome {
  recordsPerSecond: number;
  latency: Histogram;
}

type Runner = (bootstrap: string, topic: string, o: Options, payload: Buffer) => Promise<Outcome>;

const brook: Runner = async (bootstrap, topic, o, payload) => {
  const producer = new Producer({
    bootstrapServers: bootstrap,
    acks: 'all',
    idempotent: o.idempotent,
    clientId: 'bench-brook',
  });
  await producer.connect();
  const latency = new Histogram('us');
  // The same bound on records outstanding as the others have (window x chunk), so latency means the same thing.
  const outstandingMax = o.window * o.chunk;
  let outstanding = 0;
  let wake: (() => void) | null = null;
  const start = performance.now();
  for (let i = 0; i < o.records; i++) {
    if (outstanding >= outstandingMax) await new Promise<void>((r) => (wake = r));
    const sentAt = performance.now();
    outstanding++;
    producer.send({ topic, value: payload }).then(() => {
      latency.record((performance.now() - sentAt) * 1000);
      outstanding--;
      if (wake !== null && outstanding <= outstandingMax / 2) {
        const w = wake;
        wake = null;
        w();
      }
    });
  }
  while (outstanding > 0) await new Promise<void>((r) => (wake = r));
  const elapsed = performance.now() - start;
  await producer.close();
  return { recordsPerSecond: (o.records * 1000) / elapsed, latency };
};

async function windowed(o: Options, sendChunk: (n: number) => Promise<unknown>): Promise<Outcome> {
  const latency = new Histogram('us');
  const start = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < o.records) {
      const n = Math.min(o.chunk, o.records - next);
      next += n;
      const sentAt = performance.now();
      await sendChunk(n);
      latency.record((performance.now() - sentAt) * 1000, n);
    }
  };
  await Promise.all(Array.from({ length: o.window }, worker));
  return { recordsPerSecond: (o.records * 1000) / (performance.now() - start), latency };
}

const kafkajs: Runner = async (bootstrap, topic, o, payload) => {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'bench-kafkajs', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({
    idempotent: o.idempotent,
    maxInFlightRequests: o.idempotent ? 5 : undefined,
  });
  await producer.connect();
  const messages = Array.from({ length: o.chunk }, () => ({ value: payload }));
  const outcome = await windowed(o, (n) =>
    producer.send({ topic, acks: -1, messages: n === o.chunk ? messages : messages.slice(0, n) }),
  );
  await producer.disconnect();
  return outcome;
};

const platformatic: Runner = async (bootstrap, topic, o, payload) => {
  const producer = new PlatformaticProducer({
    clientId: 'bench-platformatic',
    bootstrapBrokers: [bootstrap],
    acks: -1,
    idempotent: o.idempotent,
  });
  const messages = Array.from({ length: o.chunk }, () => ({ topic, value: payload }));
  const outcome = await windowed(o, (n) =>
    producer.send({ messages: n === o.chunk ? messages : messages.slice(0, n) }),
  );
  await producer.close();
  return outcome;
};

export async function run(args: string[]): Promise<void> {
  const o = parse(args);
  const broker = o.bootstrap === undefined ? await startBroker({ overrides: { 'num.partitions': 1 } }) : null;
  const bootstrap = o.bootstrap ?? broker!.bootstrap;
  const payload = Buffer.alloc(o.size, 'x');
  const clients: [string, Runner][] = [
    ['brook', brook],
    ['kafkajs', kafkajs],
    ['@platformatic/kafka', platformatic],
  ];
  const admin = new Admin({ bootstrapServers: bootstrap });
  const results = new Map<string, Outcome[]>(clients.map(([name]) => [name, []]));
  try {
    // Turns: every repetition runs each client once, on a fresh one-partition topic of its own.
    let turn = 0;
    await repeat(o.repetitions, async (rep) => {
      for (const [name, runner] of clients) {
        const topic = `bench-produce-${rep}-${turn++}`;
        const [created] = await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
        if (created!.error !== null) throw created!.error;
        results.get(name)!.push(await runner(bootstrap, topic, o, payload));
      }
    });
  } finally {
    await admin.close();
    await broker?.stop();
  }
  const rows: string[][] = [];
  const median = (name: string) => summarize(results.get(name)!.map((r) => r.recordsPerSecond)).median;
  for (const [name] of clients) {
    const outcomes = results.get(name)!;
    const rate = summarize(outcomes.map((r) => r.recordsPerSecond));
    const merged = new Histogram('us');
    for (const r of outcomes) merged.merge(r.latency);
    const lat = merged.summary();
    rows.push([
      name,
      `${Math.round(rate.median)} (${Math.round(rate.min)}-${Math.round(rate.max)})`,
      (rate.median / median('brook')).toFixed(2),
      (lat.p50 / 1000).toFixed(1),
      (lat.p99 / 1000).toFixed(1),
    ]);
  }
  console.log(
    `produce: ${o.records} records of ${o.size} B, acks=all, idempotence ${o.idempotent ? 'on' : 'off'}, ${o.repetitions} repetitions; kafkajs and platformatic send ${o.chunk} per call, ${o.window} calls in flight`,
  );
  console.log(formatTable(['client', 'records/s median (range)', 'vs brook', 'p50 ms', 'p99 ms'], rows));
}

if (process.argv[1]?.endsWith('/bench/client/produce.js')) {
  await run(process.argv.slice(2));
}
