// Replica assignment for new topics and partitions, following Kafka's AdminUtils.assignReplicasToBrokers.
//
// Without racks: the first replica of each partition goes round-robin over the sorted brokers from a random
// start, and each follower is placed at a shift from the first replica; the shift grows by one every time the
// partitions have gone once around the brokers, so that followers of a broker's leaders spread over all other
// brokers instead of piling onto its neighbour.
//
// With racks: the brokers are first arranged in a list that alternates racks (rack a, rack b, rack c, rack a,
// ...); first replicas go round-robin over that list, and followers are taken at the same kind of shift but a
// broker is skipped while a rack without a replica of the partition exists, or while a broker without one
// exists. Every partition therefore spans min(racks, replication factor) racks.
//
// Kafka refuses to assign with racks known for only some brokers ("Enforced" rack-aware mode); so does this.

import type { BrokerId, PartitionId } from '../common/ids.js';
import { ErrorCode } from '../protocol/errors.js';
import type { Random } from './random.js';

export interface BrokerRack {
  readonly id: BrokerId;
  readonly rack: string | null;
}

/** An operating error as Kafka reports it: an error code and a message for the client. */
export interface ApiError {
  readonly errorCode: number;
  readonly errorMessage: string;
}

export type AssignmentResult =
  | { readonly ok: true; readonly assignment: Map<PartitionId, BrokerId[]> }
  | ({ readonly ok: false } & ApiError);

export interface AssignOptions {
  readonly partitionCount: number;
  readonly replicationFactor: number;
  /** The first partition id to assign (the current partition count when adding partitions). */
  readonly startPartitionId?: number;
  /** A fixed start index instead of a random one (adding partitions, tests); -1 means random. */
  readonly fixedStartIndex?: number;
}

export function assignReplicas(
  brokers: readonly BrokerRack[],
  options: AssignOptions,
  random: Random,
): AssignmentResult {
  const { partitionCount, replicationFactor } = options;
  if (partitionCount <= 0) {
    return fail(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.');
  }
  if (replicationFactor <= 0) {
    return fail(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.');
  }
  if (replicationFactor > brokers.length) {
    return fail(
      ErrorCode.INVALID_REPLICATION_FACTOR,
      `Replication factor: ${replicationFactor} larger than available brokers: ${brokers.length}.`,
    );
  }
  const withRack = brokers.filter((b) => b.rack !== null).length;
  if (withRack === 0) return { ok: true, assignment: rackUnaware(brokers, options, random) };
  if (withRack < brokers.length) {
    return fail(
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      'Not all brokers have rack information for replica rack aware assignment.',
    );
  }
  return { ok: true, assignment: rackAware(brokers, options, random) };
}

function fail(errorCode: number, errorMessage: string): AssignmentResult {
  return { ok: false, errorCode, errorMessage };
}

function starts(count: number, options: AssignOptions, random: Random): { start: number; shift: number } {
  const fixed = options.fixedStartIndex ?? -1;
  if (fixed >= 0) return { start: fixed, shift: fixed };
  return { start: random.nextInt(count), shift: random.nextInt(count) };
}

/** The index of a follower: never the first replica's own index, spread by the shift. */
function followerIndex(firstIndex: number, shift: number, nth: number, brokerCount: number): number {
  const offset = 1 + ((shift + nth) % (brokerCount - 1));
  return (firstIndex + offset) % brokerCount;
}

function rackUnaware(
  brokers: readonly BrokerRack[],
  options: AssignOptions,
  random: Random,
): Map<PartitionId, BrokerId[]> {
  const ids = brokers.map((b) => b.id).sort((a, b) => a - b);
  const n = ids.length;
  let { start, shift } = starts(n, options, random);
  const out = new Map<PartitionId, BrokerId[]>();
  let partition = Math.max(0, options.startPartitionId ?? 0);
  for (let i = 0; i < options.partitionCount; i++, partition++) {
    if (partition > 0 && partition % n === 0) shift += 1;
    const first = (partition + start) % n;
    const replicas = [ids[first]!];
    for (let j = 0; j < options.replicationFactor - 1; j++)
      replicas.push(ids[followerIndex(first, shift, j, n)]!);
    out.set(partition as PartitionId, replicas);
  }
  return out;
}

/** Brokers ordered so that consecutive ones are on different racks while every rack still has brokers. */
export function rackAlternatedBrokers(brokers: readonly BrokerRack[]): BrokerId[] {
  const byRack = new Map<string, BrokerId[]>();
  for (const b of brokers) {
    const list = byRack.get(b.rack!) ?? [];
    list.push(b.id);
    byRack.set(b.rack!, list);
  }
  const racks = [...byRack.keys()].sort();
  for (const rack of racks) byRack.get(rack)!.sort((a, b) => a - b);
  const cursors = new Map(racks.map((r) => [r, 0]));
  const out: BrokerId[] = [];
  for (let rackIndex = 0; out.length < brokers.length; rackIndex = (rackIndex + 1) % racks.length) {
    const rack = racks[rackIndex]!;
    const list = byRack.get(rack)!;
    const cursor = cursors.get(rack)!;
    if (cursor < list.length) {
      out.push(list[cursor]!);
      cursors.set(rack, cursor + 1);
    }
  }
  return out;
}

function rackAware(
  brokers: readonly BrokerRack[],
  options: AssignOptions,
  random: Random,
): Map<PartitionId, BrokerId[]> {
  const rackOf = new Map(brokers.map((b) => [b.id, b.rack!]));
  const rackCount = new Set(rackOf.values()).size;
  const arranged = rackAlternatedBrokers(brokers);
  const n = arranged.length;
  let { start, shift } = starts(n, options, random);
  const out = new Map<PartitionId, BrokerId[]>();
  let partition = Math.max(0, options.startPartitionId ?? 0);
  for (let i = 0; i < options.partitionCount; i++, partition++) {
    if (partition > 0 && partition % n === 0) shift += 1;
    const first = (partition + start) % n;
    const leader = arranged[first]!;
    const replicas = [leader];
    const racksUsed = new Set([rackOf.get(leader)!]);
    const brokersUsed = new Set([leader]);
    let k = 0;
    for (let j = 0; j < options.replicationFactor - 1; j++) {
      for (;;) {
        const broker = arranged[followerIndex(first, shift * rackCount, k, n)]!;
        const rack = rackOf.get(broker)!;
        k += 1;
        const rackOk = !racksUsed.has(rack) || racksUsed.size === rackCount;
        const brokerOk = !brokersUsed.has(broker) || brokersUsed.size === n;
        if (rackOk && brokerOk) {
          replicas.push(broker);
          racksUsed.add(rack);
          brokersUsed.add(broker);
          break;
        }
      }
    }
    out.set(partition as PartitionId, replicas);
  }
  return out;
}
