// Consumer benchmark: Brook's client, kafkajs and @platformatic/kafka read the same N records (S bytes each, one
// partition, written once by Brook's producer) from the beginning, each in a group of its own, repeated at least
// three times in turns. Reported: records/s from the first poll to the Nth record (median and range).
// Usage: node dist/bench/client/consume.js [--records N] [--size S] [--repetitions R] [--bootstrap host:port]

import { Consumer as PlatformaticConsumer } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { startBroker } from '../../test/helpers/broker-process.js';
import { formatTable, repeat, repetitionsMin, summarize } from '../harness/index.js';

interface Options {
  records: number;
  size: number;
  repetitions: number;
  bootstrap: string | undefined;
}

function parse(args: string[]): Options {
  const o: Options = { records: 100_000, size: 100, repetitions: repetitionsMin, bootstrap: undefined };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--records') o.records = Number(args[++i]);
    else if (a === '--size') o.size = Number(args[++i]);
    else if (a === '--repetitions') o.repetitions = Number(args[++i]);
    else if (a === '--bootstrap') o.bootstrap = args[++i];
    else throw new Error(`unknown option ${a} (--records N --size S --repetitions R --bootstrap host:port)`);
  }
  return o;
}

type Runner = (bootstrap: string, topic: string, group: string, records: number) => Promise<number>;

const brook: Runner = async (bootstrap, topic, group, records) => {
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    groupId: group,
    autoOffsetReset: 'earliest',
    maxPollRecords: 10_000,
  });
  consumer.subscribe([topic]);
  let count = 0;
  const start = performance.now();
  while (count < records) count += (await consumer.poll(1000)).length;
  const elapsed = performance.now() - start;
  await consumer.close();
  return (records * 1000) / elapsed;
};

const kafkajs: Runner = async (bootstrap, topic, group, records) => {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'bench-kafkajs', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const start = performance.now();
  let count = 0;
  await new Promise<void>((resolve) => {
    consumer.run({
      eachBatch: async ({ batch }) => {
        count += batch.messages.length;
        if (count >= records) resolve();
      },
    });
  });
  const elapsed = performance.now() - start;
  await consumer.disconnect();
  return (records * 1000) / elapsed;
};

const platformatic: Runner = async (bootstrap, topic, group, records) => {
  const consumer = new PlatformaticConsumer({
    clientId: 'bench-platformatic',
    bootstrapBrokers: [bootstrap],
    groupId: group,
  });
  const start = performance.now();
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest' });
  let count = 0;
  for await (const _ of stream) {
    if (++count >= records) break;
  }
  const elapsed = performance.now() - start;
  await stream.close();
  await consumer.close(true);
  return (records * 1000) / elapsed;
};

export async function run(args: string[]): Promise<void> {
  const o = parse(args);
  const broker = o.bootstrap === undefined ? await startBroker() : null;
  const bootstrap = o.bootstrap ?? broker!.bootstrap;
  const topic = 'bench-consume';
  const clients: [string, Runner][] = [
    ['brook', brook],
    ['kafkajs', kafkajs],
    ['@platformatic/kafka', platformatic],
  ];
  const rates = new Map<string, number[]>(clients.map(([name]) => [name, []]));
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
    let turn = 0;
    await repeat(o.repetitions, async () => {
      for (const [name, runner] of clients)
        rates.get(name)!.push(await runner(bootstrap, topic, `bench-${turn++}`, o.records));
    });
  } finally {
    await broker?.stop();
  }
  const brookMedian = summarize(rates.get('brook')!).median;
  const rows = clients.map(([name]) => {
    const s = summarize(rates.get(name)!);
    return [
      name,
      `${Math.round(s.median)} (${Math.round(s.min)}-${Math.round(s.max)})`,
      (s.median / brookMedian).toFixed(2),
    ];
  });
  console.log(
    `consume: ${o.records} records of ${o.size} B from one partition, ${o.repetitions} repetitions, new group each time`,
  );
  console.log(formatTable(['client', 'records/s median (range)', 'vs brook'], rows));
}

if (process.argv[1]?.endsWith('/bench/client/consume.js')) {
  await run(process.argv.slice(2));
}
