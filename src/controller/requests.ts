// Builds LeaderAndIsr, UpdateMetadata and StopReplica requests from the controller's context, in the newest
// versions' shape (partitions grouped by topic, with topic ids and partition epochs).

import type { BrokerId, PartitionId } from '../common/ids.js';
import type {
  LeaderAndIsrRequest,
  LeaderAndIsrRequestLeaderAndIsrPartitionState,
  LeaderAndIsrRequestLeaderAndIsrTopicState,
} from '../protocol/messages/04-leader-and-isr.js';
import type { StopReplicaRequest } from '../protocol/messages/05-stop-replica.js';
import type {
  UpdateMetadataRequest,
  UpdateMetadataRequestUpdateMetadataBroker,
  UpdateMetadataRequestUpdateMetadataPartitionState,
  UpdateMetadataRequestUpdateMetadataTopicState,
} from '../protocol/messages/06-update-metadata.js';
import { type ControllerContext, type PartitionEntry, replicasOf, type TopicPartition } from './context.js';
import { EPOCH_DURING_DELETE, LEADER_DURING_DELETE } from './leader-election.js';
import type { BrokerEndpoint, SecurityProtocol } from './zk-layout/index.js';

/** Kafka's SecurityProtocol ids, as UpdateMetadata carries them. */
const SECURITY_PROTOCOL_IDS: Record<SecurityProtocol, number> = {
  PLAINTEXT: 0,
  SSL: 1,
  SASL_PLAINTEXT: 2,
  SASL_SSL: 3,
};

export interface RequestHeaderFields {
  readonly controllerId: BrokerId;
  /** The listener other brokers are reached on (inter.broker.listener.name); null: each broker's first. */
  readonly interBrokerListener: string | null;
}

function brokerEpochOf(ctx: ControllerContext, broker: BrokerId): bigint {
  return BigInt(ctx.liveBrokers.get(broker)?.epoch ?? -1);
}

function interBrokerEndpoint(
  ctx: ControllerContext,
  broker: BrokerId,
  listener: string | null,
): BrokerEndpoint | null {
  const endpoints = ctx.liveBrokers.get(broker)?.registration.endpoints ?? [];
  return (listener === null ? endpoints[0] : endpoints.find((e) => e.listenerName === listener)) ?? null;
}

function groupByTopic(partitions: readonly TopicPartition[]): Map<string, TopicPartition[]> {
  const out = new Map<string, TopicPartition[]>();
  for (const tp of partitions) {
    const list = out.get(tp.topic) ?? [];
    list.push(tp);
    out.set(tp.topic, list);
  }
  return out;
}

/** LeaderAndIsr for `broker` about `partitions` (those without a leadership are left out). */
export function buildLeaderAndIsr(
  ctx: ControllerContext,
  header: RequestHeaderFields,
  broker: BrokerId,
  partitions: readonly TopicPartition[],
  isNew: (tp: TopicPartition) => boolean,
): LeaderAndIsrRequest | null {
  const topicStates: LeaderAndIsrRequestLeaderAndIsrTopicState[] = [];
  const leaders = new Set<BrokerId>();
  for (const [topic, tps] of groupByTopic(partitions)) {
    const t = ctx.topics.get(topic);
    if (t === undefined) continue;
    const states: LeaderAndIsrRequestLeaderAndIsrPartitionState[] = [];
    for (const tp of tps) {
      const entry = t.partitions.get(tp.partition);
      if (entry?.leadership == null) continue;
      const l = entry.leadership;
      if (l.leader >= 0) leaders.add(l.leader);
      states.push({
        topicName: topic,
        partitionIndex: tp.partition,
        controllerEpoch: entry.controllerEpoch,
        leader: l.leader,
        leaderEpoch: l.leaderEpoch,
        isr: [...l.isr],
        partitionEpoch: entry.partitionEpoch,
        replicas: [...entry.assignment.replicas],
        addingReplicas: [...entry.assignment.addingReplicas],
        removingReplicas: [...entry.assignment.removingReplicas],
        isNew: isNew(tp),
        leaderRecoveryState: l.leaderRecoveryState,
      });
    }
    if (states.length > 0)
      topicStates.push({ topicName: topic, topicId: t.topicId, partitionStates: states });
  }
  if (topicStates.length === 0) return null;
  const liveLeaders = [...leaders]
    .sort((a, b) => a - b)
    .flatMap((id) => {
      const e = interBrokerEndpoint(ctx, id, header.interBrokerListener);
      return e === null ? [] : [{ brokerId: id, hostName: e.host, port: e.port }];
    });
  return {
    controllerId: header.controllerId,
    isKRaftController: false,
    controllerEpoch: ctx.epoch,
    brokerEpoch: brokerEpochOf(ctx, broker),
    type: 0,
    ungroupedPartitionStates: [],
    topicStates,
    liveLeaders,
  };
}

/** The live brokers as UpdateMetadata lists them. */
export function metadataBrokers(ctx: ControllerContext): UpdateMetadataRequestUpdateMetadataBroker[] {
  return [...ctx.liveBrokers.values()]
    .sort((a, b) => a.registration.brokerId - b.registration.brokerId)
    .map(({ registration }) => {
      const plaintext = registration.endpoints.find((e) => e.securityProtocol === 'PLAINTEXT');
      return {
        id: registration.brokerId,
        v0Host: plaintext?.host ?? '',
        v0Port: plaintext?.port ?? -1,
        endpoints: registration.endpoints.map((e) => ({
          port: e.port,
          host: e.host,
          listener: e.listenerName,
          securityProtocol: SECURITY_PROTOCOL_IDS[e.securityProtocol],
        })),
        rack: registration.rack,
      };
    });
}

function metadataPartitionState(
  ctx: ControllerContext,
  topic: string,
  partition: number,
  entry: PartitionEntry,
  deleting: boolean,
): UpdateMetadataRequestUpdateMetadataPartitionState | null {
  const l = entry.leadership;
  if (l === null) return null;
  return {
    topicName: topic,
    partitionIndex: partition,
    controllerEpoch: entry.controllerEpoch,
    leader: deleting ? LEADER_DURING_DELETE : l.leader,
    leaderEpoch: l.leaderEpoch,
    isr: [...l.isr],
    zkVersion: entry.partitionEpoch,
    replicas: [...entry.assignment.replicas],
    offlineReplicas: replicasOf(entry).filter(
      (r) =>
        !ctx.liveBrokers.has(r) || ctx.isReplicaOffline(r, { topic, partition: partition as PartitionId }),
    ),
  };
}

/**
 * UpdateMetadata with every live broker and the given partitions. Partitions of topics in `deleted` carry
 * leader -2, which tells brokers to drop them from their metadata, as in Kafka.
 */
export function buildUpdateMetadata(
  ctx: ControllerContext,
  header: RequestHeaderFields,
  broker: BrokerId,
  partitions: readonly TopicPartition[],
  deleted: ReadonlySet<string> = new Set(),
): UpdateMetadataRequest {
  const topicStates: UpdateMetadataRequestUpdateMetadataTopicState[] = [];
  for (const [topic, tps] of groupByTopic(partitions)) {
    const t = ctx.topics.get(topic);
    if (t === undefined) continue;
    const states: UpdateMetadataRequestUpdateMetadataPartitionState[] = [];
    for (const tp of tps) {
      const entry = t.partitions.get(tp.partition);
      if (entry === undefined) continue;
      const state = metadataPartitionState(ctx, topic, tp.partition, entry, deleted.has(topic));
      if (state !== null) states.push(state);
    }
    if (states.length > 0)
      topicStates.push({ topicName: topic, topicId: t.topicId, partitionStates: states });
  }
  return {
    controllerId: header.controllerId,
    isKRaftController: false,
    type: 0,
    controllerEpoch: ctx.epoch,
    brokerEpoch: brokerEpochOf(ctx, broker),
    ungroupedPartitionStates: [],
    topicStates,
    liveBrokers: metadataBrokers(ctx),
  };
}

/** StopReplica for `broker`; with `deletePartitions` the replicas' logs are deleted (topic deletion). */
export function buildStopReplica(
  ctx: ControllerContext,
  header: RequestHeaderFields,
  broker: BrokerId,
  partitions: readonly TopicPartition[],
  deletePartitions: boolean,
): StopReplicaRequest {
  const topicStates = [...groupByTopic(partitions)].map(([topic, tps]) => ({
    topicName: topic,
    partitionStates: tps.map((tp) => {
      const epoch = ctx.partition(tp)?.leadership?.leaderEpoch ?? -1;
      return {
        partitionIndex: tp.partition,
        leaderEpoch: deletePartitions ? EPOCH_DURING_DELETE : epoch,
        deletePartition: deletePartitions,
      };
    }),
  }));
  return {
    controllerId: header.controllerId,
    isKRaftController: false,
    controllerEpoch: ctx.epoch,
    brokerEpoch: brokerEpochOf(ctx, broker),
    deletePartitions,
    ungroupedPartitions: [],
    topics: [],
    topicStates,
  };
}
