// `brook verifiable-producer` and `brook verifiable-consumer`: Kafka's VerifiableProducer and VerifiableConsumer,
// the clients Kafka's system tests (kafkatest) drive. They print one JSON event per line on stdout, with the
// fields and field order Kafka's Jackson mapper writes, so those harnesses can run against Brook:
//
//   producer: startup_complete, producer_send_success {key,value,topic,partition,offset} (or producer_send_error
//             {key,value,topic,exception,message}) per record, then shutdown_complete and tool_data
//             {sent,acked,target_throughput,avg_throughput}
//   consumer: startup_complete, partitions_assigned / partitions_revoked {partitions:[{topic,partition}]},
//             records_consumed {count,partitions:[{topic,partition,count,minOffset,maxOffset}]} per poll,
//             record_data per record with --verbose, offsets_committed {offsets,success[,error]} after each
//             commit unless --enable-autocommit, shutdown_complete
//
// Both stop cleanly on SIGTERM or SIGINT, as the harnesses stop them: the producer stops sending, waits for the
// outcomes of what it sent and prints its last events; the consumer leaves its group (revoking its partitions).

import type { AssignorName } from '../client/assignors.js';
import { Consumer, type ConsumerOptions } from '../client/consumer.js';
import { type Acks, Producer, type ProducerOptions } from '../client/producer.js';
import type { TopicPartition } from '../client/requests.js';
import { type ParsedArgs, readProperties, UsageError } from './args.js';
import {
  clientOptions,
  newClient,
  numericProperty,
  PRODUCER_NUMERIC,
  runTool,
  type Tool,
} from './client-tool.js';

function event(name: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ timestamp: Date.now(), name, ...fields })}\n`);
}

function intArg(args: ParsedArgs, name: string, fallback?: number): number | undefined {
  const text = args.get(name);
  if (text === undefined) return fallback;
  if (!/^-?\d+$/.test(text))
    throw new UsageError(`argument --${name}: could not convert '${text}' to Integer`);
  return Number(text);
}

/** Runs `body` with SIGTERM and SIGINT turned into a call of `stop`, and the handlers removed afterwards. */
async function untilSignal<T>(stop: () => void, body: () => Promise<T>): Promise<T> {
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    return await body();
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}

function fileProps(args: ParsedArgs, option: string): Record<string, string> {
  const file = args.get(option);
  return file === undefined ? {} : readProperties(file);
}

const producerTool: Tool = {
  name: 'verifiable-producer',
  summary:
    'This tool produces increasing integers to the specified topic and prints JSON metadata to stdout on each "send" request, making externally visible which messages have been acked and which have not.',
  specs: {
    topic: { value: true, help: 'REQUIRED: produce messages to this topic.' },
    'broker-list': { value: true, help: 'DEPRECATED, use --bootstrap-server instead.' },
    'max-messages': {
      value: true,
      help: 'Produce this many messages. If -1 (default), produce messages until the process is killed.',
    },
    throughput: {
      value: true,
      help: 'If set >= 0, throttle maximum message throughput to *approximately* THROUGHPUT messages/sec.',
    },
    acks: { value: true, help: 'Acks required on each produced message: 0, 1 or -1 (default -1).' },
    'producer.config': { value: true, help: 'Producer config properties file.' },
    'message-create-time': {
      value: true,
      help: 'Send messages with creation time starting at this value, in milliseconds since epoch.',
    },
    'value-prefix': {
      value: true,
      help: 'If specified, each produced value will have this prefix with a dot.',
    },
    'repeating-keys': {
      value: true,
      help: 'If specified, keys count from 0 up to this number (exclusive), then start at 0 again.',
    },
  },
  run: verifiableProducer,
};

export function runVerifiableProducer(args: string[]): Promise<number> {
  return runTool(producerTool, args);
}

function verifiableProducerOptions(args: ParsedArgs): ProducerOptions {
  const props = fileProps(args, 'producer.config');
  const acks = intArg(args, 'acks', -1)!;
  if (acks !== 0 && acks !== 1 && acks !== -1)
    throw new UsageError(`argument --acks: invalid choice: '${acks}' (choose from 0, 1, -1)`);
  const options: ProducerOptions = {
    ...clientOptions(args, props),
    acks: (acks === -1 ? 'all' : acks) as Acks,
    // Kafka's producer turns idempotence off by itself when acks is not all and it was not asked for.
    idempotent:
      props['enable.idempotence'] === undefined ? acks === -1 : props['enable.idempotence'] === 'true',
  };
  options.lingerMs = numericProperty(props, 'linger.ms', PRODUCER_NUMERIC['linger.ms']);
  options.batchSize = numericProperty(props, 'batch.size', PRODUCER_NUMERIC['batch.size']);
  return options;
}

async function verifiableProducer(args: ParsedArgs): Promise<number> {
  const topic = args.required('topic');
  const maxMessages = intArg(args, 'max-messages', -1)!;
  const throughput = intArg(args, 'throughput', -1)!;
  const valuePrefix = intArg(args, 'value-prefix');
  const repeatingKeys = intArg(args, 'repeating-keys');
  let createTime = intArg(args, 'message-create-time', -1)!;
  const producer = newClient(() => new Producer(verifiableProducerOptions(args)));
  const limit = maxMessages < 0 ? Number.POSITIVE_INFINITY : maxMessages;
  let stopping = false;
  let sent = 0;
  let acked = 0;
  let keyCounter = 0;
  const startMs = Date.now();
  const outcomes = new Set<Promise<void>>();
  await untilSignal(
    () => {
      stopping = true;
    },
    async () => {
      event('startup_complete');
      for (let i = 0; i < limit && !stopping; i++) {
        let key: string | null = null;
        if (repeatingKeys !== undefined) {
          key = String(keyCounter++);
          if (keyCounter === repeatingKeys) keyCounter = 0;
        }
        const value = valuePrefix === undefined ? String(i) : `${valuePrefix}.${i}`;
        const timestamp = createTime >= 0 ? createTime : undefined;
        if (createTime >= 0) createTime += Date.now() - startMs;
        sent++;
        const outcome = producer
          .send({ topic, key: key === null ? null : Buffer.from(key), value: Buffer.from(value), timestamp })
          .then(
            (m) => {
              acked++;
              event('producer_send_success', {
                key,
                value,
                topic: m.topic,
                partition: m.partition,
                offset: m.offset,
              });
            },
            (e: Error) => {
              event('producer_send_error', {
                key,
                value,
                topic,
                exception: `class ${e.name}`,
                message: e.message,
              });
            },
          )
          .finally(() => outcomes.delete(outcome));
        outcomes.add(outcome);
        if (throughput > 0) {
          const wait = startMs + ((i + 1) * 1000) / throughput - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        } else if ((i & 1023) === 1023 || outcomes.size > 10_000) {
          // Let responses be read (and their events printed) while the loop runs.
          await new Promise((r) => setImmediate(r));
        }
      }
      await producer.flush().catch(() => {});
      await Promise.all(outcomes);
      await producer.close();
    },
  );
  event('shutdown_complete');
  const elapsedMs = Math.max(1, Date.now() - startMs);
  event('tool_data', {
    sent,
    acked,
    target_throughput: throughput,
    avg_throughput: (1000 * acked) / elapsedMs,
  });
  return 0;
}

const ASSIGNORS: Record<string, AssignorName> = {
  'org.apache.kafka.clients.consumer.RangeAssignor': 'range',
  'org.apache.kafka.clients.consumer.RoundRobinAssignor': 'roundrobin',
  'org.apache.kafka.clients.consumer.StickyAssignor': 'sticky',
  'org.apache.kafka.clients.consumer.CooperativeStickyAssignor': 'cooperative-sticky',
};

const consumerTool: Tool = {
  name: 'verifiable-consumer',
  summary:
    'This tool consumes messages from a specific topic and emits consumer events (e.g. group rebalances, received messages, and offsets committed) as JSON objects to STDOUT.',
  specs: {
    'broker-list': { value: true, help: 'DEPRECATED, use --bootstrap-server instead.' },
    topic: { value: true, help: 'REQUIRED: consumes messages from this topic.' },
    'group-id': { value: true, help: 'REQUIRED: the group id of the consumer group.' },
    'group-instance-id': {
      value: true,
      help: 'A unique identifier of the consumer instance (static membership).',
    },
    'group-protocol': { value: true, help: 'Group protocol: classic (default) or consumer.' },
    'group-remote-assignor': { value: true, help: 'Group remote assignor, with --group-protocol consumer.' },
    'max-messages': {
      value: true,
      help: 'Consume this many messages. If -1 (default), consume until killed.',
    },
    'session-timeout': {
      value: true,
      help: 'The session timeout in ms (default 30000), classic protocol only.',
    },
    verbose: { help: 'Enable to log individual consumed records.' },
    'enable-autocommit': { help: 'Enable offset auto-commit on consumer.' },
    'reset-policy': { value: true, help: 'Offset reset policy: earliest (default), latest or none.' },
    'assignment-strategy': {
      value: true,
      help: 'Assignment strategy class (org.apache.kafka.clients.consumer.RangeAssignor by default), classic only.',
    },
    'consumer.config': { value: true, help: 'Consumer config properties file.' },
  },
  run: verifiableConsumer,
};

export function runVerifiableConsumer(args: string[]): Promise<number> {
  return runTool(consumerTool, args);
}

function verifiableConsumerOptions(args: ParsedArgs): ConsumerOptions {
  const props = fileProps(args, 'consumer.config');
  const groupId = args.required('group-id');
  const reset = args.get('reset-policy') ?? 'earliest';
  if (reset !== 'earliest' && reset !== 'latest' && reset !== 'none')
    throw new UsageError(
      `argument --reset-policy: invalid choice: '${reset}' (choose from earliest, latest, none)`,
    );
  const strategy = args.get('assignment-strategy') ?? 'org.apache.kafka.clients.consumer.RangeAssignor';
  const assignor = ASSIGNORS[strategy];
  if (assignor === undefined) throw new UsageError(`unknown assignment strategy ${strategy}`);
  const protocol = args.get('group-protocol') ?? 'classic';
  if (protocol !== 'classic' && protocol !== 'consumer')
    throw new UsageError(
      `argument --group-protocol: invalid choice: '${protocol}' (choose from classic, consumer)`,
    );
  return {
    ...clientOptions(args, props),
    groupId,
    groupInstanceId: args.get('group-instance-id'),
    groupProtocol: protocol,
    groupRemoteAssignor: args.get('group-remote-assignor'),
    autoOffsetReset: reset,
    enableAutoCommit: args.has('enable-autocommit'),
    sessionTimeoutMs: intArg(args, 'session-timeout', 30_000),
    partitionAssignmentStrategy: [assignor],
  };
}

function partitionsField(tps: TopicPartition[]): { partitions: { topic: string; partition: number }[] } {
  return { partitions: tps.map((tp) => ({ topic: tp.topic, partition: tp.partition })) };
}

async function verifiableConsumer(args: ParsedArgs): Promise<number> {
  const topic = args.required('topic');
  const maxMessages = intArg(args, 'max-messages', -1)!;
  const verbose = args.has('verbose');
  const autoCommit = args.has('enable-autocommit');
  const consumer = newClient(() => new Consumer(verifiableConsumerOptions(args)));
  const finished = (consumed: number) => maxMessages >= 0 && consumed >= maxMessages;
  let stopping = false;
  let consumed = 0;
  await untilSignal(
    () => {
      stopping = true;
    },
    async () => {
      try {
        event('startup_complete');
        consumer.subscribe([topic], {
          onPartitionsAssigned: (tps) => event('partitions_assigned', partitionsField(tps)),
          onPartitionsRevoked: (tps) => event('partitions_revoked', partitionsField(tps)),
        });
        while (!finished(consumed) && !stopping) {
          const records = await consumer.poll(500);
          if (records.length === 0) continue;
          // Records of one partition arrive in offset order; group them by partition, in order of arrival.
          const byPartition = new Map<string, typeof records>();
          for (const r of records) {
            const key = `${r.topic}\u0000${r.partition}`;
            const list = byPartition.get(key);
            if (list === undefined) byPartition.set(key, [r]);
            else list.push(r);
          }
          const summaries = [];
          const offsets: (TopicPartition & { offset: number })[] = [];
          for (const all of byPartition.values()) {
            const list = maxMessages >= 0 ? all.slice(0, maxMessages - consumed) : all;
            if (list.length === 0) continue;
            const first = list[0]!;
            const last = list[list.length - 1]!;
            offsets.push({ topic: first.topic, partition: first.partition, offset: last.offset + 1 });
            summaries.push({
              topic: first.topic,
              partition: first.partition,
              count: list.length,
              minOffset: first.offset,
              maxOffset: last.offset,
            });
            if (verbose) {
              for (const r of list) {
                event('record_data', {
                  key: r.key?.toString() ?? null,
                  value: r.value?.toString() ?? null,
                  topic: r.topic,
                  partition: r.partition,
                  offset: r.offset,
                });
              }
            }
            consumed += list.length;
            if (finished(consumed)) break;
          }
          event('records_consumed', { count: records.length, partitions: summaries });
          if (!autoCommit) {
            const committed = {
              offsets: offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset })),
            };
            try {
              await consumer.commit(offsets);
              event('offsets_committed', { ...committed, success: true });
            } catch (e) {
              event('offsets_committed', { ...committed, error: (e as Error).message, success: false });
            }
          }
        }
      } catch (e) {
        // As Kafka's tool: the error goes to the log (stderr), not among the events.
        process.stderr.write(
          `Error during processing, terminating consumer process: ${(e as Error).message}\n`,
        );
      } finally {
        await consumer.close();
      }
    },
  );
  event('shutdown_complete');
  return 0;
}
