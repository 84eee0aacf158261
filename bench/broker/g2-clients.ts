// Generator G2: real clients producing to the broker, which measures what users see (client and broker
// together), beside G1 which measures the broker alone.
//
// - kafkajs and @platformatic/kafka: in this process, `sendsInFlight` concurrent send() calls, each carrying
//   about one batch (`batchBytes` of records) for one partition, partitions in turn; records are random
//   Buffers made before the run. Counted like G1: acknowledgements inside the measured window after a
//   warm-up; latency of each send from the moment it was issued.
// - kcat (librdkafka): a child `kcat -P` fed newline-separated random text on stdin for the window, with
//   linger.ms 5 and batch.size 128 KiB; the figure is the records written over the time from the first write
//   until kcat exits, which it does only once every record is delivered. No warm-up and no latency: kcat reports
//   neither.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Producer } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { assert } from '../../src/common/assert.js';
import { Histogram } from '../harness/histogram.js';

export const g2Clients = ['kafkajs', 'platformatic', 'kcat'] as const;
export type G2Client = (typeof g2Clients)[number];

/** Random records made before a run: distinct batches per partition, cycled. */
const variants = 4;
const kcatExitTimeoutMs = 60_000;

export interface G2Options {
  client: G2Client;
  host: string;
  port: number;
  topic: string;
  partitions: number;
  recordBytes: number;
  batchBytes: number;
  sendsInFlight: number;
  acks: 1 | -1;
  warmupMs: number;
  durationMs: number;
}

export interface G2Result {
  seconds: number;
  records: number;
  payloadBytes: number;
  /** Per send() (one batch), from its issue; empty for kcat. */
  latency: Histogram;
  errors: number;
}

export function runG2(options: G2Options): Promise<G2Result> {
  return options.client === 'kcat' ? runKcat(options) : runInProcess(options);
}

type SendBatch = (partition: number, variant: number) => Promise<void>;

async function runInProcess(options: G2Options): Promise<G2Result> {
  const perSend = Math.max(1, Math.floor(options.batchBytes / options.recordBytes));
  const values = Array.from({ length: options.partitions * variants }, () =>
    Array.from({ length: perSend }, () => randomBytes(options.recordBytes)),
  );
  const { send, close } = await connectClient(options, values, perSend);
  try {
    return await drive(options, perSend, send);
  } finally {
    await close();
  }
}

async function connectClient(
  options: G2Options,
  values: Buffer[][],
  perSend: number,
): Promise<{ send: SendBatch; close: () => Promise<void> }> {
  const bootstrap = `${options.host}:${options.port}`;
  if (options.client === 'kafkajs') {
    const kafka = new Kafka({ clientId: 'brook-bench-g2', brokers: [bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const batches = values.map((batch, i) =>
      batch.map((value) => ({ value, partition: Math.floor(i / variants) })),
    );
    return {
      send: async (partition, variant) => {
        await producer.send({
          topic: options.topic,
          acks: options.acks,
          messages: batches[partition * variants + variant]!,
        });
      },
      close: () => producer.disconnect(),
    };
  }
  const producer = new Producer({
    clientId: 'brook-bench-g2',
    bootstrapBrokers: [bootstrap],
    acks: options.acks,
  });
  const batches = values.map((batch, i) =>
    batch.map((value) => ({ topic: options.topic, value, partition: Math.floor(i / variants) })),
  );
  assert(
    batches.every((b) => b.length === perSend),
    'every send carries the same records',
  );
  return {
    send: async (partition, variant) => {
      await producer.send({ messages: batches[partition * variants + variant]! });
    },
    close: () => producer.close(),
  };
}

async function drive(options: G2Options, perSend: number, send: SendBatch): Promise<G2Result> {
  const latency = new Histogram('us');
  const start = performance.now();
  const windowStart = start + options.warmupMs;
  const windowEnd = windowStart + options.durationMs;
  let next = 0;
  let records = 0;
  let errors = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < windowEnd) {
      const turn = next++;
      const partition = turn % options.partitions;
      const variant = Math.floor(turn / options.partitions) % variants;
      const issued = performance.now();
      try {
        await send(partition, variant);
      } catch {
        errors++;
        continue;
      }
      const now = performance.now();
      if (now >= windowStart && now < windowEnd) {
        latency.record((now - issued) * 1000);
        records += perSend;
      }
    }
  };
  await Promise.all(Array.from({ length: options.sendsInFlight }, worker));
  const seconds = options.durationMs / 1000;
  return { seconds, records, payloadBytes: records * options.recordBytes, latency, errors };
}

async function runKcat(options: G2Options): Promise<G2Result> {
  // Lines of printable random text (base64), `recordBytes` each before the newline kcat splits on.
  const linesPerChunk = Math.max(1, Math.floor((256 * 1024) / (options.recordBytes + 1)));
  const chunks = Array.from({ length: variants }, () => {
    const lines: string[] = [];
    for (let i = 0; i < linesPerChunk; i++) {
      lines.push(randomBytes(options.recordBytes).toString('base64').slice(0, options.recordBytes));
    }
    return Buffer.from(`${lines.join('\n')}\n`);
  });
  const child = spawn(
    'kcat',
    [
      '-P',
      '-b',
      `${options.host}:${options.port}`,
      '-t',
      options.topic,
      '-X',
      'linger.ms=5',
      '-X',
      `batch.size=${options.batchBytes}`,
      '-X',
      `acks=${options.acks === -1 ? 'all' : '1'}`,
      '-X',
      'max.in.flight=5',
      '-X',
      'enable.idempotence=false',
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (data: Buffer) => {
    stderr = (stderr + data.toString()).slice(-4096);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const start = performance.now();
    const end = start + options.durationMs;
    let records = 0;
    for (let i = 0; performance.now() < end && child.exitCode === null; i++) {
      records += linesPerChunk;
      if (!child.stdin!.write(chunks[i % variants]!)) await once(child.stdin!, 'drain');
    }
    child.stdin!.end();
    const code = await withTimeout(exited, kcatExitTimeoutMs, child);
    const seconds = (performance.now() - start) / 1000;
    assert(code === 0, `kcat exited with ${code}: ${stderr}`);
    return {
      seconds,
      records,
      payloadBytes: records * options.recordBytes,
      latency: new Histogram('us'),
      errors: (stderr.match(/ERROR|Failed/g) ?? []).length,
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

async function withTimeout(
  exited: Promise<number | null>,
  ms: number,
  child: ChildProcess,
): Promise<number | null> {
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}
