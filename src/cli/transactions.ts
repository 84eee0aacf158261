// `brook transactions` (kafka-transactions.sh): list, describe and abort transactions, and show partitions'
// producer states, with Kafka's subcommands, options and tables (ToolsUtils.prettyPrintTable: every cell padded to
// its column's width and followed by a tab).
//
//   brook transactions --bootstrap-server H:P list [--duration-filter MS]          ListTransactions (66), every broker
//   brook transactions ... describe --transactional-id X                           DescribeTransactions (65), coordinator
//   brook transactions ... describe-producers --topic T --partition P [--broker-id B]  DescribeProducers (61)
//   brook transactions ... abort --topic T --partition P --start-offset N          WriteTxnMarkers (27) to the leader
//   brook transactions ... find-hanging --topic T [--partition P] | --broker-id B [--max-transaction-timeout MIN]
//
// `abort` does what Kafka's tool does for brokers of 3.0 and later: finds the producer whose open transaction
// starts at --start-offset (DescribeProducers on the leader), then asks the leader to write an ABORT marker for it,
// the path a coordinator takes; --producer-id, --producer-epoch and --coordinator-epoch name it directly instead.

import { Admin } from '../client/admin.js';
import { KafkaProtocolError } from '../client/errors.js';
import { CoordinatorType, findCoordinator } from '../client/requests.js';
import { ErrorCode } from '../protocol/errors.js';
import type { WriteTxnMarkersResponse } from '../protocol/messages/27-write-txn-markers.js';
import type { DescribeProducersResponse } from '../protocol/messages/61-describe-producers.js';
import type { DescribeTransactionsResponse } from '../protocol/messages/65-describe-transactions.js';
import type { ListTransactionsResponse } from '../protocol/messages/66-list-transactions.js';
import { ApiKey } from '../protocol/registry.js';
import { COMMON_SPECS, type ParsedArgs, type Specs, UsageError } from './args.js';
import { clientOptions, newClient, out, runTool, type Tool } from './client-tool.js';

/** A failure Kafka's tool reports as "message: cause. Enable debug logging for additional detail." and exit 1. */
class ToolFailure extends Error {}

function failure(message: string, cause?: unknown): ToolFailure {
  if (cause === undefined) return new ToolFailure(message);
  const text = cause instanceof Error ? cause.message : String(cause);
  return new ToolFailure(`${message}: ${text}. Enable debug logging for additional detail.`);
}

/** Kafka's ToolsUtils.prettyPrintTable. */
export function prettyTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [headers, ...rows].map((r) => `${r.map((c, i) => `${c.padEnd(widths[i]!)}\t`).join('')}\n`).join('');
}

function intOption(args: ParsedArgs, name: string, required: boolean): number | undefined {
  const text = args.get(name);
  if (text === undefined) {
    if (required) throw new UsageError(`argument --${name} is required`);
    return undefined;
  }
  if (!/^-?\d+$/.test(text))
    throw new UsageError(`argument --${name}: could not convert '${text}' to a number`);
  return Number(text);
}

interface ProducerState {
  producerId: bigint;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: bigint;
  coordinatorEpoch: number;
  currentTxnStartOffset: bigint;
}

async function describeProducers(
  admin: Admin,
  topic: string,
  partition: number,
  brokerId: number | undefined,
): Promise<ProducerState[]> {
  let target = brokerId;
  if (target === undefined) {
    await admin.cluster.topic(topic);
    target = admin.cluster.leaderOf(topic, partition);
    if (target < 0) throw new KafkaProtocolError(3, `partition ${topic}-${partition} has no known leader`);
  }
  const res = await admin.cluster.send<DescribeProducersResponse>(target, ApiKey.DESCRIBE_PRODUCERS, {
    topics: [{ name: topic, partitionIndexes: [partition] }],
  });
  const p = res.topics.find((t) => t.name === topic)?.partitions.find((x) => x.partitionIndex === partition);
  if (p === undefined) throw new KafkaProtocolError(-1, 'the broker did not answer for the partition');
  if (p.errorCode !== 0) throw new KafkaProtocolError(p.errorCode, p.errorMessage);
  return p.activeProducers;
}

const LIST_HEADERS = ['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState'];

async function list(admin: Admin, args: ParsedArgs): Promise<void> {
  const duration = intOption(args, 'duration-filter', false) ?? -1;
  const rows: string[][] = [];
  const json: unknown[] = [];
  try {
    const brokers = [...(await admin.cluster.refreshMetadata()).brokers.keys()].sort((a, b) => a - b);
    for (const broker of brokers) {
      // A coordinator loading a partition answers COORDINATOR_LOAD_IN_PROGRESS, retried as Kafka's admin does.
      const res = await admin.cluster.withRetry(async () => {
        const r = await admin.cluster.send<ListTransactionsResponse>(broker, ApiKey.LIST_TRANSACTIONS, {
          stateFilters: [],
          producerIdFilters: [],
          durationFilter: BigInt(duration),
        });
        if (r.errorCode !== 0) throw new KafkaProtocolError(r.errorCode);
        return r;
      });
      for (const t of res.transactionStates) {
        rows.push([t.transactionalId, String(broker), String(t.producerId), t.transactionState]);
        json.push({ ...t, producerId: Number(t.producerId), coordinator: broker });
      }
    }
  } catch (e) {
    throw failure('Failed to list transactions', e);
  }
  if (args.has('json')) out(JSON.stringify(json));
  else process.stdout.write(prettyTable(LIST_HEADERS, rows));
}

const DESCRIBE_HEADERS = [
  'CoordinatorId',
  'TransactionalId',
  'ProducerId',
  'ProducerEpoch',
  'TransactionState',
  'TransactionTimeoutMs',
  'CurrentTransactionStartTimeMs',
  'TransactionDurationMs',
  'TopicPartitions',
];

async function describe(admin: Admin, args: ParsedArgs): Promise<void> {
  const id = args.get('transactional-id');
  if (id === undefined) throw new UsageError('argument --transactional-id is required');
  let coordinator: number;
  let state: DescribeTransactionsResponse['transactionStates'][number];
  try {
    // findCoordinator's key type parameter is typed from its GROUP default; TRANSACTION is the other value it takes.
    coordinator = await findCoordinator(admin.cluster, id, CoordinatorType.TRANSACTION as 0);
    const res = await admin.cluster.send<DescribeTransactionsResponse>(
      coordinator,
      ApiKey.DESCRIBE_TRANSACTIONS,
      {
        transactionalIds: [id],
      },
    );
    const found = res.transactionStates.find((s) => s.transactionalId === id);
    if (found === undefined) throw new KafkaProtocolError(-1, 'the coordinator did not answer for it');
    if (found.errorCode !== 0) throw new KafkaProtocolError(found.errorCode);
    state = found;
  } catch (e) {
    throw failure(`Failed to describe transaction state of transactional-id \`${id}\``, e);
  }
  const startMs = Number(state.transactionStartTimeMs);
  const partitions = state.topics.flatMap((t) => t.partitions.map((p) => `${t.topic}-${p}`));
  const row = [
    String(coordinator),
    id,
    String(state.producerId),
    String(state.producerEpoch),
    state.transactionState,
    String(state.transactionTimeoutMs),
    startMs < 0 ? 'None' : String(startMs),
    startMs < 0 ? 'None' : String(Date.now() - startMs),
    partitions.join(','),
  ];
  if (args.has('json')) out(JSON.stringify(Object.fromEntries(DESCRIBE_HEADERS.map((h, i) => [h, row[i]]))));
  else process.stdout.write(prettyTable(DESCRIBE_HEADERS, [row]));
}

const PRODUCER_HEADERS = [
  'ProducerId',
  'ProducerEpoch',
  'LatestCoordinatorEpoch',
  'LastSequence',
  'LastTimestamp',
  'CurrentTransactionStartOffset',
];

async function describeProducersCommand(admin: Admin, args: ParsedArgs): Promise<void> {
  const topic = args.get('topic');
  if (topic === undefined) throw new UsageError('argument --topic is required');
  const partition = intOption(args, 'partition', true)!;
  const brokerId = intOption(args, 'broker-id', false);
  let producers: ProducerState[];
  try {
    producers = await describeProducers(admin, topic, partition, brokerId);
  } catch (e) {
    const on = brokerId === undefined ? 'leader' : `broker ${brokerId}`;
    throw failure(`Failed to describe producers for partition ${topic}-${partition} on ${on}`, e);
  }
  const rows = producers.map((p) => [
    String(p.producerId),
    String(p.producerEpoch),
    String(p.coordinatorEpoch),
    String(p.lastSequence),
    String(p.lastTimestamp),
    p.currentTxnStartOffset < 0n ? 'None' : String(p.currentTxnStartOffset),
  ]);
  if (args.has('json'))
    out(JSON.stringify(rows.map((r) => Object.fromEntries(PRODUCER_HEADERS.map((h, i) => [h, r[i]])))));
  else process.stdout.write(prettyTable(PRODUCER_HEADERS, rows));
}

interface AbortSpec {
  topic: string;
  partition: number;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
}

function specText(s: AbortSpec): string {
  return `AbortTransactionSpec(topicPartition=${s.topic}-${s.partition}, producerId=${s.producerId}, producerEpoch=${s.producerEpoch}, coordinatorEpoch=${s.coordinatorEpoch})`;
}

async function abortSpecAt(
  admin: Admin,
  topic: string,
  partition: number,
  startOffset: number,
): Promise<AbortSpec> {
  let producers: ProducerState[];
  try {
    producers = await describeProducers(admin, topic, partition, undefined);
  } catch (e) {
    throw failure(`Failed to validate producer state for partition ${topic}-${partition}`, e);
  }
  const open = producers.find((p) => p.currentTxnStartOffset === BigInt(startOffset));
  if (open === undefined)
    throw failure(
      `Could not find any open transactions starting at offset ${startOffset} on partition ${topic}-${partition}`,
    );
  // A partition that has not seen a marker reports coordinator epoch -1; Kafka's tool sends 0 then.
  return {
    topic,
    partition,
    producerId: open.producerId,
    producerEpoch: open.producerEpoch,
    coordinatorEpoch: Math.max(0, open.coordinatorEpoch),
  };
}

async function abort(admin: Admin, args: ParsedArgs): Promise<void> {
  const topic = args.get('topic');
  if (topic === undefined) throw new UsageError('argument --topic is required');
  const partition = intOption(args, 'partition', true)!;
  const startOffset = intOption(args, 'start-offset', false);
  const producerId = intOption(args, 'producer-id', false);
  let spec: AbortSpec;
  if (startOffset !== undefined) {
    spec = await abortSpecAt(admin, topic, partition, startOffset);
  } else if (producerId !== undefined) {
    const producerEpoch = intOption(args, 'producer-epoch', false);
    if (producerEpoch === undefined) throw new UsageError('Missing required argument --producer-epoch');
    const coordinatorEpoch = intOption(args, 'coordinator-epoch', false);
    if (coordinatorEpoch === undefined) throw new UsageError('Missing required argument --coordinator-epoch');
    spec = {
      topic,
      partition,
      producerId: BigInt(producerId),
      producerEpoch,
      coordinatorEpoch: Math.max(0, coordinatorEpoch),
    };
  } else {
    throw new UsageError(
      'The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)',
    );
  }
  try {
    await admin.cluster.topic(topic);
    const leader = admin.cluster.leaderOf(topic, partition);
    if (leader < 0) throw new KafkaProtocolError(3, `partition ${topic}-${partition} has no known leader`);
    const res = await admin.cluster.send<WriteTxnMarkersResponse>(leader, ApiKey.WRITE_TXN_MARKERS, {
      markers: [
        {
          producerId: spec.producerId,
          producerEpoch: spec.producerEpoch,
          transactionResult: false,
          topics: [{ name: topic, partitionIndexes: [partition] }],
          coordinatorEpoch: spec.coordinatorEpoch,
        },
      ],
    });
    const code = res.markers[0]?.topics[0]?.partitions[0]?.errorCode ?? -1;
    if (code !== 0) throw new KafkaProtocolError(code);
  } catch (e) {
    throw failure(`Failed to abort transaction ${specText(spec)}`, e);
  }
}

const HANGING_HEADERS = [
  'Topic',
  'Partition',
  'ProducerId',
  'ProducerEpoch',
  'CoordinatorEpoch',
  'StartOffset',
  'LastTimestamp',
  'Duration(min)',
];

interface OpenTransaction {
  topic: string;
  partition: number;
  state: ProducerState;
}

/** The partitions to search: one, a topic's, or (with --broker-id) those with a replica on the broker. */
async function partitionsToSearch(
  admin: Admin,
  topic: string | undefined,
  partition: number | undefined,
  brokerId: number | undefined,
): Promise<{ topic: string; partition: number }[]> {
  if (topic !== undefined && partition !== undefined) return [{ topic, partition }];
  const names = topic !== undefined ? [topic] : await admin.listTopics({ listInternal: true });
  const found: { topic: string; partition: number }[] = [];
  for (const t of await admin.describeTopics(names)) {
    if (t.error !== null) throw t.error;
    for (const p of t.partitions)
      if (brokerId === undefined || p.replicas.includes(brokerId))
        found.push({ topic: t.topic, partition: p.partition });
  }
  return found;
}

/**
 * Kafka's find-hanging: partitions' open transactions older than --max-transaction-timeout whose producer the
 * coordinators do not know, or whose coordinator does not list the partition in the transaction (so no marker
 * will come for it).
 */
async function findHanging(admin: Admin, args: ParsedArgs): Promise<void> {
  const brokerId = intOption(args, 'broker-id', false);
  const topic = args.get('topic');
  const partition = intOption(args, 'partition', false);
  if (topic === undefined && brokerId === undefined)
    throw failure(
      'The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search',
    );
  if (partition !== undefined && topic === undefined)
    throw failure('The --partition argument requires --topic to be provided');
  const maxTimeoutMs = (intOption(args, 'max-transaction-timeout', false) ?? 15) * 60_000;
  let partitions: { topic: string; partition: number }[];
  try {
    partitions = await partitionsToSearch(admin, topic, partition, brokerId);
  } catch (e) {
    throw failure('Failed to describe topics', e);
  }
  const candidates: OpenTransaction[] = [];
  const now = Date.now();
  for (const tp of partitions) {
    let states: ProducerState[];
    try {
      states = await describeProducers(admin, tp.topic, tp.partition, brokerId);
    } catch (e) {
      throw failure(
        `Failed to describe producers for ${partitions.length} partitions ${brokerId === undefined ? 'on their leaders' : `on broker ${brokerId}`}`,
        e,
      );
    }
    for (const state of states) {
      if (state.currentTxnStartOffset >= 0n && now - Number(state.lastTimestamp) > maxTimeoutMs)
        candidates.push({ ...tp, state });
    }
  }
  const hanging: OpenTransaction[] = [];
  if (candidates.length > 0) {
    // Which transactional id each candidate producer id belongs to, on any coordinator.
    const ids = new Map<bigint, string>();
    try {
      const brokers = [...(await admin.cluster.refreshMetadata()).brokers.keys()];
      const producerIdFilters = [...new Set(candidates.map((c) => c.state.producerId))];
      for (const broker of brokers) {
        const res = await admin.cluster.withRetry(async () => {
          const r = await admin.cluster.send<ListTransactionsResponse>(broker, ApiKey.LIST_TRANSACTIONS, {
            stateFilters: [],
            producerIdFilters,
            durationFilter: -1n,
          });
          if (r.errorCode !== 0) throw new KafkaProtocolError(r.errorCode);
          return r;
        });
        for (const t of res.transactionStates) ids.set(t.producerId, t.transactionalId);
      }
    } catch (e) {
      throw failure("Failed to list transactions for the open transactions' producer ids", e);
    }
    for (const c of candidates) {
      const id = ids.get(c.state.producerId);
      if (id === undefined || !(await coordinatorHolds(admin, id, c))) hanging.push(c);
    }
  }
  const rows = hanging.map((h) => [
    h.topic,
    String(h.partition),
    String(h.state.producerId),
    String(h.state.producerEpoch),
    String(h.state.coordinatorEpoch),
    String(h.state.currentTxnStartOffset),
    String(h.state.lastTimestamp),
    String(Math.floor((now - Number(h.state.lastTimestamp)) / 60_000)),
  ]);
  if (args.has('json'))
    out(JSON.stringify(rows.map((r) => Object.fromEntries(HANGING_HEADERS.map((h, i) => [h, r[i]])))));
  else process.stdout.write(prettyTable(HANGING_HEADERS, rows));
}

/** Whether the coordinator of `transactionalId` has the open transaction's partition in its current transaction. */
async function coordinatorHolds(
  admin: Admin,
  transactionalId: string,
  open: OpenTransaction,
): Promise<boolean> {
  try {
    const coordinator = await findCoordinator(
      admin.cluster,
      transactionalId,
      CoordinatorType.TRANSACTION as 0,
    );
    const res = await admin.cluster.send<DescribeTransactionsResponse>(
      coordinator,
      ApiKey.DESCRIBE_TRANSACTIONS,
      {
        transactionalIds: [transactionalId],
      },
    );
    const state = res.transactionStates.find((s) => s.transactionalId === transactionalId);
    if (state === undefined || state.errorCode === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND) return false;
    if (state.errorCode !== 0) throw new KafkaProtocolError(state.errorCode);
    return state.topics.some((t) => t.topic === open.topic && t.partitions.includes(open.partition));
  } catch (e) {
    throw failure('Failed to describe 1 transactions', e);
  }
}

type Subcommand = { specs: Specs; summary: string; run: (admin: Admin, args: ParsedArgs) => Promise<void> };

const SUBCOMMANDS: Record<string, Subcommand> = {
  list: {
    summary: 'list transactions',
    specs: {
      'duration-filter': {
        value: true,
        help: 'Duration (in millis) to filter by: if < 0, all transactions; otherwise only those running longer.',
      },
    },
    run: list,
  },
  describe: {
    summary: 'describe the state of an active transactional-id',
    specs: { 'transactional-id': { value: true, help: 'REQUIRED: transactional id' } },
    run: describe,
  },
  'describe-producers': {
    summary: 'describe the states of active producers for a topic partition',
    specs: {
      'broker-id': { value: true, help: 'the id of the broker to query (default: the partition leader)' },
      topic: { value: true, help: 'REQUIRED: topic name' },
      partition: { value: true, help: 'REQUIRED: partition number' },
    },
    run: describeProducersCommand,
  },
  abort: {
    summary: 'abort a hanging transaction (requires administrative privileges)',
    specs: {
      topic: { value: true, help: 'REQUIRED: topic name' },
      partition: { value: true, help: 'REQUIRED: partition number' },
      'start-offset': {
        value: true,
        help: 'start offset of the transaction to abort (brokers 3.0 and above)',
      },
      'producer-id': { value: true, help: 'producer id of the transaction to abort (older brokers)' },
      'producer-epoch': { value: true, help: 'producer epoch of the transaction to abort (older brokers)' },
      'coordinator-epoch': {
        value: true,
        help: 'coordinator epoch of the transaction to abort (older brokers)',
      },
    },
    run: abort,
  },
  'find-hanging': {
    summary: 'find hanging transactions',
    specs: {
      'broker-id': { value: true, help: 'broker id to search for hanging transactions' },
      'max-transaction-timeout': {
        value: true,
        help: 'maximum transaction timeout in minutes to limit the scope of the search (15 minutes by default)',
      },
      topic: { value: true, help: 'topic name to limit search to (required if --partition is specified)' },
      partition: { value: true, help: 'partition number' },
    },
    run: findHanging,
  },
};

const ALL_VALUE_OPTIONS = new Set(
  [COMMON_SPECS, ...Object.values(SUBCOMMANDS).map((s) => s.specs)].flatMap((specs) =>
    Object.entries(specs)
      .filter(([, spec]) => spec.value)
      .map(([name]) => `--${name}`),
  ),
);

const NAMES = Object.keys(SUBCOMMANDS).join(', ');

export async function runTransactions(argv: string[]): Promise<number> {
  // The subcommand is the first word that is neither an option nor an option's value, as with argparse.
  let at = -1;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      if (!a.includes('=') && ALL_VALUE_OPTIONS.has(a)) i++;
      continue;
    }
    at = i;
    break;
  }
  const name = at < 0 ? undefined : argv[at]!;
  const sub = name === undefined ? undefined : SUBCOMMANDS[name];
  const rest = at < 0 ? argv : [...argv.slice(0, at), ...argv.slice(at + 1)];
  const tool: Tool = {
    name: `transactions ${name ?? `{${NAMES}}`}`,
    summary:
      sub?.summary ??
      `This tool is used to analyze the transactional state of producers in the cluster. Commands: ${NAMES}.`,
    specs: sub?.specs ?? {},
    run: async (args) => {
      if (sub === undefined) {
        if (name === undefined) throw new UsageError(`a command is required: one of ${NAMES}`);
        throw new UsageError(`invalid choice: '${name}' (choose from ${NAMES})`);
      }
      const admin = newClient(() => new Admin({ ...clientOptions(args) }));
      try {
        await sub.run(admin, args);
        return 0;
      } catch (e) {
        if (!(e instanceof ToolFailure)) throw e;
        process.stderr.write(`${e.message}\n`);
        return 1;
      } finally {
        await admin.close();
      }
    },
  };
  return runTool(tool, rest);
}
