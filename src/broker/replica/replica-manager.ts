// The partitions this broker hosts, created and changed by the controller's LeaderAndIsr and StopReplica
// requests, and the entry points produce and fetch use to reach them.
//
// Ownership: the ReplicaManager owns the Partition objects; the LogManager owns the logs. LeaderAndIsr is
// applied in one synchronous step per request (after any I/O it needs), so a concurrent produce sees either the
// old or the new leadership, never half of it.

import { type Clock, systemClock } from '../../common/clock.js';
import { asBrokerIds, type BrokerId } from '../../common/ids.js';
import type { Logger } from '../../common/logger.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  LeaderAndIsrRequest,
  LeaderAndIsrRequestLeaderAndIsrPartitionState,
  LeaderAndIsrResponse,
} from '../../protocol/messages/04-leader-and-isr.js';
import type { StopReplicaRequest, StopReplicaResponse } from '../../protocol/messages/05-stop-replica.js';
import type { UpdateMetadataRequest } from '../../protocol/messages/06-update-metadata.js';
import type { TopicPartition } from '../../storage/file-names.js';
import type { Log } from '../../storage/log.js';
import type { LogConfig } from '../../storage/log-config.js';
import { LogDirOfflineError } from '../../storage/log-dirs.js';
import type { TopicConfigs } from '../topic-configs.js';
import { DEFAULT_FOLLOWER_RULES, type FollowerRules, Partition } from './partition.js';

export function partitionKey(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** What the replica manager needs of the log directories (LogDirs, or one LogManager in tests). */
export interface PartitionLogs {
  getOrCreateLog(tp: TopicPartition, topicId?: string): Log;
  /** Resolves once the files of the logs created so far are durable (they are written off the event loop). */
  whenCreatedDurable(): Promise<void>;
  getLog(tp: TopicPartition): Log | undefined;
  deleteLog(tp: TopicPartition): boolean;
  updateConfig(topic: string, config: LogConfig): void;
  /** Every log loaded, hosted by a partition or not yet. */
  allLogs(): Iterable<Log>;
}

/** Told after a LeaderAndIsr request was applied, for each partition whose role it set (coordinators load state). */
export type LeadershipListener = (partition: Partition, isLeader: boolean) => void;

export class ReplicaManager {
  private readonly partitions = new Map<string, Partition>();
  /**
   * Partitions whose log is in an offline log directory (Kafka's HostedPartition.Offline): requests for them are
   * answered KAFKA_STORAGE_ERROR, LeaderAndIsr for them too (so the controller marks the replica offline).
   */
  private readonly offline = new Set<string>();
  private readonly leadershipListeners: LeadershipListener[] = [];
  private appendWrittenListener: ((partition: Partition) => void) | null = null;
  /** Controller epoch of the last accepted request: older controllers are fenced (STALE_CONTROLLER_EPOCH). */
  private controllerEpoch = -1;
  /** Set when the broker's shutdown begins: no partition is led from then on that was not led already. */
  private shuttingDown = false;

  constructor(
    private readonly brokerId: BrokerId,
    private readonly logs: PartitionLogs,
    private readonly topicConfigs: TopicConfigs,
    private readonly logger: Logger,
    /** The storage engine's config for a topic's logs, from its current settings. */
    private readonly storageConfigFor: (topic: string) => LogConfig,
    /** The partitions' clock (see Partition). */
    private readonly clock: Clock = systemClock,
    /** What the partitions' high watermark rule reads of the broker (see Partition's FollowerRules). */
    private readonly followerRules: FollowerRules = DEFAULT_FOLLOWER_RULES,
  ) {}

  /** Group and transaction coordinators follow the leadership of their internal topics' partitions. */
  onLeadershipChange(listener: LeadershipListener): void {
    this.leadershipListeners.push(listener);
  }

  /**
   * Told when a partition's queued appends were written (its high watermark already moved): waiting fetches
   * and acks=all produces of that partition can complete.
   */
  onAppendWritten(listener: (partition: Partition) => void): void {
    this.appendWrittenListener = listener;
  }

  /**
   * The broker is stopping. A LeaderAndIsr that would make it the leader of a partition it does not lead (sent by
   * a controller that does not know yet) is refused for that partition with BROKER_NOT_AVAILABLE: the partition
   * stays as it was, and the controller elects another leader when this broker's registration goes. Becoming a
   * follower, and new epochs of partitions it leads already, are still applied.
   */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  get(topic: string, partition: number): Partition | undefined {
    return this.partitions.get(partitionKey(topic, partition));
  }

  all(): IterableIterator<Partition> {
    return this.partitions.values();
  }

  /** True when the partition's log is in an offline log directory. */
  isOffline(topic: string, partition: number): boolean {
    return this.offline.has(partitionKey(topic, partition));
  }

  get offlineCount(): number {
    return this.offline.size;
  }

  /**
   * A log directory went offline: the partitions whose logs `inFailedDir` names stop being served (Kafka's
   * ReplicaManager.handleLogDirFailure). They leave the map (so fetchers drop them at their next refresh and
   * waiting produces end NOT_LEADER_OR_FOLLOWER) and are remembered as offline; coordinators on them unload.
   */
  takeOffline(inFailedDir: (partition: Partition) => boolean): Partition[] {
    const taken: Partition[] = [];
    for (const [key, p] of [...this.partitions]) {
      if (!inFailedDir(p)) continue;
      this.partitions.delete(key);
      this.offline.add(key);
      taken.push(p);
    }
    for (const p of taken) for (const listener of this.leadershipListeners) listener(p, false);
    return taken;
  }

  /**
   * Resolves once the logs created by the requests applied so far are durable on disk (their partition.metadata
   * is written off the event loop); a write error took its directory offline and is not thrown here.
   */
  async whenLogsDurable(): Promise<void> {
    await this.logs.whenCreatedDurable().catch(() => {});
  }

  becomeLeaderOrFollower(request: LeaderAndIsrRequest): LeaderAndIsrResponse {
    if (request.controllerEpoch < this.controllerEpoch) {
      this.logger.warn(
        `LeaderAndIsr from controller ${request.controllerId} refused: controller epoch ${request.controllerEpoch} < ${this.controllerEpoch}`,
      );
      return { errorCode: ErrorCode.STALE_CONTROLLER_EPOCH, partitionErrors: [], topics: [] };
    }
    this.controllerEpoch = request.controllerEpoch;
    const states: { topicId: string; state: LeaderAndIsrRequestLeaderAndIsrPartitionState }[] = [];
    for (const state of request.ungroupedPartitionStates) states.push({ topicId: '', state });
    for (const t of request.topicStates) {
      for (const state of t.partitionStates)
        states.push({ topicId: t.topicId, state: { ...state, topicName: t.topicName } });
    }
    const errors = new Map<
      string,
      { topicId: string; partitionErrors: { topicName: string; partitionIndex: number; errorCode: number }[] }
    >();
    const partitionErrors: { topicName: string; partitionIndex: number; errorCode: number }[] = [];
    for (const { topicId, state } of states) {
      const errorCode = this.applyPartitionState(topicId, state);
      partitionErrors.push({ topicName: state.topicName, partitionIndex: state.partitionIndex, errorCode });
      let t = errors.get(state.topicName);
      if (t === undefined) {
        t = { topicId, partitionErrors: [] };
        errors.set(state.topicName, t);
      }
      t.partitionErrors.push({ topicName: state.topicName, partitionIndex: state.partitionIndex, errorCode });
    }
    return {
      errorCode: ErrorCode.NONE,
      partitionErrors,
      topics: [...errors.values()].map((t) => ({ topicId: t.topicId, partitionErrors: t.partitionErrors })),
    };
  }

  private applyPartitionState(topicId: string, state: LeaderAndIsrRequestLeaderAndIsrPartitionState): number {
    const key = partitionKey(state.topicName, state.partitionIndex);
    let partition = this.partitions.get(key);
    if (partition !== undefined && state.leaderEpoch < partition.leaderEpoch) {
      this.logger.warn(
        `LeaderAndIsr for ${key} ignored: leader epoch ${state.leaderEpoch} (leader ${state.leader}) < ours ${partition.leaderEpoch}`,
      );
      return ErrorCode.STALE_CONTROLLER_EPOCH;
    }
    // The controller's broker ids, branded where they enter the replica layer.
    const replicas = asBrokerIds(state.replicas);
    const leader = state.leader as BrokerId;
    if (!replicas.includes(this.brokerId)) return ErrorCode.NONE;
    if (this.offline.has(key)) return ErrorCode.KAFKA_STORAGE_ERROR;
    const isLeader = leader === this.brokerId;
    if (this.shuttingDown && isLeader && partition?.isLeader !== true) {
      this.logger.info(`not taking leadership of ${key} while shutting down`);
      return ErrorCode.BROKER_NOT_AVAILABLE;
    }
    if (partition === undefined) {
      try {
        const log = this.logs.getOrCreateLog(
          { topic: state.topicName, partition: state.partitionIndex },
          topicId === '' ? undefined : topicId,
        );
        const settings = this.topicConfigs.settingsFor(state.topicName);
        partition = new Partition(
          state.topicName,
          state.partitionIndex,
          topicId,
          log,
          this.brokerId,
          settings,
          this.clock,
          this.followerRules,
        );
        partition.onWritten = (p) => this.appendWrittenListener?.(p);
        this.partitions.set(key, partition);
      } catch (err) {
        this.logger.error(`cannot open log of ${key}: ${err instanceof Error ? err.message : String(err)}`);
        if (err instanceof LogDirOfflineError) this.offline.add(key);
        return ErrorCode.KAFKA_STORAGE_ERROR;
      }
    }
    if (isLeader) {
      partition.becomeLeader(state.leaderEpoch, state.partitionEpoch, replicas, asBrokerIds(state.isr));
    } else {
      partition.becomeFollower(leader, state.leaderEpoch, state.partitionEpoch, replicas);
    }
    for (const listener of this.leadershipListeners) listener(partition, isLeader);
    return ErrorCode.NONE;
  }

  stopReplicas(request: StopReplicaRequest): StopReplicaResponse {
    if (request.controllerEpoch < this.controllerEpoch) {
      return { errorCode: ErrorCode.STALE_CONTROLLER_EPOCH, partitionErrors: [] };
    }
    const targets: { topic: string; partition: number; deletePartition: boolean }[] = [];
    for (const p of request.ungroupedPartitions) {
      targets.push({
        topic: p.topicName,
        partition: p.partitionIndex,
        deletePartition: request.deletePartitions,
      });
    }
    for (const t of request.topics) {
      for (const p of t.partitionIndexes) {
        targets.push({ topic: t.name, partition: p, deletePartition: request.deletePartitions });
      }
    }
    for (const t of request.topicStates) {
      for (const p of t.partitionStates) {
        targets.push({ topic: t.topicName, partition: p.partitionIndex, deletePartition: p.deletePartition });
      }
    }
    const partitionErrors = [];
    for (const target of targets) {
      const key = partitionKey(target.topic, target.partition);
      const stopped = this.partitions.get(key);
      this.partitions.delete(key);
      // The replica moved away from a failed directory: its files stay there until an operator clears them.
      if (target.deletePartition) this.offline.delete(key);
      if (stopped !== undefined) for (const listener of this.leadershipListeners) listener(stopped, false);
      if (target.deletePartition) this.logs.deleteLog({ topic: target.topic, partition: target.partition });
      partitionErrors.push({
        topicName: target.topic,
        partitionIndex: target.partition,
        errorCode: ErrorCode.NONE,
      });
    }
    return { errorCode: ErrorCode.NONE, partitionErrors };
  }

  /**
   * Deletes the logs of stray replicas: partitions the controller's UpdateMetadata describes with a replica set
   * that no longer includes this broker, while this broker hosts no replica of them (no LeaderAndIsr made it
   * one). They are what a broker keeps when its replicas were moved away while it was gone: the controller's
   * StopReplica (delete) could not reach it then. Kafka deletes such stray logs once the broker learns from the
   * metadata that it is not a replica any more. Call only with an UpdateMetadata that was applied (not stale).
   * Answers the partitions whose logs were deleted.
   */
  deleteStrayReplicas(request: UpdateMetadataRequest): TopicPartition[] {
    const states = [
      ...request.ungroupedPartitionStates,
      ...request.topicStates.flatMap((t) => t.partitionStates.map((p) => ({ ...p, topicName: t.topicName }))),
    ];
    const deleted: TopicPartition[] = [];
    for (const state of states) {
      if (asBrokerIds(state.replicas).includes(this.brokerId)) continue;
      const key = partitionKey(state.topicName, state.partitionIndex);
      // A hosted replica leaves only through StopReplica; a log in a failed directory cannot be touched.
      if (this.partitions.has(key) || this.offline.has(key)) continue;
      const tp = { topic: state.topicName, partition: state.partitionIndex };
      // Only a log on disk: deleteLog would also forget a log directory chosen ahead for a replica to come.
      if (this.logs.getLog(tp) === undefined || !this.logs.deleteLog(tp)) continue;
      deleted.push(tp);
      this.logger.info(
        `deleted the log of stray replica ${key}: its replicas are now ${state.replicas.join(',')}, not this broker`,
      );
    }
    return deleted;
  }

  /**
   * The broker-wide config layers changed: every partition and every log reads its topic's settings again, once per
   * topic. Logs not hosted yet are included: at start the layers are read before the controller's first request,
   * and a log loaded from disk must not run retention or the cleaner on the static defaults until then (Kafka reads
   * the dynamic broker configs before it creates the log manager).
   */
  refreshAllSettings(): void {
    const topics = new Set<string>();
    for (const p of this.partitions.values()) topics.add(p.topic);
    for (const log of this.logs.allLogs()) topics.add(log.topicPartition.topic);
    for (const topic of topics) this.refreshSettings(topic);
  }

  /** A topic's config changed: its partitions read the new settings from now on. */
  refreshSettings(topic: string): void {
    const settings = this.topicConfigs.settingsFor(topic);
    for (const p of this.partitions.values()) if (p.topic === topic) p.settings = settings;
    this.logs.updateConfig(topic, this.storageConfigFor(topic));
  }
}
