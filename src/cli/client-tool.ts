// What every client tool shares: usage and error handling with Kafka's exit codes (0 on success, 1 on a usage
// error or a failed operation), and client options from --bootstrap-server, --command-config and Java-style
// property names (request.timeout.ms, client.id, ...).

import { KafkaClientError } from '../client/errors.js';
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

const NUMERIC: Record<string, keyof ClientOptions> = {
  'request.timeout.ms': 'requestTimeoutMs',
  'socket.connection.setup.timeout.ms': 'connectionTimeoutMs',
  retries: 'retries',
  'retry.backoff.ms': 'retryBackoffMs',
  'retry.backoff.max.ms': 'retryBackoffMaxMs',
  'max.in.flight.requests.per.connection': 'maxInFlightRequestsPerConnection',
  'metadata.max.age.ms': 'metadataMaxAgeMs',
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
  };
  for (const [k, field] of Object.entries(NUMERIC)) {
    if (merged[k] !== undefined) (options as unknown as Record<string, number>)[field] = Number(merged[k]);
  }
  return options;
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
