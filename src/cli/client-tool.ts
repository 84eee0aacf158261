// What every client tool shares: usage and error handling with Kafka's exit codes (0 on success, 1 on a usage
// error or a failed operation), and client options from --bootstrap-server, --command-config and Java-style
// property names (request.timeout.ms, client.id, ...).

import { ConfigError, KafkaClientError } from '../client/errors.js';
import type { ClientOptions } from '../client/options.js';
import {
  COMMON_SPECS,
  type ParsedArgs,
  parseArgs,
  readProperties,
  type Specs,
  UsageError,
  usage,
} from './args.js';
import { securityOptions } from './client-security.js';

export type ToolBody = (args: ParsedArgs) => Promise<number>;

export interface Tool {
  name: string;
  summary: string;
  specs: Specs;
  run: ToolBody;
}

export async function runTool(tool: Tool, argv: string[]): Promise<number> {
  const specs = { ...COMMON_SPECS, ...tool.specs };
  let args: ParsedArgs;
  try {
    args = parseArgs(argv, specs);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${usage(tool.name, tool.summary, specs)}`);
      return 1;
    }
    throw err;
  }
  if (args.has('help')) {
    process.stdout.write(usage(tool.name, tool.summary, specs));
    return 0;
  }
  try {
    return await tool.run(args);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${usage(tool.name, tool.summary, specs)}`);
      return 1;
    }
    if (err instanceof KafkaClientError) {
      process.stderr.write(`Error: ${err.message}\n`);
      return 1;
    }
    if (err instanceof Error && (err as NodeJS.ErrnoException).code === 'ENOENT') {
      process.stderr.write(`Error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

/** How Kafka's ConfigDef types and bounds a numeric property: INT or LONG, and the least value it accepts. */
export interface NumericSpec {
  type: 'INT' | 'LONG';
  min: number;
}

const INT_MAX = 2_147_483_647;

/**
 * Reads a number strictly, as Kafka's ConfigDef does: a decimal integer, surrounding spaces trimmed, that fits
 * its type and is at least the spec's minimum. Anything else is a usage error naming what was given
 * (`configuration linger.ms`, `option --timeout`) and the rule, in Kafka's words; Number() would pass NaN (or 0
 * for '') on to the client instead. A LONG is held to JavaScript's safe integers, as no client field holds more.
 */
export function parseNumeric(text: string, spec: NumericSpec, subject: string): number {
  const trimmed = text.trim();
  const n = /^[+-]?\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  const typeMax = spec.type === 'INT' ? INT_MAX : Number.MAX_SAFE_INTEGER;
  // Written so that NaN fails it too.
  if (!(Math.abs(n) <= typeMax))
    throw new UsageError(`Invalid value ${text} for ${subject}: Not a number of type ${spec.type}`);
  if (n < spec.min)
    throw new UsageError(`Invalid value ${text} for ${subject}: Value must be at least ${spec.min}`);
  return n;
}

/** A numeric Java-style property, or undefined when it is not set; see parseNumeric. */
export function numericProperty(
  props: Record<string, string>,
  name: string,
  spec: NumericSpec,
): number | undefined {
  const text = props[name];
  return text === undefined ? undefined : parseNumeric(text, spec, `configuration ${name}`);
}

/** Kafka's types and validators of the properties every client takes (CommonClientConfigs). */
const NUMERIC: Record<string, NumericSpec & { field: keyof ClientOptions }> = {
  'request.timeout.ms': { field: 'requestTimeoutMs', type: 'INT', min: 0 },
  'socket.connection.setup.timeout.ms': { field: 'connectionTimeoutMs', type: 'LONG', min: 0 },
  retries: { field: 'retries', type: 'INT', min: 0 },
  'retry.backoff.ms': { field: 'retryBackoffMs', type: 'LONG', min: 0 },
  'retry.backoff.max.ms': { field: 'retryBackoffMaxMs', type: 'LONG', min: 0 },
  'reconnect.backoff.ms': { field: 'reconnectBackoffMs', type: 'LONG', min: 0 },
  'reconnect.backoff.max.ms': { field: 'reconnectBackoffMaxMs', type: 'LONG', min: 0 },
  'max.in.flight.requests.per.connection': { field: 'maxInFlightRequestsPerConnection', type: 'INT', min: 1 },
  'metadata.max.age.ms': { field: 'metadataMaxAgeMs', type: 'LONG', min: 0 },
};

/** Client options from the common arguments plus Java-style properties (later ones win). */
export function clientOptions(args: ParsedArgs, ...props: Record<string, string>[]): ClientOptions {
  const merged: Record<string, string> = {};
  const file = args.get('command-config');
  if (file !== undefined) Object.assign(merged, readProperties(file));
  for (const p of props) Object.assign(merged, p);
  const bootstrap = args.get('bootstrap-server') ?? args.get('broker-list') ?? merged['bootstrap.servers'];
  if (bootstrap === undefined) throw new UsageError('Missing required argument "[bootstrap-server]"');
  const options: ClientOptions = {
    bootstrapServers: bootstrap,
    clientId: merged['client.id'] ?? 'brook-cli',
    // Tools should say "unreachable" in seconds, not retry for minutes.
    retries: 3,
    connectionTimeoutMs: 5000,
    ...securityOptions(merged),
  };
  for (const [name, spec] of Object.entries(NUMERIC)) {
    const n = numericProperty(merged, name, spec);
    if (n !== undefined) (options as unknown as Record<string, number>)[spec.field] = n;
  }
  return options;
}

/** Kafka's types and validators of the numeric producer properties the tools pass on (ProducerConfig). */
export const PRODUCER_NUMERIC = {
  'linger.ms': { type: 'LONG', min: 0 },
  'max.block.ms': { type: 'LONG', min: 0 },
  'batch.size': { type: 'INT', min: 0 },
  'delivery.timeout.ms': { type: 'INT', min: 0 },
  'max.request.size': { type: 'INT', min: 0 },
  'buffer.memory': { type: 'LONG', min: 0 },
} satisfies Record<string, NumericSpec>;

/**
 * Constructs a client (Admin, Producer, Consumer). The clients refuse options that contradict each other with a
 * ConfigError from their constructor, as Kafka's do with a ConfigException (delivery.timeout.ms below linger.ms +
 * request.timeout.ms, acks other than all with idempotence, ...); that is the user's usage error and is reported
 * as one, without a stack trace. Any other error, a TypeError from a bug included, keeps its stack.
 */
export function newClient<T>(construct: () => T): T {
  try {
    return construct();
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message);
    throw e;
  }
}

export function out(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function err(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A fixed-width table for humans: header row, then rows, columns padded to their widest cell. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
}
