// Producer benchmark: Brook's client, kafkajs, @platformatic/kafka and kcat send the same workload (N records of S
// bytes, acks=all, no compression, idempotence off unless --idempotent) to the same broker process in one run.
// Clients take turns (A B C, A B C, ...), each turn on a fresh one-partition topic, so a noisy neighbour hurts all
// alike; one unmeasured warm-up turn each comes first (JIT). Reported per client: records/s from the first send
// to the last acknowledgement (median and range), per-record latency from hand-over to acknowledgement (p50,
// p99), CPU microseconds of this process per record, and the load average; all also appended to
// bench/results/<date>-client-produce.jsonl.
//
// Each client is used the way its documentation shows: Brook's send() per record (it batches by linger.ms and
// batch.size); kafkajs and @platformatic/kafka take arrays of messages per call, so they get --chunk records per
// call with up to --window calls in flight, and so does Brook's sendBatch() ("brook-batch"). All have at most
// window x chunk records outstanding. kcat (librdkafka, a child process) sends the whole turn from a file and
// is timed from spawn to exit, with no latency and librdkafka's own window (kcat.ts). Usage: node dist/bench/client/produce.js [--records N] [--size S]
// [--chunk C] [--window W] [--repetitions R] [--warmup N] [--idempotent] [--brook-linger MS] [--clients a,b]
// [--no-results] [--results-dir DIR] [--bootstrap host:port] [--null-broker]. With --null-broker the clients send to
// a null broker (answers from memory, no disk, no validation), so the figures are the clients' own cost.

import { Producer as PlatformaticProducer } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { formatTable, Histogram, ResultWriter, repeat, repetitionsMin } from '../harness/index.js';
import {
  chooseClients,
  measureTurn,
  startBenchTarget,
  summarizeTurns,
  type Turn,
  tableRows,
} from './common.js';
import { kcatAvailable, kcatProduce } from './kcat.js';

interface Options {
  records: number;
  size: number;
  chunk: number;
  window: number;
  repetitions: number;
  warmup: number;
  idempotent: boolean;
  /** Brook's linger.ms; undefined: its default (5 ms, as Kafka 4). */
  brookLingerMs: number | undefined;
  clients: string | undefined;
  results: boolean;
  /** Where the result file goes (default bench/results). */
  resultsDir: string | undefined;
  bootstrap: string | undefined;
  nullBroker: boolean;
}

function parse(args: string[]): Options {
  const o: Options = {
    records: 100_000,
    size: 100,
    chunk: 100,
    window: 16,
    repetitions: repetitionsMin,
    warmup: 20_000,
    idempotent: false,
    brookLingerMs: undefined,
    clients: undefined,
    results: true,
    resultsDir: undefined,
    bootstrap: undefined,
    nullBroker: false,
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = () => args[++i]!;
    if (a === '--records') o.records = Number(next());
    else if (a === '--size') o.size = Number(next());
    else if (a === '--chunk') o.chunk = Number(next());
    else if (a === '--window') o.window = Number(next());
    else if (a === '--repetitions') o.repetitions = Number(next());
    else if (a === '--warmup') o.warmup = Number(next());
    else if (a === '--idempotent') o.idempotent = true;
    else if (a === '--brook-linger') o.brookLingerMs = Number(next());
    else if (a === '--clients') o.clients = next();
    else if (a === '--no-results') o.results = false;
    else if (a === '--results-dir') o.resultsDir = next();
    else if (a === '--bootstrap') o.bootstrap = next();
    else if (a === '--null-broker') o.nullBroker = true;
    else if (a === '--help') {
      console.log(
        'options: --records N --size BYTES --chunk N --window N --repetitions N --warmup N --idempotent --brook-linger MS --clients a,b --no-results --results-dir DIR --bootstrap host:port --null-broker',
      );
      process.exit(0);
    } else throw new Error(`unknown option ${a}`);
  }
  return o;
}

/** Sends `records` records to `topic`; resolves with the latency histogram after the last acknowledgement. */
type Runner = (
  bootstrap: string,
  topic: string,
  o: Options,
  records: number,
  payload: Buffer,
) => Promise<Turn>;

/**
 * PRIMING: every in-process client sends one record to the turn's topic and waits for it before the clock starts,
 * so that connecting and learning the topic's leader are outside every client's turn alike. Without it the
 * clients that learn a topic on its first send (Brook, kafkajs) had their first window of records wait for a
 * metadata round trip inside the turn, 1.6 % of a turn's records at the default window, enough to own its p99,
 * while @platformatic/kafka's metadata was fetched before its clock. The turn's N records come after it.
 */

/** Brook's per-record run times one record in this many. */
const LATENCY_SAMPLE_EVERY = 10;

const brook: Runner = async (bootstrap, topic, o, records, payload) => {
  const producer = new Producer({
    bootstrapServers: bootstrap,
    acks: 'all',
    idempotent: o.idempotent,
    lingerMs: o.brookLingerMs,
    clientId: 'bench-brook',
  });
  await producer.connect();
  await producer.send({ topic, value: payload }); // see PRIMING
  // The same bound on records outstanding as the others have (window x chunk), so latency means the same thing.
  const outstandingMax = o.window * o.chunk;
  const turn = await measureTurn(records, async () => {
    const latency = new Histogram('us');
    let outstanding = 0;
    let wake: (() => void) | null = null;
    const settled = (): void => {
      outstanding--;
      // Refill a chunk's worth at a time, as the chunked clients' workers do when a call returns.
      if (wake !== null && outstanding <= outstandingMax - o.chunk) {
        const w = wake;
        wake = null;
        w();
      }
    };
    for (let i = 0; i < records; i++) {
      if (outstanding >= outstandingMax) await new Promise<void>((r) => (wake = r));
      outstanding++;
      if (i % LATENCY_SAMPLE_EVERY === 0) {
        // Every LATENCY_SAMPLE_EVERY-th record's latency stands for its neighbours' (the chunked clients take one
        // clock reading per call of --chunk records): timing every record cost more than the producer itself.
        // The clock starts before send(), as the chunked clients' starts before their call.
        const sentAt = performance.now();
        producer.send({ topic, value: payload }).then(() => {
          latency.record((performance.now() - sentAt) * 1000, LATENCY_SAMPLE_EVERY);
          settled();
        });
      } else {
        producer.send({ topic, value: payload }).then(settled);
      }
    }
    while (outstanding > 0) await new Promise<void>((r) => (wake = r));
    return latency;
  });
  await producer.close();
  return turn;
};

/** Up to o.window calls of sendChunk in flight, each of o.chunk records; latency per record from its call. */
function windowed(o: Options, records: number, sendChunk: (n: number) => Promise<unknown>): Promise<Turn> {
  return measureTurn(records, async () => {
    const latency = new Histogram('us');
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < records) {
        const n = Math.min(o.chunk, records - next);
        next += n;
        const sentAt = performance.now();
        await sendChunk(n);
        latency.record((performance.now() - sentAt) * 1000, n);
      }
    };
    await Promise.all(Array.from({ length: o.window }, worker));
    return latency;
  });
}

const brookBatch: Runner = async (bootstrap, topic, o, records, payload) => {
  const producer = new Producer({
    bootstrapServers: bootstrap,
    acks: 'all',
    idempotent: o.idempotent,
    lingerMs: o.brookLingerMs,
    clientId: 'bench-brook',
  });
  await producer.connect();
  await producer.send({ topic, value: payload }); // see PRIMING
  const messages = Array.from({ length: o.chunk }, () => ({ topic, value: payload }));
  const turn = await windowed(o, records, (n) =>
    producer.sendBatch(n === o.chunk ? messages : messages.slice(0, n)),
  );
  await producer.close();
  return turn;
};

const kafkajs: Runner = async (bootstrap, topic, o, records, payload) => {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'bench-kafkajs', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({
    idempotent: o.idempotent,
    maxInFlightRequests: o.idempotent ? 5 : undefined,
  });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [{ value: payload }] }); // see PRIMING
  const messages = Array.from({ length: o.chunk }, () => ({ value: payload }));
  const turn = await windowed(o, records, (n) =>
    producer.send({ topic, acks: -1, messages: n === o.chunk ? messages : messages.slice(0, n) }),
  );
  await producer.disconnect();
  return turn;
};

const platformatic: Runner = async (bootstrap, topic, o, records, payload) => {
  const producer = new PlatformaticProducer({
    clientId: 'bench-platformatic',
    bootstrapBrokers: [bootstrap],
    acks: -1,
    idempotent: o.idempotent,
  });
  await producer.send({ messages: [{ topic, value: payload }] }); // see PRIMING
  const messages = Array.from({ length: o.chunk }, () => ({ topic, value: payload }));
  const turn = await windowed(o, records, (n) =>
    producer.send({ messages: n === o.chunk ? messages : messages.slice(0, n) }),
  );
  await producer.close();
  return turn;
};

/**
 * kcat produces the whole turn from a file and is timed from spawn to exit (process start and metadata
 * included, no latency: see kcat.ts). What it wrote is checked against the partition's end offset.
 */
const kcat: Runner = async (bootstrap, topic, o, records, payload) => {
  let turn: Turn | undefined;
  await kcatProduce(bootstrap, topic, records, payload, o.idempotent, async (transfer) => {
    turn = await measureTurn(records, async () => {
      await transfer();
      return undefined;
    });
  });
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    const [end] = await admin.listOffsets([{ topic, partition: 0, spec: 'latest' }]);
    if (end?.offset !== records)
      throw new Error(`kcat wrote ${end?.offset} records to ${topic}, expected ${records}`);
  } finally {
    await admin.close();
  }
  return turn!;
};

const allClients: [string, Runner][] = [
  ['brook', brook],
  ['brook-batch', brookBatch],
  ['kafkajs', kafkajs],
  ['@platformatic/kafka', platformatic],
  ['kcat', kcat],
];

export async function run(args: string[]): Promise<void> {
  const o = parse(args);
  let clients = chooseClients(allClients, o.clients);
  if (clients.some(([name]) => name === 'kcat') && !(await kcatAvailable())) {
    if (o.clients !== undefined)
      throw new Error('kcat was asked for but is not installed (apt-get install kcat)');
    console.log('kcat is not installed (apt-get install kcat): running without it');
    clients = clients.filter(([name]) => name !== 'kcat');
  }
  const target = await startBenchTarget(o, { 'num.partitions': 1 });
  const bootstrap = target.bootstrap;
  const payload = Buffer.alloc(o.size, 'x');
  const admin = new Admin({ bootstrapServers: bootstrap });
  const turns = new Map<string, Turn[]>(clients.map(([name]) => [name, []]));
  const writer = o.results ? new ResultWriter({ bench: 'client-produce', args, dir: o.resultsDir }) : null;
  let topicCount = 0;
  const freshTopic = async (): Promise<string> => {
    const topic = `bench-produce-${process.pid}-${topicCount++}`;
    const [created] = await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
    if (created!.error !== null) throw created!.error;
    return topic;
  };
  try {
    if (o.warmup > 0) {
      for (const [, runner] of clients) await runner(bootstrap, await freshTopic(), o, o.warmup, payload);
    }
    await repeat(o.repetitions, async () => {
      for (const [name, runner] of clients) {
        turns.get(name)!.push(await runner(bootstrap, await freshTopic(), o, o.records, payload));
      }
    });
  } finally {
    await admin.close();
    await target.stop();
  }
  const details = {
    records: o.records,
    size: o.size,
    chunk: o.chunk,
    window: o.window,
    idempotent: o.idempotent,
    broker: target.kind,
  };
  const summaries = summarizeTurns(turns, writer, details);
  console.log(
    `produce against ${target.kind === 'null' ? 'a null broker' : target.kind === 'brook' ? 'a Brook broker' : bootstrap}: ${o.records} records of ${o.size} B, acks=all, idempotence ${o.idempotent ? 'on' : 'off'}, ${o.repetitions} repetitions after a warm-up of ${o.warmup}; chunked clients send ${o.chunk} per call, ${o.window} calls in flight`,
  );
  console.log(
    formatTable(
      [
        'client',
        'records/s median (range)',
        'vs brook',
        'CPU us/record',
        'p50 ms',
        'p99 ms',
        'p99 merged',
        'load',
      ],
      tableRows(summaries, 'brook', true),
    ),
  );
  if (writer !== null) console.log(`results: ${writer.runId}`);
}

if (process.argv[1]?.endsWith('/bench/client/produce.js')) {
  await run(process.argv.slice(2));
}
