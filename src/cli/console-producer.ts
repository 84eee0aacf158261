// `brook console-producer`: Kafka's kafka-console-producer.sh. Reads lines from stdin and sends each as a
// record. With parse.key=true a line is KEY<key.separator>VALUE; with parse.headers=true it starts with
// headers (h1:v1,h2:v2<headers.delimiter>). Exits 0 once every line is acknowledged, 1 on the first failure.

import { createInterface } from 'node:readline';
import { type Acks, type CompressionName, Producer, type ProducerOptions } from '../client/producer.js';
import { type ParsedArgs, readProperties, UsageError } from './args.js';
import {
  clientOptions,
  err,
  newClient,
  numericProperty,
  PRODUCER_NUMERIC,
  parseNumeric,
  runTool,
  type Tool,
} from './client-tool.js';

const tool: Tool = {
  name: 'console-producer',
  summary: 'Read data from standard input and publish it to a topic.',
  specs: {
    'broker-list': { value: true, help: 'DEPRECATED, use --bootstrap-server instead.' },
    topic: { value: true, help: 'REQUIRED: The topic id to produce messages to.' },
    property: {
      value: true,
      repeat: true,
      help: 'Line reader properties: parse.key, key.separator, parse.headers, headers.delimiter, headers.separator, headers.key.separator, null.marker, ignore.error',
    },
    'producer-property': { value: true, repeat: true, help: 'A producer config as key=value (repeatable).' },
    'producer.config': { value: true, help: 'Producer config properties file.' },
    'compression-codec': {
      value: true,
      help: "none, gzip (default when given without a value is 'gzip'), snappy, lz4 or zstd.",
    },
    'request-required-acks': {
      value: true,
      help: 'The required acks of the producer requests (default all).',
    },
    'batch-size': {
      value: true,
      help: 'Number of messages to send in a single batch (maps to batch.size bytes).',
    },
    timeout: { value: true, help: 'linger.ms: how long to wait for a batch to fill (default 1000).' },
    sync: { help: 'Send each message synchronously, one at a time.' },
    partition: { value: true, help: 'Send every record to this partition.' },
  },
  run,
};

export function runConsoleProducer(args: string[]): Promise<number> {
  return runTool(tool, args);
}

function producerOptions(args: ParsedArgs): ProducerOptions {
  const props: Record<string, string> = {};
  const file = args.get('producer.config');
  if (file !== undefined) Object.assign(props, readProperties(file));
  Object.assign(props, args.pairs('producer-property'));
  const base = clientOptions(args, props);
  const acksText = args.get('request-required-acks') ?? props.acks ?? 'all';
  const acks: Acks = acksText === 'all' ? 'all' : (Number(acksText) as Acks);
  if (![0, 1, -1, 'all'].includes(acks)) throw new UsageError(`bad acks '${acksText}'`);
  const codec = args.get('compression-codec') ?? props['compression.type'] ?? 'none';
  if (!['none', 'gzip', 'snappy', 'lz4', 'zstd'].includes(codec))
    throw new UsageError(`unknown compression codec '${codec}'`);
  const number = (name: keyof typeof PRODUCER_NUMERIC): number | undefined =>
    numericProperty(props, name, PRODUCER_NUMERIC[name]);
  const timeout = args.get('timeout');
  const options: ProducerOptions = {
    ...base,
    acks,
    compression: codec as CompressionName,
    lingerMs:
      timeout !== undefined
        ? parseNumeric(timeout, PRODUCER_NUMERIC['linger.ms'], 'option --timeout')
        : (number('linger.ms') ?? 1000),
    maxBlockMs: number('max.block.ms') ?? 60_000,
    // Unset (undefined) leaves the client's default.
    batchSize: number('batch.size'),
    deliveryTimeoutMs: number('delivery.timeout.ms'),
    maxRequestSize: number('max.request.size'),
    bufferMemory: number('buffer.memory'),
  };
  if (props['enable.idempotence'] !== undefined) options.idempotent = props['enable.idempotence'] === 'true';
  return options;
}

interface LineFormat {
  parseKey: boolean;
  keySeparator: string;
  parseHeaders: boolean;
  headersDelimiter: string;
  headersSeparator: string;
  headersKeySeparator: string;
  nullMarker: string | undefined;
}

function lineFormat(args: ParsedArgs): LineFormat {
  const p = args.pairs('property');
  return {
    parseKey: p['parse.key'] === 'true',
    keySeparator: p['key.separator'] ?? '\t',
    parseHeaders: p['parse.headers'] === 'true',
    headersDelimiter: p['headers.delimiter'] ?? '\t',
    headersSeparator: p['headers.separator'] ?? ',',
    headersKeySeparator: p['headers.key.separator'] ?? ':',
    nullMarker: p['null.marker'],
  };
}

export interface ParsedLine {
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
}

function splitOnce(line: string, sep: string, what: string, lineNo: number): [string, string] {
  const i = line.indexOf(sep);
  if (i < 0) throw new UsageError(`No ${what} separator found on line number ${lineNo}: '${line}'`);
  return [line.slice(0, i), line.slice(i + sep.length)];
}

/** Splits one input line by Kafka's LineMessageReader rules. */
export function parseLine(line: string, f: LineFormat, lineNo: number): ParsedLine {
  const bytes = (s: string): Buffer | null =>
    f.nullMarker !== undefined && s === f.nullMarker ? null : Buffer.from(s, 'utf8');
  let rest = line;
  const headers: ParsedLine['headers'] = [];
  if (f.parseHeaders) {
    const [h, r] = splitOnce(rest, f.headersDelimiter, 'headers', lineNo);
    rest = r;
    for (const pair of h.split(f.headersSeparator)) {
      if (pair === '') continue;
      const i = pair.indexOf(f.headersKeySeparator);
      if (i < 0) headers.push({ key: pair, value: null });
      else
        headers.push({ key: pair.slice(0, i), value: bytes(pair.slice(i + f.headersKeySeparator.length)) });
    }
  }
  let key: Buffer | null = null;
  if (f.parseKey) {
    const [k, r] = splitOnce(rest, f.keySeparator, 'key', lineNo);
    key = bytes(k);
    rest = r;
  }
  return { key, value: bytes(rest), headers };
}

async function run(args: ParsedArgs): Promise<number> {
  const topic = args.required('topic');
  const format = lineFormat(args);
  const partition = args.int('partition');
  const options = producerOptions(args);
  const producer = newClient(() => new Producer(options));
  const sync = args.has('sync');
  let failed: Error | null = null;
  const pending = new Set<Promise<unknown>>();
  let lineNo = 0;
  try {
    const rl = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of rl) {
      lineNo++;
      if (failed !== null) break;
      const parsed = parseLine(line, format, lineNo);
      const p = producer.send({
        topic,
        partition,
        key: parsed.key,
        value: parsed.value,
        headers: parsed.headers,
      });
      if (sync) {
        await p;
        continue;
      }
      const tracked: Promise<unknown> = p.then(
        () => pending.delete(tracked),
        (e: Error) => {
          pending.delete(tracked);
          failed ??= e;
        },
      );
      pending.add(tracked);
    }
    await producer.flush();
    await Promise.all(pending);
  } catch (e) {
    failed ??= e as Error;
  } finally {
    await producer.close(failed === null ? 30_000 : 0);
  }
  if (failed !== null) {
    if (failed instanceof UsageError) throw failed;
    err(`Error when sending message to topic ${topic}: ${failed.message}`);
    return 1;
  }
  return 0;
}
