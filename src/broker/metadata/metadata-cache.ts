// The broker's view of the cluster: live brokers with their endpoints, topics with their ids and partitions
// (leader, leader epoch, replicas, ISR, offline replicas), and the controller id. The controller pushes changes
// (UpdateMetadata in a cluster, a direct call on a single node); request handlers only read.
//
// Ownership: one MetadataCache per broker; changes are applied synchronously, so a handler that reads several
// fields during one request sees one consistent state.

export interface BrokerEndpoint {
  readonly listenerName: string;
  readonly host: string;
  readonly port: number;
  readonly securityProtocol: string;
}

export interface BrokerInfo {
  readonly id: number;
  readonly rack: string | null;
  readonly endpoints: readonly BrokerEndpoint[];
}

export interface PartitionInfo {
  readonly partition: number;
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly offlineReplicas: readonly number[];
}

export interface TopicInfo {
  readonly name: string;
  /** Kafka's UUID text form (base64url, 22 characters). */
  readonly topicId: string;
  readonly isInternal: boolean;
  readonly partitions: readonly PartitionInfo[];
}

import type { UpdateMetadataRequest } from '../../protocol/messages/06-update-metadata.js';

/** Kafka's security protocol ids, as UpdateMetadata carries them. */
const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

export const INTERNAL_TOPICS = new Set(['__consumer_offsets', '__transaction_state']);

/** The leader id Kafka's controller sends in UpdateMetadata for partitions of a topic being deleted. */
export const LEADER_DURING_DELETE = -2;

export class MetadataCache {
  private readonly brokers = new Map<number, BrokerInfo>();
  private readonly topicsByName = new Map<string, TopicInfo>();
  private readonly topicsById = new Map<string, TopicInfo>();
  controllerId = -1;
  private controllerEpoch = -1;

  constructor(readonly clusterId: string) {}

  putBroker(broker: BrokerInfo): void {
    this.brokers.set(broker.id, broker);
  }

  removeBroker(id: number): void {
    this.brokers.delete(id);
  }

  putTopic(topic: TopicInfo): void {
    const old = this.topicsByName.get(topic.name);
    if (old !== undefined) this.topicsById.delete(old.topicId);
    this.topicsByName.set(topic.name, topic);
    this.topicsById.set(topic.topicId, topic);
  }

  removeTopic(name: string): void {
    const old = this.topicsByName.get(name);
    if (old === undefined) return;
    this.topicsByName.delete(name);
    this.topicsById.delete(old.topicId);
  }

  broker(id: number): BrokerInfo | undefined {
    return this.brokers.get(id);
  }

  aliveBrokers(): BrokerInfo[] {
    return [...this.brokers.values()].sort((a, b) => a.id - b.id);
  }

  topic(name: string): TopicInfo | undefined {
    return this.topicsByName.get(name);
  }

  topicById(topicId: string): TopicInfo | undefined {
    return this.topicsById.get(topicId);
  }

  topics(): TopicInfo[] {
    return [...this.topicsByName.values()];
  }

  partition(topic: string, partition: number): PartitionInfo | undefined {
    return this.topicsByName.get(topic)?.partitions[partition];
  }

  /**
   * Applies an UpdateMetadata request from the controller: the live brokers are replaced, the partition states
   * it carries are merged in (a partition whose leader is -2, Kafka's LeaderDuringDelete, removes its topic).
   * Returns false for a request from an older controller epoch, which is ignored.
   */
  applyUpdateMetadata(request: UpdateMetadataRequest, topicIds: ReadonlyMap<string, string>): boolean {
    if (request.controllerEpoch < this.controllerEpoch) return false;
    this.controllerEpoch = request.controllerEpoch;
    this.controllerId = request.controllerId;
    this.brokers.clear();
    for (const b of request.liveBrokers) {
      this.brokers.set(b.id, {
        id: b.id,
        rack: b.rack,
        endpoints: b.endpoints.map((e) => ({
          listenerName: e.listener,
          host: e.host,
          port: e.port,
          securityProtocol: SECURITY_PROTOCOLS[e.securityProtocol] ?? 'PLAINTEXT',
        })),
      });
    }
    const states = [
      ...request.ungroupedPartitionStates.map((s) => ({ topicId: topicIds.get(s.topicName) ?? '', s })),
      ...request.topicStates.flatMap((t) =>
        t.partitionStates.map((s) => ({ topicId: t.topicId, s: { ...s, topicName: t.topicName } })),
      ),
    ];
    const changed = new Map<string, { topicId: string; partitions: PartitionInfo[] }>();
    const deleted = new Set<string>();
    for (const { topicId, s } of states) {
      if (s.leader === LEADER_DURING_DELETE) {
        deleted.add(s.topicName);
        continue;
      }
      let entry = changed.get(s.topicName);
      if (entry === undefined) {
        const existing = this.topicsByName.get(s.topicName);
        entry = {
          topicId: topicId || existing?.topicId || '',
          partitions: existing ? [...existing.partitions] : [],
        };
        changed.set(s.topicName, entry);
      }
      entry.partitions[s.partitionIndex] = {
        partition: s.partitionIndex,
        leader: s.leader,
        leaderEpoch: s.leaderEpoch,
        replicas: s.replicas,
        isr: s.isr,
        offlineReplicas: s.offlineReplicas,
      };
    }
    for (const name of deleted) this.removeTopic(name);
    for (const [name, entry] of changed) {
      if (deleted.has(name)) continue;
      this.putTopic({
        name,
        topicId: entry.topicId,
        isInternal: INTERNAL_TOPICS.has(name),
        // A partition the request did not mention and the cache did not know is a hole; drop holes.
        partitions: entry.partitions.filter((p) => p !== undefined),
      });
    }
    return true;
  }

  /** The endpoint of a broker on the listener a client connected through, as Kafka answers metadata. */
  endpointFor(brokerId: number, listenerName: string): BrokerEndpoint | undefined {
    return this.brokers.get(brokerId)?.endpoints.find((e) => e.listenerName === listenerName);
  }
}
