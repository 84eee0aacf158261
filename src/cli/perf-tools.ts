// `brook producer-perf-test` and `brook consumer-perf-test`: Kafka's perf tools with their options and output
// lines. The producer test prints a progress line every 5 s ("N records sent, R records/sec (M MB/sec), A ms
// avg latency, X ms max latency.") and a final line with the 50th, 95th, 99th and 99.9th latency percentiles;
// the consumer test prints Kafka's CSV header and one line of totals.

import { readFileSync } from 'node:fs';
import { Consumer, type ConsumerOptions } from '../client/consumer.js';
import { type Acks, type CompressionName, Producer, type ProducerOptions } from '../client/producer.js';
import { type ParsedArgs, readProperties, UsageError } from './args.js';
import {
  clientOptions,
  newClient,
  numericProperty,
  out,
  PRODUCER_NUMERIC,
  runTool,
  type Tool,
} from './client-tool.js';
import { Progress } from './progress.js';

const producerTool: Tool = {
  name: 'producer-perf-test',
  summary: 'A tool to test the producer performance.',
  specs: {
    topic: { value: true, help: 'REQUIRED: produce messages to this topic.' },
    'num-records': { value: true, help: 'REQUIRED: number of messages to produce.' },
    'record-size': { value: true, help: 'Message size in bytes (or use --payload-file).' },
    'payload-file': { value: true, help: 'File of payloads, one per line; records pick one at random.' },
    throughput: {
      value: true,
      help: 'REQUIRED: throttle to about this many messages/sec; -1 for no throttling.',
    },
    'producer-props': {
      value: true,
      multi: true,
      help: 'Producer configs as key=value pairs after one flag (acks=1 bootstrap.servers=host:9092 ...).',
    },
    'producer.config': { value: true, help: 'Producer config properties file.' },
    'print-metrics': { help: 'Print a summary of client figures at the end.' },
    'reporting-interval': { value: true, help: 'Progress interval in ms (default 5000).' },
  },
  run: producerPerf,
};

export function runProducerPerfTest(args: string[]): Promise<number> {
  return runTool(producerTool, args);
}

function producerOptions(args: ParsedArgs): ProducerOptions {
  const props: Record<string, string> = {};
  const file = args.get('producer.config');
  if (file !== undefined) Object.assign(props, readProperties(file));
  // Pairs come one per argument (`--producer-props acks=1 linger.ms=5`) or space-separated in one quoted argument.
  for (const raw of args.all('producer-props')) {
    for (const item of raw.split(' ')) {
      if (item === '') continue;
      const i = item.indexOf('=');
      if (i <= 0) throw new UsageError(`Invalid property: ${item}`);
      props[item.slice(0, i)] = item.slice(i + 1);
    }
  }
  const options: ProducerOptions = { ...clientOptions(args, props) };
  if (props.acks !== undefined) options.acks = (props.acks === 'all' ? 'all' : Number(props.acks)) as Acks;
  options.lingerMs = numericProperty(props, 'linger.ms', PRODUCER_NUMERIC['linger.ms']);
  options.batchSize = numericProperty(props, 'batch.size', PRODUCER_NUMERIC['batch.size']);
  options.bufferMemory = numericProperty(props, 'buffer.memory', PRODUCER_NUMERIC['buffer.memory']);
  if (props['compression.type'] !== undefined)
    options.compression = props['compression.type'] as CompressionName;
  if (props['enable.idempotence'] !== undefined) options.idempotent = props['enable.idempotence'] === 'true';
  options.maxRequestSize = numericProperty(props, 'max.request.size', PRODUCER_NUMERIC['max.request.size']);
  return options;
}

/** Latency bookkeeping as Kafka's Stats class does: totals, a window, and samples for percentiles. */
class Stats {
  private count = 0;
  private bytes = 0;
  private latencySum = 0;
  private maxLatency = 0;
  private windowCount = 0;
  private windowBytes = 0;
  private windowLatencySum = 0;
  private windowMax = 0;
  private windowStart = Date.now();
  private readonly start = Date.now();
  private readonly samples: number[] = [];
  private readonly sampleEvery: number;

  constructor(records: number) {
    this.sampleEvery = Math.max(1, Math.floor(records / 500_000));
  }

  record(latencyMs: number, bytes: number): void {
    this.count++;
    this.bytes += bytes;
    this.latencySum += latencyMs;
    this.maxLatency = Math.max(this.maxLatency, latencyMs);
    this.windowCount++;
    this.windowBytes += bytes;
    this.windowLatencySum += latencyMs;
    this.windowMax = Math.max(this.windowMax, latencyMs);
    if (this.count % this.sampleEvery === 0) this.samples.push(latencyMs);
  }

  window(): string {
    const elapsed = Math.max(1, Date.now() - this.windowStart);
    const line = `${this.windowCount} records sent, ${((1000 * this.windowCount) / elapsed).toFixed(1)} records/sec (${(
      (1000 * this.windowBytes) / elapsed / (1024 * 1024)
    ).toFixed(
      2,
    )} MB/sec), ${(this.windowLatencySum / Math.max(1, this.windowCount)).toFixed(1)} ms avg latency, ${this.windowMax.toFixed(1)} ms max latency.`;
    this.windowStart = Date.now();
    this.windowCount = 0;
    this.windowBytes = 0;
    this.windowLatencySum = 0;
    this.windowMax = 0;
    return line;
  }

  total(): string {
    const elapsed = Math.max(1, Date.now() - this.start);
    const sorted = this.samples.sort((a, b) => a - b);
    const pct = (p: number) =>
      Math.floor(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0);
    const rate = (1000 * this.count) / elapsed;
    return `${this.count} records sent, ${rate.toFixed(6)} records/sec (${((1000 * this.bytes) / elapsed / (1024 * 1024)).toFixed(2)} MB/sec), ${(
      this.latencySum / Math.max(1, this.count)
    ).toFixed(
      2,
    )} ms avg latency, ${this.maxLatency.toFixed(2)} ms max latency, ${pct(0.5)} ms 50th, ${pct(0.95)} ms 95th, ${pct(0.99)} ms 99th, ${pct(0.999)} ms 99.9th.`;
  }
}

async function producerPerf(args: ParsedArgs): Promise<number> {
  const topic = args.required('topic');
  const records = args.int('num-records');
  const throughput = args.int('throughput');
  if (records === undefined || records < 0) throw new UsageError('Missing required argument "[num-records]"');
  if (throughput === undefined) throw new UsageError('Missing required argument "[throughput]"');
  const size = args.int('record-size');
  const payloadFile = args.get('payload-file');
  if ((size === undefined) === (payloadFile === undefined))
    throw new UsageError('Either --record-size or --payload-file must be specified but not both.');
  let payloads: Buffer[];
  if (payloadFile !== undefined) {
    payloads = readFileSync(payloadFile, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => Buffer.from(l));
    if (payloads.length === 0) throw new UsageError(`File is empty: ${payloadFile}`);
  } else {
    // Kafka fills the payload with random uppercase letters once; so does this.
    const p = Buffer.alloc(size!);
    for (let i = 0; i < p.length; i++) p[i] = 65 + Math.floor(Math.random() * 26);
    payloads = [p];
  }
  const options = producerOptions(args);
  const producer = newClient(() => new Producer(options));
  const stats = new Stats(records);
  // Kafka's progress lines go to stdout every interval; a terminal also gets a live count on stderr.
  const progress = new Progress();
  let acked = 0;
  const interval = setInterval(() => {
    progress.clear();
    out(stats.window());
  }, args.int('reporting-interval', 5000)!);
  let failure: Error | null = null;
  const start = Date.now();
  let inFlight = 0;
  let drained: (() => void) | null = null;
  try {
    for (let i = 0; i < records && failure === null; i++) {
      if (throughput > 0) {
        const due = start + (i * 1000) / throughput;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const payload =
        payloads.length === 1 ? payloads[0]! : payloads[Math.floor(Math.random() * payloads.length)]!;
      const sentAt = performance.now();
      inFlight++;
      const settle = (): void => {
        inFlight--;
        if (inFlight === 0 && drained !== null) drained();
      };
      producer.send({ topic, value: payload }).then(
        () => {
          stats.record(performance.now() - sentAt, payload.length);
          acked++;
          progress.update(`${acked}/${records} records acknowledged`);
          settle();
        },
        (e: Error) => {
          failure ??= e;
          settle();
        },
      );
      // Yield now and then so responses are read while the loop runs.
      if ((i & 1023) === 1023) await new Promise((r) => setImmediate(r));
    }
    await producer.flush();
    if (inFlight > 0) await new Promise<void>((r) => (drained = r));
  } finally {
    clearInterval(interval);
    progress.clear();
    await producer.close(failure === null ? 30_000 : 0);
  }
  if (failure !== null) {
    process.stderr.write(`Error: ${(failure as Error).message}\n`);
    return 1;
  }
  out(stats.total());
  return 0;
}

const consumerTool: Tool = {
  name: 'consumer-perf-test',
  summary: 'A tool to test the consumer performance.',
  specs: {
    topic: { value: true, help: 'REQUIRED: the topic to consume from.' },
    messages: { value: true, help: 'REQUIRED: the number of messages to consume.' },
    group: { value: true, help: 'The group id to consume in (default: partitions are assigned directly).' },
    'fetch-size': { value: true, help: 'The amount of data to fetch in a single request (default 1048576).' },
    timeout: { value: true, help: 'Exit when no message arrives for this many ms (default 10000).' },
    'from-latest': { help: 'Start from the latest offset instead of the earliest.' },
    'show-detailed-stats': { help: 'Print a line every reporting interval.' },
    'reporting-interval': { value: true, help: 'Interval in ms for detailed stats (default 5000).' },
    'date-format': { value: true, help: 'Only yyyy-MM-dd HH:mm:ss:SSS is supported.' },
    'hide-header': { help: 'Do not print the header line.' },
    'consumer.config': { value: true, help: 'Consumer config properties file.' },
  },
  run: consumerPerf,
};

export function runConsumerPerfTest(args: string[]): Promise<number> {
  return runTool(consumerTool, args);
}

function kafkaDate(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}:${p(d.getMilliseconds(), 3)}`;
}

async function consumerPerf(args: ParsedArgs): Promise<number> {
  const topic = args.required('topic');
  const messages = args.int('messages');
  if (messages === undefined) throw new UsageError('Missing required argument "[messages]"');
  const timeoutMs = args.int('timeout', 10_000)!;
  const props: Record<string, string> = {};
  const file = args.get('consumer.config');
  if (file !== undefined) Object.assign(props, readProperties(file));
  const options: ConsumerOptions = {
    ...clientOptions(args, props),
    groupId: args.get('group'),
    autoOffsetReset: args.has('from-latest') ? 'latest' : 'earliest',
    maxPartitionFetchBytes: args.int('fetch-size', 1_048_576),
    maxPollRecords: 10_000,
    enableAutoCommit: args.has('group'),
  };
  const consumer = newClient(() => new Consumer(options));
  const header =
    'start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec';
  const start = Date.now();
  let joinedAt = start;
  let count = 0;
  let bytes = 0;
  // A terminal gets a live count on stderr, as the producer test's.
  const progress = new Progress();
  try {
    if (args.has('group')) {
      consumer.subscribe([topic]);
    } else {
      const t = await consumer.cluster.topic(topic);
      consumer.assign(t.partitions.map((p) => ({ topic, partition: p.partition })));
    }
    let last = Date.now();
    let first = true;
    const detailed = args.has('show-detailed-stats');
    const every = args.int('reporting-interval', 5000)!;
    let lastReport = Date.now();
    let lastCount = 0;
    let lastBytes = 0;
    if (!args.has('hide-header'))
      out(
        detailed
          ? 'time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec'
          : header,
      );
    while (count < messages && Date.now() - last < timeoutMs) {
      const records = await consumer.poll(Math.min(1000, timeoutMs));
      if (first) {
        joinedAt = Date.now();
        first = records.length === 0;
      }
      if (records.length === 0) continue;
      last = Date.now();
      for (const r of records) {
        count++;
        bytes += (r.value?.length ?? 0) + (r.key?.length ?? 0);
      }
      progress.update(`${count}/${messages} records consumed`);
      if (detailed && Date.now() - lastReport >= every) {
        progress.clear();
        const s = (Date.now() - lastReport) / 1000;
        const mb = (bytes - lastBytes) / (1024 * 1024);
        out(
          `${kafkaDate(Date.now())}, 0, ${(bytes / (1024 * 1024)).toFixed(4)}, ${(mb / s).toFixed(4)}, ${count}, ${((count - lastCount) / s).toFixed(4)}, 0, ${Date.now() - lastReport}, ${(mb / s).toFixed(4)}, ${((count - lastCount) / s).toFixed(4)}`,
        );
        lastReport = Date.now();
        lastCount = count;
        lastBytes = bytes;
      }
    }
  } finally {
    progress.clear();
    await consumer.close();
  }
  const end = Date.now();
  const secs = Math.max(0.001, (end - start) / 1000);
  const fetchSecs = Math.max(0.001, (end - joinedAt) / 1000);
  const mb = bytes / (1024 * 1024);
  if (count < messages) {
    process.stderr.write(
      `WARNING: Exiting before consuming the expected number of messages: timeout (${timeoutMs} ms) exceeded. You can use the --timeout option to increase the timeout.\n`,
    );
  }
  if (!args.has('show-detailed-stats')) {
    out(
      `${kafkaDate(start)}, ${kafkaDate(end)}, ${mb.toFixed(4)}, ${(mb / secs).toFixed(4)}, ${count}, ${(count / secs).toFixed(4)}, ${joinedAt - start}, ${end - joinedAt}, ${(mb / fetchSecs).toFixed(4)}, ${(count / fetchSecs).toFixed(4)}`,
    );
  }
  return 0;
}
