// Consumer benchmark: Brook's client, kafkajs, @platformatic/kafka and kcat read the same N records (S bytes each, one
// partition, written once by Brook's producer) from the beginning, each turn in a group of its own. Clients
// take turns (A B C, A B C, ...) after one unmeasured warm-up turn each (JIT). Reported per client:
// - records/s from the first record received to the Nth (the fetch path: decode, prefetch, hand-over);
// - the time from subscribe to the first record (group join, offset lookup, first fetch), and records/s over the
//   whole turn including it;
// - CPU microseconds of this process per record over the whole turn, and the load average.
// All also appended to bench/results/<date>-client-consume.jsonl.
//
// Each client is used the way its documentation shows, with its default options: Brook's poll() (up to
// max.poll.records, 500, per call) and its async iterator per record ("brook-iterator"), kafkajs's
// run({ eachBatch }), @platformatic/kafka's stream per record. kcat (librdkafka, a child process) reads the
// partition without a group (-p 0 -o beginning -c N), so its time to the first record has no join in it; its
// first and last records are when its output showed them, and its CPU is the child's (kcat.ts).
// Usage: node dist/bench/client/consume.js [--records N] [--size S] [--repetitions R] [--clients a,b]
// [--no-results] [--results-dir DIR] [--bootstrap host:port] [--null-broker] (clients read from a null broker's
// memory, so the figures are the clients' own cost).

import os from 'node:os';
import { Consumer as PlatformaticConsumer } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import {
  formatTable,
  ResultWriter,
  repeat,
  repetitionsMin,
  type Summary,
  summarize,
} from '../harness/index.js';
import { childrenCpuMicros, chooseClients, startBenchTarget } from './common.js';
import { kcatAvailable, kcatConsume } from './kcat.js';

interface Options {
  records: number;
  size: number;
  repetitions: number;
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
    repetitions: repetitionsMin,
    clients: undefined,
    results: true,
    resultsDir: undefined,
    bootstrap: undefined,
    nullBroker: false,
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--records') o.records = Number(args[++i]);
    else if (a === '--size') o.size = Number(args[++i]);
    else if (a === '--repetitions') o.repetitions = Number(args[++i]);
    else if (a === '--clients') o.clients = args[++i];
    else if (a === '--no-results') o.results = false;
    else if (a === '--results-dir') o.resultsDir = args[++i];
    else if (a === '--bootstrap') o.bootstrap = args[++i];
    else if (a === '--null-broker') o.nullBroker = true;
    else {
      throw new Error(
        `unknown option ${a} (--records N --size S --repetitions R --clients a,b --no-results --results-dir DIR --bootstrap host:port --null-broker)`,
      );
    }
  }
  return o;
}

/** A turn's clock: the runner calls seen(n) as records arrive and resolves once all were seen. */
class Clock {
  readonly start = performance.now();
  private readonly cpu0 = process.cpuUsage();
  firstAt = 0;
  lastAt = 0;
  count = 0;
  cpuMicros = 0;

  constructor(readonly records: number) {}

  /** Counts n records; true once all were seen. */
  seen(n: number): boolean {
    if (n > 0 && this.count === 0) this.firstAt = performance.now();
    this.count += n;
    if (this.count >= this.records && this.lastAt === 0) {
      this.lastAt = performance.now();
      const cpu = process.cpuUsage(this.cpu0);
      this.cpuMicros = cpu.user + cpu.system;
    }
    return this.count >= this.records;
  }
}

interface ConsumeTurn {
  /** From the first record to the last. */
  recordsPerSecond: number;
  /** From subscribe to the last record. */
  totalRecordsPerSecond: number;
  firstRecordMs: number;
  cpuMicrosPerRecord: number;
  load1: number;
}

function turnOf(clock: Clock): ConsumeTurn {
  return {
    recordsPerSecond: ((clock.records - 1) * 1000) / Math.max(clock.lastAt - clock.firstAt, 0.001),
    totalRecordsPerSecond: (clock.records * 1000) / (clock.lastAt - clock.start),
    firstRecordMs: clock.firstAt - clock.start,
    cpuMicrosPerRecord: clock.cpuMicros / clock.records,
    load1: os.loadavg()[0]!,
  };
}

type Runner = (bootstrap: string, topic: string, group: string, records: number) => Promise<ConsumeTurn>;

const brook: Runner = async (bootstrap, topic, group, records) => {
  const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: group, autoOffsetReset: 'earliest' });
  const clock = new Clock(records);
  consumer.subscribe([topic]);
  while (!clock.seen((await consumer.poll(1000)).length));
  await consumer.close();
  return turnOf(clock);
};

const brookIterator: Runner = async (bootstrap, topic, group, records) => {
  const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: group, autoOffsetReset: 'earliest' });
  const clock = new Clock(records);
  consumer.subscribe([topic]);
  for await (const _ of consumer) {
    if (clock.seen(1)) break;
  }
  await consumer.close();
  return turnOf(clock);
};

const kafkajs: Runner = async (bootstrap, topic, group, records) => {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'bench-kafkajs', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  const clock = new Clock(records);
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve) => {
    consumer.run({
      eachBatch: async ({ batch }) => {
        if (clock.seen(batch.messages.length)) resolve();
      },
    });
  });
  await consumer.disconnect();
  return turnOf(clock);
};

const platformatic: Runner = async (bootstrap, topic, group, records) => {
  const consumer = new PlatformaticConsumer({
    clientId: 'bench-platformatic',
    bootstrapBrokers: [bootstrap],
    groupId: group,
  });
  const clock = new Clock(records);
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest' });
  for await (const _ of stream) {
    if (clock.seen(1)) break;
  }
  await stream.close();
  await consumer.close(true);
  return turnOf(clock);
};

const kcat: Runner = async (bootstrap, topic, _group, records) => {
  const cpu0 = process.cpuUsage();
  const children0 = childrenCpuMicros();
  const seen = await kcatConsume(bootstrap, topic, records);
  const cpu = process.cpuUsage(cpu0);
  const cpuMicros = cpu.user + cpu.system + childrenCpuMicros() - children0;
  return {
    recordsPerSecond: ((records - 1) * 1000) / Math.max(seen.lastAt - seen.firstAt, 0.001),
    totalRecordsPerSecond: (records * 1000) / (seen.lastAt - seen.startedAt),
    firstRecordMs: seen.firstAt - seen.startedAt,
    cpuMicrosPerRecord: cpuMicros / records,
    load1: os.loadavg()[0]!,
  };
};

function cell(s: Summary, digits = 0): string {
  const f = (v: number) => (digits === 0 ? String(Math.round(v)) : v.toFixed(digits));
  return `${f(s.median)} (${f(s.min)}-${f(s.max)})`;
}

export async function run(args: string[]): Promise<void> {
  const o = parse(args);
  let clients = chooseClients<Runner>(
    [
      ['brook', brook],
      ['brook-iterator', brookIterator],
      ['kafkajs', kafkajs],
      ['@platformatic/kafka', platformatic],
      ['kcat', kcat],
    ],
    o.clients,
  );
  if (clients.some(([name]) => name === 'kcat') && !(await kcatAvailable())) {
    if (o.clients !== undefined) {
      throw new Error('kcat was asked for but is not installed (apt-get install kcat)');
    }
    console.log('kcat is not installed (apt-get install kcat): running without it');
    clients = clients.filter(([name]) => name !== 'kcat');
  }
  const target = await startBenchTarget(o);
  const bootstrap = target.bootstrap;
  const topic = `bench-consume-${process.pid}`;
  const turns = new Map<string, ConsumeTurn[]>(clients.map(([name]) => [name, []]));
  const writer = o.results ? new ResultWriter({ bench: 'client-consume', args, dir: o.resultsDir }) : null;
  try {
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
    await admin.close();
    const producer = new Producer({ bootstrapServers: bootstrap, lingerMs: 10, batchSize: 65_536 });
    const payload = Buffer.alloc(o.size, 'x');
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < o.records; i++) sends.push(producer.send({ topic, value: payload }));
    await Promise.all(sends);
    await producer.close();
    let group = 0;
    for (const [, runner] of clients) await runner(bootstrap, topic, `bench-warmup-${group++}`, o.records);
    await repeat(o.repetitions, async () => {
      for (const [name, runner] of clients)
        turns.get(name)!.push(await runner(bootstrap, topic, `bench-${group++}`, o.records));
    });
  } finally {
    await target.stop();
  }
  const base = summarize(turns.get(clients[0]![0])!.map((t) => t.recordsPerSecond)).median;
  const rows = clients.map(([name]) => {
    const ts = turns.get(name)!;
    const rate = summarize(ts.map((t) => t.recordsPerSecond));
    const total = summarize(ts.map((t) => t.totalRecordsPerSecond));
    const first = summarize(ts.map((t) => t.firstRecordMs));
    const cpu = summarize(ts.map((t) => t.cpuMicrosPerRecord));
    const load = summarize(ts.map((t) => t.load1));
    if (writer !== null) {
      const details = { client: name, records: o.records, size: o.size };
      writer.figure(`${name}-records-per-second`, 'records/s', rate, details);
      writer.figure(`${name}-total-records-per-second`, 'records/s', total, details);
      writer.figure(`${name}-first-record`, 'ms', first, details);
      writer.figure(`${name}-cpu-per-record`, 'us', cpu, details);
      writer.figure(`${name}-load1`, 'load', load, { client: name });
    }
    return [
      name,
      cell(rate),
      (rate.median / base).toFixed(2),
      cell(first, 1),
      cell(total),
      cell(cpu, 2),
      `${load.min.toFixed(1)}-${load.max.toFixed(1)}`,
    ];
  });
  console.log(
    `consume: ${o.records} records of ${o.size} B from one partition, ${o.repetitions} repetitions after a warm-up turn each, new group each turn`,
  );
  console.log(
    formatTable(
      [
        'client',
        'records/s first-last',
        `vs ${clients[0]![0]}`,
        'first record ms',
        'records/s incl. join',
        'CPU us/record',
        'load',
      ],
      rows,
    ),
  );
  if (writer !== null) console.log(`results: ${writer.runId}`);
}

if (process.argv[1]?.endsWith('/bench/client/consume.js')) {
  await run(process.argv.slice(2));
}
