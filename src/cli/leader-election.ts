// `brook leader-election` (kafka-leader-election.sh): preferred or unclean leader election through ElectLeaders.
//
// The partitions come from exactly one of --topic with --partition, --all-topic-partitions, or
// --path-to-json-file ({"partitions":[{"topic":"foo","partition":1}]}). Output as Kafka's tool prints it:
//   Successfully completed leader election (PREFERRED) for partitions foo-0, foo-1
//   Valid replica already elected for partitions foo-2
//   Error completing leader election (PREFERRED) for partition: foo-3: <error>
// and exit code 1 when an election failed.

import { readFileSync } from 'node:fs';
import { Admin, type PartitionResult } from '../client/admin.js';
import { ErrorCode } from '../protocol/errors.js';
import { type ParsedArgs, readProperties, UsageError } from './args.js';
import { clientOptions, err, newClient, out, runTool, type Tool } from './client-tool.js';

const tool: Tool = {
  name: 'leader-election',
  summary: 'Elect the preferred replica, or an out-of-sync one (unclean), as the leader of partitions.',
  specs: {
    'election-type': {
      value: true,
      help: 'REQUIRED: PREFERRED (the first replica, if in sync) or UNCLEAN (only for partitions without a leader).',
    },
    topic: { value: true, help: 'The topic of the partition to elect a leader for; needs --partition.' },
    partition: { value: true, help: 'The partition to elect a leader for; needs --topic.' },
    'all-topic-partitions': { help: 'Elect leaders for every partition of every topic.' },
    'path-to-json-file': {
      value: true,
      help: 'The partitions to elect leaders for: {"partitions":[{"topic":"foo","partition":1}]}',
    },
    'admin.config': { value: true, help: 'Property file with client configs (as --command-config).' },
  },
  run,
};

export function runLeaderElection(args: string[]): Promise<number> {
  return runTool(tool, args);
}

type TopicPartition = { topic: string; partition: number };

function partitionsFromFile(path: string): TopicPartition[] {
  let data: { partitions?: unknown };
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw e;
    throw new UsageError(`${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || !Array.isArray(data.partitions)) {
    throw new UsageError(`${path}: expected {"partitions":[{"topic":"foo","partition":1}]}`);
  }
  const partitions = (data.partitions as Record<string, unknown>[]).map((p) => {
    if (typeof p.topic !== 'string' || !Number.isInteger(p.partition)) {
      throw new UsageError(`${path}: bad partition entry ${JSON.stringify(p)}`);
    }
    return { topic: p.topic, partition: p.partition as number };
  });
  const seen = new Set<string>();
  const duplicates = partitions.map(name).filter((n) => seen.size === seen.add(n).size);
  if (duplicates.length > 0)
    throw new UsageError(`Replica election data contains duplicate partitions: ${duplicates.join(',')}`);
  return partitions;
}

const name = (tp: TopicPartition): string => `${tp.topic}-${tp.partition}`;

/** The partitions asked for, or undefined for all of them. */
function partitionsOf(args: ParsedArgs): TopicPartition[] | undefined {
  const sources = ['topic', 'all-topic-partitions', 'path-to-json-file'].filter((s) => args.has(s));
  if (sources.length !== 1) {
    throw new UsageError(
      'One and only one of the following options is required: --topic, --all-topic-partitions, --path-to-json-file',
    );
  }
  if (args.has('partition') && !args.has('topic')) throw new UsageError('--partition needs --topic');
  if (args.has('all-topic-partitions')) return undefined;
  const file = args.get('path-to-json-file');
  if (file !== undefined) return partitionsFromFile(file);
  const partition = args.int('partition');
  if (partition === undefined) throw new UsageError('Missing required option(s) [partition]');
  return [{ topic: args.required('topic'), partition }];
}

async function run(args: ParsedArgs): Promise<number> {
  const type = args.required('election-type').toUpperCase();
  if (type !== 'PREFERRED' && type !== 'UNCLEAN') {
    throw new UsageError(`--election-type must be PREFERRED or UNCLEAN, not '${args.get('election-type')}'`);
  }
  const partitions = partitionsOf(args);
  const config = args.get('admin.config');
  const admin = newClient(
    () => new Admin(clientOptions(args, config === undefined ? {} : readProperties(config))),
  );
  let results: PartitionResult[];
  try {
    results = await admin.electLeaders(type === 'PREFERRED' ? 'preferred' : 'unclean', partitions);
  } finally {
    await admin.close();
  }
  const sorted = results.sort((a, b) =>
    a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition,
  );
  const succeeded = sorted.filter((r) => r.error === null);
  const noop = sorted.filter((r) => r.error?.code === ErrorCode.ELECTION_NOT_NEEDED);
  const failed = sorted.filter((r) => r.error !== null && r.error.code !== ErrorCode.ELECTION_NOT_NEEDED);
  if (succeeded.length > 0) {
    out(`Successfully completed leader election (${type}) for partitions ${succeeded.map(name).join(', ')}`);
  }
  if (noop.length > 0) out(`Valid replica already elected for partitions ${noop.map(name).join(', ')}`);
  if (failed.length === 0) return 0;
  for (const f of failed) {
    out(`Error completing leader election (${type}) for partition: ${name(f)}: ${f.error!.message}`);
  }
  err(`Error: ${failed.length} replica(s) could not be elected`);
  return 1;
}
