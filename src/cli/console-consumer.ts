// `brook console-consumer`: Kafka's kafka-console-consumer.sh. Prints records as Kafka's DefaultMessageFormatter
// does (timestamp, partition, offset, headers, key, then value, separated by tabs, each only when asked for) and
// "Processed a total of N messages" on stderr at the end. Without --group it reads the topic's partitions
// directly; with --group it joins the group and commits its position.

import { Consumer, type ConsumerOptions, type ConsumerRecord } from '../client/consumer.js';
import { type ParsedArgs, readProperties, UsageError } from './args.js';
import { clientOptions, err, newClient, runTool, type Tool } from './client-tool.js';

const tool: Tool = {
  name: 'console-consumer',
  summary: 'Consume messages from a topic and print them to standard output.',
  specs: {
    topic: { value: true, help: 'The topic to consume on.' },
    include: {
      value: true,
      help: 'Regular expression of the topics to include (needs --group or subscribes with a generated group).',
    },
    group: { value: true, help: 'The consumer group id of the consumer.' },
    'from-beginning': {
      help: 'Start with the earliest message present when the consumer has no committed offset.',
    },
    partition: {
      value: true,
      help: 'The partition to consume from (starts at the end unless --from-beginning or --offset).',
    },
    offset: {
      value: true,
      help: "The offset to start from: a number, 'earliest' or 'latest' (needs --partition).",
    },
    'max-messages': { value: true, help: 'The maximum number of messages to consume before exiting.' },
    'timeout-ms': { value: true, help: 'Exit if no message is available for this long.' },
    property: {
      value: true,
      repeat: true,
      help: 'Formatter properties: print.timestamp, print.key, print.offset, print.partition, print.headers, print.value, key.separator, line.separator, headers.separator, null.literal',
    },
    'consumer-property': { value: true, repeat: true, help: 'A consumer config as key=value (repeatable).' },
    'consumer.config': { value: true, help: 'Consumer config properties file.' },
    'isolation-level': { value: true, help: 'read_committed or read_uncommitted (default).' },
    'skip-message-on-error': { help: 'Skip a message that cannot be printed instead of stopping.' },
  },
  run,
};

export function runConsoleConsumer(args: string[]): Promise<number> {
  return runTool(tool, args);
}

interface Format {
  timestamp: boolean;
  key: boolean;
  offset: boolean;
  partition: boolean;
  headers: boolean;
  value: boolean;
  keySeparator: string;
  lineSeparator: string;
  headersSeparator: string;
  nullLiteral: string;
}

function format(args: ParsedArgs): Format {
  const p = args.pairs('property');
  const on = (k: string, d = false) => (p[k] === undefined ? d : p[k] === 'true');
  return {
    timestamp: on('print.timestamp'),
    key: on('print.key'),
    offset: on('print.offset'),
    partition: on('print.partition'),
    headers: on('print.headers'),
    value: on('print.value', true),
    keySeparator: p['key.separator'] ?? '\t',
    lineSeparator: p['line.separator'] ?? '\n',
    headersSeparator: p['headers.separator'] ?? ',',
    nullLiteral: p['null.literal'] ?? 'null',
  };
}

/** One record as Kafka's DefaultMessageFormatter writes it. */
export function formatRecord(r: ConsumerRecord, f: Format): string {
  const parts: string[] = [];
  const text = (b: Buffer | null) => (b === null ? f.nullLiteral : b.toString('utf8'));
  if (f.timestamp) parts.push(r.timestamp >= 0 ? `CreateTime:${r.timestamp}` : 'NO_TIMESTAMP');
  if (f.partition) parts.push(`Partition:${r.partition}`);
  if (f.offset) parts.push(`Offset:${r.offset}`);
  if (f.headers) {
    parts.push(
      r.headers.length === 0
        ? 'NO_HEADERS'
        : r.headers.map((h) => `${h.key}:${text(h.value)}`).join(f.headersSeparator),
    );
  }
  if (f.key) parts.push(text(r.key));
  if (f.value) parts.push(text(r.value));
  return parts.join(f.keySeparator);
}

async function run(args: ParsedArgs): Promise<number> {
  const topic = args.get('topic');
  const include = args.get('include');
  if ((topic === undefined) === (include === undefined))
    throw new UsageError('Exactly one of --topic or --include is required');
  const partition = args.int('partition');
  const offsetArg = args.get('offset');
  if (offsetArg !== undefined && partition === undefined)
    throw new UsageError('The partition is required when offset is specified.');
  if (partition !== undefined && args.has('group'))
    throw new UsageError('Options group and partition cannot be specified together.');
  const props: Record<string, string> = {};
  const file = args.get('consumer.config');
  if (file !== undefined) Object.assign(props, readProperties(file));
  Object.assign(props, args.pairs('consumer-property'));
  const group =
    args.get('group') ??
    props['group.id'] ??
    (include !== undefined ? `console-consumer-${Math.floor(Math.random() * 100000)}` : undefined);
  const isolation = args.get('isolation-level') ?? props['isolation.level'] ?? 'read_uncommitted';
  if (isolation !== 'read_committed' && isolation !== 'read_uncommitted')
    throw new UsageError(`bad isolation level '${isolation}'`);
  const options: ConsumerOptions = {
    ...clientOptions(args, props),
    groupId: group,
    autoOffsetReset: args.has('from-beginning')
      ? 'earliest'
      : ((props['auto.offset.reset'] as 'earliest' | 'latest') ?? 'latest'),
    isolationLevel: isolation,
    clientRack: props['client.rack'],
  };
  const maxMessages = args.int('max-messages');
  const timeoutMs = args.int('timeout-ms');
  const f = format(args);
  const consumer = newClient(() => new Consumer(options));
  let count = 0;
  let code = 0;
  let running = true;
  const onSignal = () => {
    running = false;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (group !== undefined) {
      consumer.subscribe(include !== undefined ? new RegExp(include) : [topic!]);
    } else {
      const [t] = await consumer.cluster.topic(topic!).then((x) => [x]);
      const partitions = partition === undefined ? t!.partitions.map((p) => p.partition) : [partition];
      if (partition !== undefined && !t!.partitions.some((p) => p.partition === partition)) {
        throw new UsageError(`partition ${partition} of ${topic} does not exist`);
      }
      consumer.assign(partitions.map((p) => ({ topic: topic!, partition: p })));
      if (offsetArg === 'earliest') await consumer.seekToBeginning();
      else if (offsetArg === 'latest') await consumer.seekToEnd();
      else if (offsetArg !== undefined) {
        const n = Number(offsetArg);
        if (!Number.isInteger(n)) throw new UsageError(`bad offset '${offsetArg}'`);
        if (n >= 0) consumer.seek({ topic: topic!, partition: partition! }, n);
        else {
          // A negative offset counts back from the end, as Kafka's tool does.
          const [end] = await consumer.endOffsets([{ topic: topic!, partition: partition! }]);
          consumer.seek({ topic: topic!, partition: partition! }, Math.max(0, end!.offset + n));
        }
      }
    }
    let lastRecordAt = Date.now();
    const stopping = () => maxMessages !== undefined && count >= maxMessages;
    while (running && !stopping()) {
      const records = await consumer.poll(timeoutMs === undefined ? 1000 : Math.min(1000, timeoutMs));
      if (records.length === 0) {
        if (timeoutMs !== undefined && Date.now() - lastRecordAt >= timeoutMs) {
          err(
            `[${new Date().toISOString()}] ERROR Error processing message, terminating consumer process: org.apache.kafka.common.errors.TimeoutException`,
          );
          break;
        }
        continue;
      }
      lastRecordAt = Date.now();
      let text = '';
      const rewound = new Set<string>();
      for (const r of records) {
        if (stopping()) {
          // Records past --max-messages were fetched but not printed: rewind so a group commits only what was shown.
          const k = `${r.topic}:${r.partition}`;
          if (!rewound.has(k)) consumer.seek({ topic: r.topic, partition: r.partition }, r.offset);
          rewound.add(k);
          continue;
        }
        text += formatRecord(r, f) + f.lineSeparator;
        count++;
      }
      process.stdout.write(text);
    }
  } catch (e) {
    if (e instanceof UsageError) throw e;
    err(`Error processing message, terminating consumer process: ${(e as Error).message}`);
    code = 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await consumer.close();
  }
  err(`Processed a total of ${count} messages`);
  return code;
}
