// The streams partition assignor (Kafka's StreamsPartitionAssignor, protocol name "stream"): every stream thread's
// consumer uses one. It puts a SubscriptionInfo in the member's subscription user data and reads an
// AssignmentInfo from its assignment's user data; the group leader's assign() turns the subscriptions into
// tasks placed per client (task-assignment.ts) and then into partitions per member.
//
// User data: Kafka's binary SubscriptionInfo (subscription-info.ts) and AssignmentInfo (assignment-info.ts),
// version 11 unless version probing agreed on an older one or upgrade.from asks for 1 or 2 (upgrade-from.ts, which
// also makes the protocol eager when upgrading from before 2.4); Brook's earlier JSON user data (an object with
// `version` 1) is still read, for rolling upgrades.
// Version probing (KIP-268), as Kafka's StreamsPartitionAssignor: each member subscribes with its used version
// (at first its latest) and its latest supported version. The leader reads a subscription newer than its own
// latest only for those two numbers (its member joins the "future" client, without previous tasks), and writes
// every assignment in the lowest used version of the group, with the lowest latest supported version as the
// commonly supported one. A member whose assignment comes in a lower version than it used drops to the commonly
// supported version and rejoins at once; one whose commonly supported version rose above its used version (the
// older members left) rises to it and rejoins. The group then settles on the highest version all members speak.
// Below version 3 there is nothing to probe (those releases send no latest supported version): the group stays on
// the lowest version sent until its members send a newer one.
// The fields are Kafka's:
//   SubscriptionInfo: processId, userEndpoint (application.server or ""), prevTasks / standbyTasks (what this
//     member ran in the previous generation), taskOffsetSums (per task with state in this client's state
//     directory: the sum of its changelog offsets in the checkpoint), errorCode (SHUTDOWN_REQUESTED from a
//     client whose uncaught exception handler answered SHUTDOWN_APPLICATION, else 0), clientTags. In the binary
//     form the tasks travel as one offset sum each (LATEST_OFFSET for the previous active tasks), so a task with
//     state on disk reads back as a standby, as in Kafka.
//   AssignmentInfo: activeTasks and standbyTasks of this member, partitionsByHost and standbyPartitionsByHost
//     ("host:port" -> [topic, partition] pairs of every client with an endpoint), errCode: SHUTDOWN_REQUESTED
//     for every member, with no tasks, when any member asked for it (KIP-671), else 0; nextRebalanceMs: the
//     wall-clock time of the probing rebalance when the assignment holds warm-up replicas (KIP-441), else 0.
// The members' client.rack comes in the consumer subscription itself (v3), not in the user data.

import type {
  Assignment,
  AssignorCluster,
  ConsumerPartitionAssignor,
  GroupAssignment,
  GroupSubscription,
} from '../../client/assignors.js';
import type { TopicPartition } from '../../client/requests.js';
import type { Topology } from '../topology.js';
import { decodeAssignmentInfoBytes, encodeAssignmentInfo } from './assignment-info.js';
import { partitionKey } from './partition-key.js';
import type { RackAwareStrategy } from './rack-aware-task-assignor.js';
import {
  decodeSubscriptionInfoBytes,
  EARLIEST_PROBEABLE_VERSION,
  encodeSubscriptionInfo,
  LATEST_SUPPORTED_VERSION,
  subscriptionVersions,
} from './subscription-info.js';
import {
  assignTasks,
  type ClientState,
  compareTaskIds,
  type HighAvailability,
  type RackAwareActive,
  spreadOverMembers,
} from './task-assignment.js';
import { configuredMetadataVersion, rebalanceProtocol, type UpgradeFrom } from './upgrade-from.js';

const USER_DATA_VERSION = 1;
/** Kafka's AssignorError.SHUTDOWN_REQUESTED: every instance of the application shuts down. */
export const SHUTDOWN_REQUESTED = 2;

/** Kafka's FUTURE_ID: the client of every member whose subscription is newer than the leader reads. */
export const FUTURE_PROCESS_ID = '00000000-0000-0000-0000-000000000000';

export interface SubscriptionInfo {
  version: number;
  /** The latest version the member reads (from version 3; the version itself before). */
  latestSupportedVersion?: number;
  processId: string;
  userEndpoint: string;
  prevTasks: string[];
  standbyTasks: string[];
  taskOffsetSums: Record<string, number>;
  errorCode: number;
  /** client.tag.* of the instance (Kafka's SubscriptionInfo clientTags, KIP-708). */
  clientTags?: Record<string, string>;
}

export interface AssignmentInfo {
  version: number;
  /** The group's lowest latest supported version (version probing); the version itself when absent. */
  commonlySupportedVersion?: number;
  activeTasks: string[];
  standbyTasks: string[];
  partitionsByHost: Record<string, [string, number][]>;
  standbyPartitionsByHost: Record<string, [string, number][]>;
  errCode: number;
  /** When to rejoin for a probing rebalance (epoch ms); 0 or absent: no probing rebalance is due. */
  nextRebalanceMs?: number;
}

export function encodeInfo(info: SubscriptionInfo | AssignmentInfo): Buffer {
  return Buffer.from(JSON.stringify(info));
}

/**
 * Null for bytes that are neither Kafka's SubscriptionInfo (versions 1 to `latestSupported`) nor Brook's earlier
 * JSON one.
 */
export function decodeSubscriptionInfo(
  bytes: Buffer | null,
  latestSupported = LATEST_SUPPORTED_VERSION,
): SubscriptionInfo | null {
  if (bytes === null || bytes.length === 0) return null;
  if (bytes[0] !== 0x7b) return decodeSubscriptionInfoBytes(bytes, latestSupported);
  const v = parse(bytes);
  if (v === null || typeof v.processId !== 'string' || !Array.isArray(v.prevTasks)) return null;
  return {
    version: USER_DATA_VERSION,
    processId: v.processId,
    userEndpoint: typeof v.userEndpoint === 'string' ? v.userEndpoint : '',
    prevTasks: (v.prevTasks as unknown[]).filter((t): t is string => typeof t === 'string'),
    standbyTasks: Array.isArray(v.standbyTasks)
      ? (v.standbyTasks as unknown[]).filter((t): t is string => typeof t === 'string')
      : [],
    taskOffsetSums:
      typeof v.taskOffsetSums === 'object' && v.taskOffsetSums !== null
        ? (v.taskOffsetSums as Record<string, number>)
        : {},
    errorCode: typeof v.errorCode === 'number' ? v.errorCode : 0,
    clientTags:
      typeof v.clientTags === 'object' && v.clientTags !== null
        ? Object.fromEntries(
            Object.entries(v.clientTags as Record<string, unknown>).filter(
              (e): e is [string, string] => typeof e[1] === 'string',
            ),
          )
        : {},
  };
}

export function decodeAssignmentInfo(
  bytes: Buffer | null,
  latestSupported = LATEST_SUPPORTED_VERSION,
): AssignmentInfo | null {
  if (bytes === null || bytes.length === 0) return null;
  if (bytes[0] !== 0x7b) return decodeAssignmentInfoBytes(bytes, latestSupported);
  const v = parse(bytes);
  if (v === null || !Array.isArray(v.activeTasks) || !Array.isArray(v.standbyTasks)) return null;
  return v as unknown as AssignmentInfo;
}

function parse(bytes: Buffer | null): Record<string, unknown> | null {
  if (bytes === null || bytes.length === 0) return null;
  try {
    const v = JSON.parse(bytes.toString('utf8')) as unknown;
    if (typeof v !== 'object' || v === null) return null;
    const o = v as Record<string, unknown>;
    return o.version === USER_DATA_VERSION ? o : null;
  } catch {
    return null;
  }
}

/** What the assignor reads from and tells its stream thread. */
export interface StreamsAssignorContext {
  processId: string;
  applicationServer: string | null;
  applicationId: string;
  numStandbyReplicas: number;
  acceptableRecoveryLag: number;
  maxWarmupReplicas: number;
  probingRebalanceIntervalMs: number;
  /** rack.aware.assignment.tags (the leader's): tag keys standbys are spread over. */
  rackAwareAssignmentTags: string[];
  /** This instance's client.tag.* values. */
  clientTags: Record<string, string>;
  /** rack.aware.assignment.strategy (KIP-925; 'none' turns it off) and its costs (null: Kafka's defaults). */
  rackAwareAssignmentStrategy?: RackAwareStrategy;
  rackAwareTrafficCost?: number | null;
  rackAwareNonOverlapCost?: number | null;
  /**
   * The latest user data version this instance reads and writes (brook.assignment.latest.supported.version,
   * 7 to 11; 11 by default): lower only to play an older instance, as in version probing tests.
   */
  latestSupportedVersion?: number;
  /** upgrade.from: the release a rolling upgrade starts from (null or absent: none). */
  upgradeFrom?: UpgradeFrom | null;
  topology: Topology;
  /** The end offsets of changelog partitions ("topic:partition" -> next offset), for the lags (KIP-441). */
  endOffsets(tps: TopicPartition[]): Promise<Map<string, number>>;
  /**
   * The group's committed offsets of source topic partitions ("topic:partition" -> offset, -1 or absent: none): the
   * end of a store restored from its source topic (reuse.ktable.source.topics), as far as its task has processed.
   */
  committedOffsets?(tps: TopicPartition[]): Promise<Map<string, number>>;
  /** Real (prefixed) name of a topology topic. */
  realTopic(topic: string): string;
  /** Tasks this thread ran (active and standby) in the previous generation. */
  previousTasks(): { active: string[]; standby: string[] };
  /** Task id -> changelog offset sum of the state in this client's state directory. */
  taskOffsetSums(): Map<string, number>;
  /** The error code this member sends (SHUTDOWN_REQUESTED to shut the application down). */
  errorCode(): number;
  onAssignment(info: AssignmentInfo, partitions: TopicPartition[], generationId: number): void;
  /** A join starts (Kafka's TaskManager.handleRebalanceStart, from subscriptionUserData). */
  onRebalanceStart?(): void;
  log(message: string): void;
}

/**
 * "topic:partition" -> the member that owns it now (the cooperative subscriptions' owned partitions); when two
 * members claim one, the claim of the newer generation wins (the other's generation was fenced).
 */
function partitionOwners(group: GroupSubscription): Map<string, string> {
  const claims = new Map<string, { memberId: string; generationId: number }>();
  for (const [memberId, s] of group.subscriptions) {
    for (const tp of s.ownedPartitions) {
      const k = partitionKey(tp);
      const prev = claims.get(k);
      if (prev === undefined || s.generationId > prev.generationId)
        claims.set(k, { memberId, generationId: s.generationId });
    }
  }
  return new Map([...claims].map(([k, c]) => [k, c.memberId]));
}

/** The oldest latest supported version an instance may play (brook.assignment.latest.supported.version). */
const MIN_PLAYED_LATEST_VERSION = 7;

export class StreamsPartitionAssignor implements ConsumerPartitionAssignor {
  readonly name = 'stream';
  /**
   * KIP-429, as Kafka Streams since 2.4: cooperative, a task that stays keeps running through a rebalance; eager
   * (everything revoked before each join) while upgrading from an older release (upgrade.from before 2.4).
   */
  readonly protocol: 'eager' | 'cooperative';

  /** The latest user data version this instance speaks. */
  readonly latestSupportedVersion: number;
  /** Kafka's usedSubscriptionMetadataVersion: the version this member subscribes with (version probing). */
  usedVersion: number;

  constructor(private readonly ctx: StreamsAssignorContext) {
    const latest = ctx.latestSupportedVersion ?? LATEST_SUPPORTED_VERSION;
    if (!Number.isInteger(latest) || latest < MIN_PLAYED_LATEST_VERSION || latest > LATEST_SUPPORTED_VERSION)
      throw new Error(
        `latest supported version ${latest} is not between ${MIN_PLAYED_LATEST_VERSION} and ${LATEST_SUPPORTED_VERSION}`,
      );
    this.latestSupportedVersion = latest;
    const upgradeFrom = ctx.upgradeFrom ?? null;
    this.usedVersion = configuredMetadataVersion(upgradeFrom, latest);
    if (this.usedVersion < latest)
      ctx.log(
        `Downgrading metadata.version from ${latest} to ${this.usedVersion} for upgrade from ${upgradeFrom}.x.`,
      );
    this.protocol = rebalanceProtocol(upgradeFrom);
    if (this.protocol === 'eager') {
      ctx.log(`Eager rebalancing protocol is enabled now for upgrade from ${upgradeFrom}.x`);
      ctx.log(
        "The eager rebalancing protocol is deprecated and will stop being supported in a future release. Please be prepared to remove the 'upgrade.from' config soon.",
      );
    }
  }

  /** Kafka's uniqueField: a byte counted up with every subscription. */
  private uniqueField = 0;

  subscriptionUserData(): Buffer {
    this.ctx.onRebalanceStart?.();
    const prev = this.ctx.previousTasks();
    this.uniqueField = (this.uniqueField + 1) % 128;
    return encodeSubscriptionInfo(
      {
        version: USER_DATA_VERSION,
        processId: this.ctx.processId,
        userEndpoint: this.ctx.applicationServer ?? '',
        prevTasks: prev.active,
        standbyTasks: prev.standby,
        taskOffsetSums: Object.fromEntries(this.ctx.taskOffsetSums()),
        errorCode: this.ctx.errorCode(),
        clientTags: this.ctx.clientTags,
      },
      this.uniqueField,
      this.usedVersion,
      this.latestSupportedVersion,
    );
  }

  /**
   * The versions of this generation's assignments (Kafka's checkMetadataVersions): the lowest used version of
   * the group (never above this leader's latest) and the lowest latest supported version. Logs a probing.
   */
  private assignmentVersions(group: GroupSubscription): { version: number; commonlySupported: number } {
    let minUsed = this.latestSupportedVersion;
    let minSupported = this.latestSupportedVersion;
    let future = 0;
    for (const s of group.subscriptions.values()) {
      const v = s.userData === null ? null : subscriptionVersions(s.userData);
      if (v === null) continue;
      minUsed = Math.min(minUsed, v.version);
      minSupported = Math.min(minSupported, v.latestSupportedVersion);
      if (v.version > this.latestSupportedVersion) future = Math.max(future, v.version);
    }
    if (future > 0)
      this.ctx.log(
        `received a future (version probing) subscription (version: ${future}); sending the assignment back with supported version ${minSupported}`,
      );
    if (minUsed < this.latestSupportedVersion)
      this.ctx.log(
        `downgrading the assignment to version ${minUsed}; latest supported is ${this.latestSupportedVersion}`,
      );
    return { version: minUsed, commonlySupported: Math.max(minSupported, minUsed) };
  }

  /** Task id -> the source partitions it reads (equal partition numbers of its sub-topology's topics). */
  private tasksOf(cluster: AssignorCluster): Map<string, TopicPartition[]> {
    const out = new Map<string, TopicPartition[]>();
    for (const st of this.ctx.topology.subtopologies()) {
      if (st.global) continue;
      const topics = st.sourceTopics.map((t) => this.ctx.realTopic(t));
      const counts = topics.map((t) => cluster.partitionCountForTopic(t) ?? 0);
      const n = Math.max(0, ...counts);
      for (let p = 0; p < n; p++) {
        const tps = topics.filter((_t, i) => p < counts[i]!).map((topic) => ({ topic, partition: p }));
        out.set(`${st.id}_${p}`, tps);
      }
    }
    return out;
  }

  /**
   * Task id -> the partitions of its logged stores' changelogs (persistent or in memory; not suppress buffers) and
   * of the source topics its stores are restored from (reuse.ktable.source.topics, `source` set): the state a
   * standby or warm-up replica can build (a task without any is stateless to the placement), as Kafka's
   * ChangelogTopics counts a source topic used as a changelog.
   */
  private changelogsOf(tasks: string[]): Map<string, (TopicPartition & { source: boolean })[]> {
    const out = new Map<string, (TopicPartition & { source: boolean })[]>();
    for (const id of tasks) {
      const [st, partition] = id.split('_').map(Number) as [number, number];
      const sub = this.ctx.topology.subtopologies()[st];
      const tps: (TopicPartition & { source: boolean })[] = [];
      for (const name of sub?.stores ?? []) {
        const b = this.ctx.topology.stores.get(name);
        const sourceTopic = this.ctx.topology.sourceChangelogs.get(name);
        if (sourceTopic !== undefined)
          tps.push({ topic: this.ctx.realTopic(sourceTopic), partition, source: true });
        else if (b?.loggingEnabled && !b.suppressBuffer)
          tps.push({ topic: `${this.ctx.applicationId}-${name}-changelog`, partition, source: false });
      }
      out.set(id, tps);
    }
    return out;
  }

  /**
   * Each stateful task's changelog end offset sum, or null when the ends cannot be read (no warm-ups then). As
   * Kafka's computeEndOffsetSumsByTask, a source topic partition a store is restored from counts with the group's
   * committed offset (0 when none), not its end: the store follows its task's processing.
   */
  private async endOffsetSums(tasks: string[]): Promise<Map<string, number> | null> {
    const changelogs = this.changelogsOf(tasks);
    const all = [...changelogs.values()].flat();
    const sums = new Map<string, number>();
    if (all.length === 0) return sums;
    const strip = ({ topic, partition }: TopicPartition): TopicPartition => ({ topic, partition });
    const tps = all.filter((tp) => !tp.source).map(strip);
    const sources = all.filter((tp) => tp.source).map(strip);
    try {
      const ends = tps.length === 0 ? new Map<string, number>() : await this.ctx.endOffsets(tps);
      if (sources.length > 0) {
        if (this.ctx.committedOffsets === undefined) throw new Error('no committed offsets of source topics');
        for (const [key, offset] of await this.ctx.committedOffsets(sources))
          ends.set(key, Math.max(0, offset));
      }
      for (const [id, list] of changelogs)
        if (list.length > 0)
          sums.set(
            id,
            list.reduce((n, tp) => n + (ends.get(partitionKey(tp)) ?? 0), 0),
          );
      return sums;
    } catch (e) {
      this.ctx.log(`changelog end offsets unavailable, placing without lags: ${(e as Error).message}`);
      return null;
    }
  }

  async assign(cluster: AssignorCluster, group: GroupSubscription): Promise<GroupAssignment> {
    const infos = new Map<string, SubscriptionInfo | null>();
    for (const [memberId, s] of group.subscriptions)
      infos.set(memberId, decodeSubscriptionInfo(s.userData, this.latestSupportedVersion));
    const versions = this.assignmentVersions(group);
    if ([...infos.values()].some((i) => i?.errorCode === SHUTDOWN_REQUESTED)) {
      this.ctx.log('a member asked to shut the application down: every member gets SHUTDOWN_REQUESTED');
      const userData = encodeAssignmentInfo(
        {
          version: versions.version,
          commonlySupportedVersion: versions.commonlySupported,
          activeTasks: [],
          standbyTasks: [],
          partitionsByHost: {},
          standbyPartitionsByHost: {},
          errCode: SHUTDOWN_REQUESTED,
        },
        () => [],
      );
      return { assignments: new Map([...infos.keys()].map((id) => [id, { partitions: [], userData }])) };
    }
    const taskPartitions = this.tasksOf(cluster);
    const tasks = [...taskPartitions.keys()].sort(compareTaskIds);
    const rackAware = this.rackAwareness(cluster, group, taskPartitions);
    return this.assignTasks(
      taskPartitions,
      tasks,
      group,
      await this.endOffsetSums(tasks),
      rackAware,
      versions,
    );
  }

  /**
   * KIP-925's preconditions, as Kafka's RackAwareTaskAssignor checks them: a strategy other than none, a rack
   * (client.rack, sent in the subscription) for every member with all members of one client agreeing, and the
   * racks of every replica of every source partition. Else the placement ignores racks, with a log line.
   */
  private rackAwareness(
    cluster: AssignorCluster,
    group: GroupSubscription,
    taskPartitions: Map<string, TopicPartition[]>,
  ): RackAwareActive | undefined {
    const strategy = this.ctx.rackAwareAssignmentStrategy ?? 'none';
    if (strategy === 'none') return undefined;
    const off = (why: string): undefined => {
      this.ctx.log(`rack-aware assignment disabled: ${why}`);
      return undefined;
    };
    const clientRack = new Map<string, string>();
    for (const [memberId, s] of group.subscriptions) {
      const processId = this.clientOf(memberId, s.userData);
      if (s.rackId === null || s.rackId === '') return off(`member ${memberId} of ${processId} sent no rack`);
      const known = clientRack.get(processId);
      if (known !== undefined && known !== s.rackId)
        return off(`members of ${processId} are in racks ${known} and ${s.rackId}`);
      clientRack.set(processId, s.rackId);
    }
    const racksOf = new Map<string, Set<string>>();
    for (const tps of taskPartitions.values()) {
      for (const tp of tps) {
        const racks = cluster.partitionRacksForTopic?.(tp.topic)?.[tp.partition];
        if (racks === undefined || racks.length === 0)
          return off(`no rack known for the replicas of ${tp.topic}-${tp.partition}`);
        racksOf.set(partitionKey(tp), new Set(racks));
      }
    }
    return {
      strategy,
      trafficCost: this.ctx.rackAwareTrafficCost ?? null,
      nonOverlapCost: this.ctx.rackAwareNonOverlapCost ?? null,
      crossRackPartitions: (task, processId) => {
        const rack = clientRack.get(processId);
        return (taskPartitions.get(task) ?? []).filter(
          (tp) => rack === undefined || !racksOf.get(partitionKey(tp))!.has(rack),
        ).length;
      },
    };
  }

  private assignTasks(
    taskPartitions: Map<string, TopicPartition[]>,
    tasks: string[],
    group: GroupSubscription,
    endSums: Map<string, number> | null,
    rackAware: RackAwareActive | undefined,
    versions: { version: number; commonlySupported: number },
  ): GroupAssignment {
    // Members grouped by client (process id); a member whose user data cannot be read is a client of its own.
    const clients = new Map<string, { state: ClientState; endpoint: string; members: string[] }>();
    const infos = new Map<string, SubscriptionInfo>();
    for (const [memberId, s] of group.subscriptions) {
      const info = decodeSubscriptionInfo(s.userData, this.latestSupportedVersion) ?? {
        version: USER_DATA_VERSION,
        processId: this.clientOf(memberId, s.userData),
        userEndpoint: '',
        prevTasks: [],
        standbyTasks: [],
        taskOffsetSums: {},
        errorCode: 0,
      };
      infos.set(memberId, info);
      let c = clients.get(info.processId);
      if (c === undefined) {
        c = {
          state: {
            processId: info.processId,
            capacity: 0,
            prevActive: new Set(),
            prevStandby: new Set(),
            taskOffsetSums: new Map(),
            tags: info.clientTags ?? {},
          },
          endpoint: info.userEndpoint,
          members: [],
        };
        clients.set(info.processId, c);
      }
      c.state.capacity++;
      c.members.push(memberId);
      for (const t of info.prevTasks) c.state.prevActive.add(t);
      for (const t of info.standbyTasks) c.state.prevStandby.add(t);
      for (const [t, sum] of Object.entries(info.taskOffsetSums))
        if (typeof sum === 'number')
          c.state.taskOffsetSums.set(t, Math.max(sum, c.state.taskOffsetSums.get(t) ?? -1));
    }
    const ha: HighAvailability | null =
      endSums === null
        ? null
        : {
            acceptableRecoveryLag: this.ctx.acceptableRecoveryLag,
            maxWarmupReplicas: this.ctx.maxWarmupReplicas,
            lag: (c, task) => {
              const end = endSums.get(task);
              if (end === undefined) return 0;
              // Without local state the whole changelog is to be restored (Kafka's lag for an unknown sum).
              return Math.max(0, end - (c.taskOffsetSums.get(task) ?? 0));
            },
            // Kafka's stateful tasks: those with changelogs; standbys and warm-ups are placed for them only.
            stateful: new Set(endSums.keys()),
            rackAware,
          };
    const perClient = assignTasks(
      [...clients.values()].map((c) => c.state),
      tasks,
      this.ctx.numStandbyReplicas,
      ha,
      this.ctx.rackAwareAssignmentTags,
      (line) => this.ctx.log(line),
    );
    const warmups = [...perClient.values()].reduce((n, a) => n + a.warmup.length, 0);
    // KIP-441: warm-ups are probed for their lag after probing.rebalance.interval.ms.
    const nextRebalanceMs = warmups > 0 ? Date.now() + this.ctx.probingRebalanceIntervalMs : 0;
    if (warmups > 0)
      this.ctx.log(
        `${warmups} warm-up replicas placed; probing rebalance in ${this.ctx.probingRebalanceIntervalMs} ms`,
      );
    if (this.ctx.numStandbyReplicas > 0 && clients.size <= this.ctx.numStandbyReplicas)
      this.ctx.log(
        `num.standby.replicas is ${this.ctx.numStandbyReplicas} but only ${clients.size} clients: some standbys are not assigned`,
      );
    // Per member: the client's tasks spread over its threads, then (cooperative protocol) without the tasks whose
    // partitions another member still owns: that member revokes them in this generation and rejoins, and the
    // follow-up rebalance hands them over (KIP-429). Every other task keeps running where it is.
    const owners = partitionOwners(group);
    const plans = new Map<string, { processId: string; active: string[]; standby: string[] }>();
    let withheld = 0;
    for (const c of clients.values()) {
      const a = perClient.get(c.state.processId)!;
      const members = c.members.map((memberId) => ({
        memberId,
        prev: new Set(infos.get(memberId)!.prevTasks),
        prevStandby: new Set(infos.get(memberId)!.standbyTasks),
      }));
      const active = spreadOverMembers(a.active, members);
      const standby = spreadOverMembers(
        a.standby,
        members.map((m) => ({ memberId: m.memberId, prev: m.prevStandby })),
      );
      for (const memberId of c.members) {
        const held: string[] = [];
        const mine = active.get(memberId)!.filter((id) => {
          const elsewhere = taskPartitions.get(id)!.some((tp) => {
            const owner = owners.get(partitionKey(tp));
            return owner !== undefined && owner !== memberId;
          });
          if (elsewhere) {
            withheld++;
            // Only from another instance: a task moving between threads of one instance keeps its state on disk
            // or in the running task, and a standby beside it would open its state directory twice.
            const fromElsewhere = taskPartitions.get(id)!.every((tp) => {
              const owner = owners.get(partitionKey(tp));
              return owner === undefined || infos.get(owner)?.processId !== c.state.processId;
            });
            if (fromElsewhere) held.push(id);
          }
          return !elsewhere;
        });
        // A withheld task stays (or becomes) a standby of its next owner until the follow-up rebalance, so that a
        // warm-up's state, in-memory stores included, is still there to be handed to the active task.
        const standbys = [...new Set([...standby.get(memberId)!, ...held])].sort(compareTaskIds);
        plans.set(memberId, { processId: c.state.processId, active: mine, standby: standbys });
      }
    }
    if (withheld > 0)
      this.ctx.log(
        `${withheld} tasks move: revoked from their owners first, assigned in a follow-up rebalance`,
      );
    const partitionsByHost: Record<string, [string, number][]> = {};
    const standbyPartitionsByHost: Record<string, [string, number][]> = {};
    const pairs = (ids: string[]): [string, number][] =>
      ids.flatMap((id) => taskPartitions.get(id)!.map((tp): [string, number] => [tp.topic, tp.partition]));
    for (const c of clients.values()) {
      if (c.endpoint === '') continue;
      const mine = c.members.map((m) => plans.get(m)!);
      partitionsByHost[c.endpoint] = pairs(mine.flatMap((p) => p.active).sort(compareTaskIds));
      standbyPartitionsByHost[c.endpoint] = pairs(mine.flatMap((p) => p.standby).sort(compareTaskIds));
    }
    const assignments = new Map<string, Assignment>();
    for (const [memberId, plan] of plans) {
      assignments.set(memberId, {
        partitions: plan.active.flatMap((id) => taskPartitions.get(id)!),
        userData: encodeAssignmentInfo(
          {
            version: versions.version,
            commonlySupportedVersion: versions.commonlySupported,
            activeTasks: plan.active,
            standbyTasks: plan.standby,
            partitionsByHost,
            standbyPartitionsByHost,
            errCode: 0,
            nextRebalanceMs,
          },
          (id) => taskPartitions.get(id) ?? [],
        ),
      });
    }
    return { assignments };
  }

  /**
   * The client a member belongs to: its process id; Kafka's FUTURE_ID for a subscription newer than this leader
   * reads; a client of its own for user data that cannot be read.
   */
  private clientOf(memberId: string, userData: Buffer | null): string {
    const info = decodeSubscriptionInfo(userData, this.latestSupportedVersion);
    if (info !== null) return info.processId;
    const v = userData === null ? null : subscriptionVersions(userData);
    if (v !== null && v.version > this.latestSupportedVersion) return FUTURE_PROCESS_ID;
    return `unknown-${memberId}`;
  }

  onAssignment(assignment: Assignment, generation: { generationId: number }): void {
    const info = decodeAssignmentInfo(assignment.userData, this.latestSupportedVersion) ?? {
      version: USER_DATA_VERSION,
      activeTasks: [],
      standbyTasks: [],
      partitionsByHost: {},
      standbyPartitionsByHost: {},
      errCode: 0,
    };
    if (this.probeVersion(info)) info.nextRebalanceMs = Date.now();
    this.ctx.onAssignment(info, assignment.partitions, generation.generationId);
  }

  /**
   * Kafka's maybeUpdateSubscriptionVersion: true when this member changed the version it subscribes with and
   * must rejoin at once (a lower assignment version: someone has not upgraded; a higher commonly supported
   * version: everyone has). Binary assignments only (the JSON ones predate versions).
   */
  private probeVersion(info: AssignmentInfo): boolean {
    if (info.version < EARLIEST_PROBEABLE_VERSION) {
      // A release before 2.0 leads, or a member upgrading from one is in the group (upgrade.from): nothing to
      // probe until every member speaks version 3 or later.
      if (info.version < this.usedVersion)
        this.ctx.log(
          `received an assignment version ${info.version} that is less than the earliest version that allows version probing ${EARLIEST_PROBEABLE_VERSION}. If this is not during a rolling upgrade from version 2.0 or below, this is an error.`,
        );
      return false;
    }
    const received = info.version;
    const common = info.commonlySupportedVersion ?? received;
    if (received > this.usedVersion || common > this.latestSupportedVersion) {
      this.ctx.log(
        `the leader sent assignment version ${received} (commonly supported ${common}) to a version ${this.usedVersion} subscription: ignored`,
      );
      return false;
    }
    if (common > this.usedVersion) {
      this.ctx.log(
        `sent a version ${this.usedVersion} subscription and the group's commonly supported version is ${common}: upgrading the subscription and rejoining`,
      );
      this.usedVersion = common;
      return true;
    }
    if (received < this.usedVersion) {
      this.ctx.log(
        `sent a version ${this.usedVersion} subscription and got a version ${received} assignment (version probing): downgrading to ${common} and rejoining`,
      );
      this.usedVersion = common;
      return true;
    }
    return false;
  }
}
