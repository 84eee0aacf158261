// What this broker does with the controller's three requests, whether they arrive as direct calls (the
// controller runs in this process) or over the wire (handlers 04, 05, 06). Topic configs of topics new to this
// broker are read from the coordination store first, then each request is applied in one synchronous step.
//
// Requests carry the broker epoch the controller knows for this broker (the czxid of its registration): one
// older than this broker's registration comes from a controller that has not seen the restart and is refused
// with STALE_BROKER_EPOCH, as Kafka does.

import { type Logger, silentLogger } from '../../common/logger.js';
import type { CoordinationStore } from '../../controller/store/store.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { LeaderAndIsrRequest, LeaderAndIsrResponse } from '../../protocol/messages/04-leader-and-isr.js';
import type { StopReplicaRequest, StopReplicaResponse } from '../../protocol/messages/05-stop-replica.js';
import type {
  UpdateMetadataRequest,
  UpdateMetadataResponse,
} from '../../protocol/messages/06-update-metadata.js';
import { LEADER_DURING_DELETE, type MetadataCache } from '../metadata/metadata-cache.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import { readTopicOverrides } from '../stored-topic-configs.js';
import type { TopicConfigs } from '../topic-configs.js';

export class ControllerRequests {
  /** The czxid of this broker's registration; requests with an older broker epoch are stale. */
  brokerEpoch = -1;
  /**
   * Called after a LeaderAndIsr or StopReplica was applied, with the keys ("topic-partition") of the partitions
   * it named: the replica fetchers follow the new leaders and stop fetching partitions this broker no longer
   * hosts (a reassignment removed it, or the topic was deleted); produces waiting for the high watermark of a
   * partition this broker no longer leads end.
   */
  onReplicasChanged: (partitionKeys: readonly string[]) => void = () => {};
  /**
   * Called after an UpdateMetadata was applied, with the partitions it marked deleted (leader -2): the group
   * coordinator drops the offsets committed for them, as Kafka's KafkaApis does on UpdateMetadata. Only partitions
   * of topics the metadata still showed: the controller may mark a topic deleted in several requests while its
   * deletion goes on, and each call goes through every group's offsets.
   */
  onPartitionsDeleted: (partitions: readonly { topic: string; partition: number }[]) => void = () => {};

  constructor(
    private readonly store: CoordinationStore,
    private readonly metadata: MetadataCache,
    private readonly replicas: ReplicaManager,
    private readonly topicConfigs: TopicConfigs,
    private readonly logger: Logger = silentLogger,
  ) {}

  async leaderAndIsr(request: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> {
    if (this.isStale(request.brokerEpoch)) {
      return { errorCode: ErrorCode.STALE_BROKER_EPOCH, partitionErrors: [], topics: [] };
    }
    const loaded = await this.loadConfigs(topicsOf(request));
    if (loaded === 'unread') {
      return { errorCode: ErrorCode.REQUEST_TIMED_OUT, partitionErrors: [], topics: [] };
    }
    // As Kafka, whose createLog reads the topic's config and throws from its decode: the whole request fails, and
    // the controller logs the error and does not send it again (not retriable).
    if (loaded === 'refused') {
      return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, partitionErrors: [], topics: [] };
    }
    const response = this.replicas.becomeLeaderOrFollower(request);
    this.onReplicasChanged([
      ...request.ungroupedPartitionStates.map((p) => `${p.topicName}-${p.partitionIndex}`),
      ...request.topicStates.flatMap((t) =>
        t.partitionStates.map((p) => `${t.topicName}-${p.partitionIndex}`),
      ),
    ]);
    // The new logs' files are written off the event loop, many at once; the answer (and so a CreateTopics
    // answer, which waits for it) still comes only once they are durable, as when each was written in turn.
    await this.replicas.whenLogsDurable();
    return response;
  }

  async updateMetadata(request: UpdateMetadataRequest): Promise<UpdateMetadataResponse> {
    if (this.isStale(request.brokerEpoch)) return { errorCode: ErrorCode.STALE_BROKER_EPOCH };
    const fresh = [...topicsOf(request)].filter((t) => this.metadata.topic(t) === undefined);
    // A refused config document does not stop the metadata: Kafka's UpdateMetadata reads no topic config.
    if ((await this.loadConfigs(fresh)) === 'unread') return { errorCode: ErrorCode.REQUEST_TIMED_OUT };
    const deleted = deletedPartitionsOf(request).filter((p) => this.metadata.topic(p.topic) !== undefined);
    const applied = this.metadata.applyUpdateMetadata(request, new Map());
    if (applied) {
      this.replicas.deleteStrayReplicas(request);
      if (deleted.length > 0) this.onPartitionsDeleted(deleted);
    }
    return { errorCode: applied ? ErrorCode.NONE : ErrorCode.STALE_CONTROLLER_EPOCH };
  }

  async stopReplica(request: StopReplicaRequest): Promise<StopReplicaResponse> {
    if (this.isStale(request.brokerEpoch))
      return { errorCode: ErrorCode.STALE_BROKER_EPOCH, partitionErrors: [] };
    const response = this.replicas.stopReplicas(request);
    this.onReplicasChanged(response.partitionErrors.map((p) => `${p.topicName}-${p.partitionIndex}`));
    return response;
  }

  private isStale(requestEpoch: bigint): boolean {
    return requestEpoch >= 0n && this.brokerEpoch >= 0 && Number(requestEpoch) < this.brokerEpoch;
  }

  /**
   * Reads the topics' config overrides. A read that fails (the store unreachable: a broker cut off ZooKeeper
   * still gets its own controller's requests) says nothing about them: the overrides known stay, and a topic with
   * none known yet makes the request fail with a retriable error ('unread'), so the controller sends it again. A
   * document refused (a value that is not a string, see readTopicOverrides) keeps the overrides known too; a topic
   * with none known yet is 'refused', which the controller is not made to send again: the answer would not change
   * until someone writes the node. Taken
   * as "no overrides", it put the topic on the broker's defaults (min.insync.replicas, cleanup.policy, retention)
   * until the next request. The topic's logs and partitions take what was read at once: logs loaded at start
   * were opened with the overrides read then (broker.ts loadLogs; a read that failed there stopped the start), and
   * the topic may have changed since; Kafka's LogManager keeps each log on its topic's.
   */
  private async loadConfigs(topics: Iterable<string>): Promise<'loaded' | 'unread' | 'refused'> {
    const names = [...topics];
    const unread = await readTopicOverrides(this.store, names, this.topicConfigs);
    const missed = new Set(unread.map((u) => u.topic));
    for (const topic of names) if (!missed.has(topic)) this.replicas.refreshSettings(topic);
    const unknown = unread.filter((u) => !this.topicConfigs.hasOverrides(u.topic));
    if (unknown.some((u) => !u.refused)) return 'unread';
    for (const u of unknown) this.logger.error(`the config of topic ${u.topic} is refused: ${u.reason}`);
    return unknown.length > 0 ? 'refused' : 'loaded';
  }
}

/** The partitions an UpdateMetadata marks deleted: Kafka's LeaderDuringDelete (-2) as their leader. */
function deletedPartitionsOf(r: UpdateMetadataRequest): { topic: string; partition: number }[] {
  return [
    ...r.ungroupedPartitionStates.map((s) => ({ topic: s.topicName, s })),
    ...r.topicStates.flatMap((t) => t.partitionStates.map((s) => ({ topic: t.topicName, s }))),
  ]
    .filter(({ s }) => s.leader === LEADER_DURING_DELETE)
    .map(({ topic, s }) => ({ topic, partition: s.partitionIndex }));
}

function topicsOf(r: LeaderAndIsrRequest | UpdateMetadataRequest): Set<string> {
  return new Set([
    ...r.topicStates.map((t) => t.topicName),
    ...r.ungroupedPartitionStates.map((p) => p.topicName),
  ]);
}
