// Membership of a classic group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) for any embedded protocol: the
// consumer's (group.ts, protocol type "consumer") and Kafka Connect's workers (protocol type "connect"). The
// coordinator treats protocol metadata and assignments as opaque bytes; a subclass says what they hold.
//
// Lifecycle: the owner calls ensureActive() from its loop; the member joins when it has no generation, when a
// heartbeat reported a rebalance, or when requestRejoin() asked for one. The leader of a generation computes
// every member's assignment in assign() and sends them in SyncGroup; each member gets its own bytes in
// onAssigned(). Heartbeats run on their own timer every heartbeat.interval.ms, so an owner that awaits slow
// work between ensureActive() calls keeps its membership; an owner that stops calling polled() for longer
// than the rebalance timeout leaves, as Kafka's consumer does past max.poll.interval.ms.
//
// A rebalance in three steps, as Kafka's AbstractCoordinator: beforeJoin() (the eager consumer's revocation) and
// onAssigned() (the new assignment and its listener) run inside ensureActive(), so inside the owner's poll; the
// JoinGroup and SyncGroup in between run on their own, and ensureActive(deadlineMs) stops waiting for them at the
// deadline (the consumer's poll timeout) and answers false: a JoinGroup the coordinator parks until every member
// has rejoined (up to the rebalance timeout) no longer holds a poll that long. A later ensureActive() waits for
// the same join again and applies its assignment.

import { ErrorCode, errorName } from '../protocol/errors.js';
import type { JoinGroupResponse } from '../protocol/messages/11-join-group.js';
import type { HeartbeatResponse } from '../protocol/messages/12-heartbeat.js';
import type { LeaveGroupResponse } from '../protocol/messages/13-leave-group.js';
import type { SyncGroupResponse } from '../protocol/messages/14-sync-group.js';
import { ApiKey } from '../protocol/registry.js';
import { type Cluster, sleep } from './cluster.js';
import { ConnectionError, KafkaClientError, KafkaProtocolError, RequestTimeoutError } from './errors.js';
import { findCoordinator } from './requests.js';

/**
 * Settings of a group member: group id, static instance id, session, rebalance and heartbeat timing, protocol
 * type.
 */
export interface GroupMembershipOptions {
  cluster: Cluster;
  groupId: string;
  groupInstanceId: string | null;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** "consumer", "connect", ...: members of one group must agree on it. */
  protocolType: string;
  /** Leave when polled() was not called within rebalanceTimeoutMs (the consumer's max.poll.interval.ms). */
  leaveWhenNotPolled: boolean;
}

/** One member's protocol metadata as the leader receives it in JoinGroup. */
export interface JoinedMember {
  memberId: string;
  groupInstanceId: string | null;
  metadata: Buffer;
}

/** The generation a member joined: the generation id, its member id and its static instance id. */
export interface GenerationInfo {
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

const MEMBER_ID_REQUIRED = 79;
/** The longest reason a JoinGroup or LeaveGroup carries, as Kafka's JoinGroupRequest.maybeTruncateReason. */
const REASON_LENGTH_MAX = 255;

/** Answers after which the member's generation is gone and it joins afresh. */
const GENERATION_LOST_CODES = new Set<number>([
  ErrorCode.UNKNOWN_MEMBER_ID,
  ErrorCode.ILLEGAL_GENERATION,
  ErrorCode.FENCED_INSTANCE_ID,
]);

/** Error codes whose Kafka exception class is not the code's name in camel case with "Exception" after it. */
const IRREGULAR_EXCEPTION_NAMES = new Map<number, string>([
  [ErrorCode.UNKNOWN_SERVER_ERROR, 'UnknownServerException'],
  [ErrorCode.REQUEST_TIMED_OUT, 'TimeoutException'],
  [ErrorCode.NETWORK_EXCEPTION, 'NetworkException'],
  [ErrorCode.GROUP_AUTHORIZATION_FAILED, 'GroupAuthorizationException'],
]);

/**
 * The simple class name of the exception Kafka's client raises for `err`, which its rejoin reason names
 * ("rebalance failed due to UnknownMemberIdException"): Errors' exception for a protocol error, DisconnectException
 * for a lost connection, TimeoutException for a request without an answer.
 */
function kafkaExceptionName(err: unknown): string {
  if (err instanceof KafkaProtocolError) {
    const irregular = IRREGULAR_EXCEPTION_NAMES.get(err.code);
    if (irregular !== undefined) return irregular;
    const words = err.type.toLowerCase().split('_');
    return `${words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}Exception`;
  }
  if (err instanceof RequestTimeoutError) return 'TimeoutException';
  if (err instanceof ConnectionError) return 'DisconnectException';
  return (err as Error).name;
}

function truncateReason(reason: string): string {
  return reason.length > REASON_LENGTH_MAX ? reason.slice(0, REASON_LENGTH_MAX) : reason;
}

/**
 * A classic group member's life (JoinGroup, SyncGroup, heartbeats, leave) for any protocol type; the consumer
 * and Connect's workers build on it.
 */
export abstract class GroupMembership {
  protected memberId = '';
  protected generationId = -1;
  protected protocolName: string | null = null;
  private coordinatorId = -1;
  protected needsJoin = true;
  /**
   * Why the next JoinGroup is sent (KIP-800, JoinGroup v8+), as Kafka's AbstractCoordinator.rejoinReason: empty for
   * the first join and after each completed one; the latest requestRejoin() reason otherwise.
   */
  private rejoinReason = '';
  /** The JoinGroup/SyncGroup exchange in flight, if any; it never rejects (see joinFailure). */
  private joining: Promise<void> | null = null;
  /** What ended the last join, kept until ensureActive() throws it (the join may end while nobody waits). */
  private joinFailure: { readonly error: unknown } | null = null;
  /** A completed join's assignment and generation, applied by the next ensureActive() (inside the owner's poll). */
  private joinedAssignment: {
    readonly protocolName: string;
    readonly assignment: Buffer;
    readonly generation: GenerationInfo;
  } | null = null;
  /** The generation whose assignment the owner applied last (see completedGeneration). */
  private appliedGeneration: GenerationInfo;
  /** Whether beforeJoin() is still to run for the next join (once per rebalance, as Kafka's needsJoinPrepare). */
  private prepareNeeded = true;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private lastPollMs = Date.now();
  protected left = false;

  /** leave() was told not to send LeaveGroup (nor for a member id a join in flight learns afterwards). */
  private silentLeave = false;

  constructor(protected readonly m: GroupMembershipOptions) {
    this.appliedGeneration = { generationId: -1, memberId: '', groupInstanceId: m.groupInstanceId };
  }

  /** The generation and member id an offset commit must carry, so the coordinator refuses one from a stale member. */
  generation(): GenerationInfo {
    return {
      generationId: this.generationId,
      memberId: this.memberId,
      groupInstanceId: this.m.groupInstanceId,
    };
  }

  /**
   * The generation of the assignment the owner works with: it changes only when a join's assignment is applied
   * (in the owner's poll), as KafkaConsumer.groupMetadata(), which Kafka's ConsumerCoordinator sets in
   * onJoinComplete only. generation() moves on as soon as JoinGroup answers, while the SyncGroup that brings the
   * assignment may still be in flight: a caller that took a new generation id there for a finished rebalance
   * found no partitions yet (an eager member gave them all up before joining).
   */
  completedGeneration(): GenerationInfo {
    return this.appliedGeneration;
  }

  /** True while the member has joined and no rebalance is pending: its assignment can be used. */
  isStable(): boolean {
    return this.generationId >= 0 && !this.needsJoin && this.joinedAssignment === null;
  }

  /** True when the next ensureActive() will join (a rebalance is pending for this member). */
  rejoinNeeded(): boolean {
    return this.needsJoin;
  }

  /**
   * Makes the next ensureActive() join again (the coordinator then rebalances the whole group); `reason` goes out
   * in the JoinGroup (Kafka's requestRejoin).
   */
  requestRejoin(reason: string): void {
    this.needsJoin = true;
    this.rejoinReason = reason;
  }

  /** requestRejoin unless a rejoin is already pending, whose reason then stays (Kafka's requestRejoinIfNecessary). */
  protected requestRejoinIfNecessary(reason: string): void {
    if (!this.needsJoin) this.requestRejoin(reason);
  }

  /** The owner shows it is alive: without it for rebalanceTimeoutMs the member leaves (max.poll.interval.ms). */
  polled(): void {
    this.lastPollMs = Date.now();
  }

  /** The protocols this member supports with their metadata, in order of preference, for the next JoinGroup. */
  protected abstract joinProtocols(): Promise<{ name: string; metadata: Buffer }[]>;
  /** The leader's part: every member's assignment, for the protocol the coordinator chose. */
  protected abstract assign(
    protocolName: string,
    leaderId: string,
    members: JoinedMember[],
  ): Promise<Map<string, Buffer>>;
  /** This member's assignment of the new generation. */
  protected abstract onAssigned(protocolName: string, assignment: Buffer): Promise<void>;
  /**
   * Before each join (the consumer's auto-commit and the eager protocol's revocation). False when `deadlineMs` (the
   * owner's poll timeout) passed with the preparation still under way: the next ensureActive() resumes it, as
   * Kafka's onJoinPrepare answers false while its auto-commit is out.
   */
  protected async beforeJoin(_deadlineMs: number): Promise<boolean> {
    return true;
  }
  /** The generation was lost without a chance to hand work over cleanly (fenced, timed out). */
  protected onGenerationLost(): void {}

  /** The generation is gone: the next join is prepared again (beforeJoin hands over what is lost), inside poll. */
  private loseGeneration(): void {
    this.prepareNeeded = true;
    this.onGenerationLost();
  }

  /**
   * Joins (or rejoins) when needed; true once the member has a current assignment, false when `deadlineMs`
   * (Date.now() time) passed while the coordinator had not answered the join yet: it goes on, and a later call
   * waits for it again. The rebalance's callbacks (beforeJoin, onAssigned) run inside this call and are not cut
   * short by the deadline.
   */
  async ensureActive(deadlineMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    for (;;) {
      if (this.left) return true;
      const joined = this.joinedAssignment;
      if (joined !== null) {
        this.joinedAssignment = null;
        this.prepareNeeded = true;
        // Set before the assignor's and the listener's callbacks, as Kafka's onJoinComplete does.
        this.appliedGeneration = joined.generation;
        await this.onAssigned(joined.protocolName, joined.assignment);
        continue;
      }
      const failure = this.joinFailure;
      if (failure !== null) {
        this.joinFailure = null;
        throw failure.error;
      }
      if (!this.needsJoin) return true;
      if (this.joining === null) {
        if (this.prepareNeeded) {
          if (!(await this.beforeJoin(deadlineMs))) return false;
          this.prepareNeeded = false;
          if (this.left) return true;
        }
        this.joining = this.join().then(
          () => {
            this.joining = null;
          },
          (error: unknown) => {
            this.joining = null;
            this.joinFailure = { error };
          },
        );
      }
      if (!(await settledBefore(this.joining, deadlineMs))) return false;
    }
  }

  /**
   * True while a JoinGroup or SyncGroup is out (Kafka's PREPARING_REBALANCE and COMPLETING_REBALANCE): the member
   * has no stable generation to commit with.
   */
  joinInFlight(): boolean {
    return this.joining !== null;
  }

  /** True from the moment a rebalance is needed until its assignment is applied (Kafka's rebalanceInProgress). */
  rebalanceInProgress(): boolean {
    return this.needsJoin || this.joining !== null || this.joinedAssignment !== null;
  }

  protected log(message: string, fields: Record<string, string | number | boolean>): void {
    this.m.cluster.options.logger?.debug(message, {
      group: this.m.groupId,
      memberId: this.memberId,
      ...fields,
    });
  }

  private async coordinator(): Promise<number> {
    if (this.coordinatorId < 0) this.coordinatorId = await findCoordinator(this.m.cluster, this.m.groupId);
    return this.coordinatorId;
  }

  private async join(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.joinOnce();
        return;
      } catch (err) {
        if (this.left) return;
        this.log('join failed', { attempt, error: (err as Error).message });
        // As Kafka's joinGroupIfNeeded after a failed attempt: the exception's class name.
        this.rejoinReason = `rebalance failed due to ${kafkaExceptionName(err)}`;
        if (err instanceof KafkaProtocolError) {
          // Retriable answers too: NOT_COORDINATOR from a broker that no longer coordinates the group (it moved
          // while this member was joining) must send the next JoinGroup to the new coordinator, not back there.
          if (!this.handleGroupError(err.code) && !err.retriable) throw err;
          // The generation was lost: the next join starts from ensureActive(), after beforeJoin, in the poll.
          if (this.prepareNeeded) return;
        } else if (err instanceof KafkaClientError && err.retriable) {
          // The coordinator did not answer (gone, restarting): look it up again, as Kafka's client marks the
          // coordinator unknown on a disconnect.
          this.coordinatorId = -1;
        } else {
          throw err;
        }
        await sleep(this.m.cluster.backoffMs(Math.min(attempt, 5)));
      }
    }
  }

  /** Reacts to a group error; true when a rejoin can cure it. */
  protected handleGroupError(code: number): boolean {
    switch (code) {
      case ErrorCode.UNKNOWN_MEMBER_ID:
      case ErrorCode.FENCED_INSTANCE_ID:
        this.memberId = '';
        this.generationId = -1;
        this.needsJoin = true;
        this.loseGeneration();
        return code === ErrorCode.UNKNOWN_MEMBER_ID;
      case ErrorCode.ILLEGAL_GENERATION:
        this.generationId = -1;
        this.needsJoin = true;
        this.loseGeneration();
        return true;
      case ErrorCode.REBALANCE_IN_PROGRESS:
        this.needsJoin = true;
        return true;
      case ErrorCode.NOT_COORDINATOR:
      case ErrorCode.COORDINATOR_NOT_AVAILABLE:
      case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        this.coordinatorId = -1;
        return true;
      default:
        return false;
    }
  }

  private async joinOnce(): Promise<void> {
    const cluster = this.m.cluster;
    this.stopHeartbeats();
    const protocols = await this.joinProtocols();
    const coordinator = await this.coordinator();
    const joinBody = (memberId: string) => ({
      groupId: this.m.groupId,
      sessionTimeoutMs: this.m.sessionTimeoutMs,
      rebalanceTimeoutMs: this.m.rebalanceTimeoutMs,
      memberId,
      groupInstanceId: this.m.groupInstanceId,
      protocolType: this.m.protocolType,
      protocols,
      reason: truncateReason(this.rejoinReason),
    });
    const rebalanceWaitMs = this.m.rebalanceTimeoutMs + 5000;
    this.log('JoinGroup sent', { coordinator, waitMs: rebalanceWaitMs });
    let join = await cluster.send<JoinGroupResponse>(
      coordinator,
      ApiKey.JOIN_GROUP,
      joinBody(this.memberId),
      {
        timeoutMs: rebalanceWaitMs,
      },
    );
    if (join.errorCode === MEMBER_ID_REQUIRED) {
      this.memberId = join.memberId;
      this.rejoinReason = `need to re-join with the given member-id: ${join.memberId}`;
      join = await cluster.send<JoinGroupResponse>(coordinator, ApiKey.JOIN_GROUP, joinBody(this.memberId), {
        timeoutMs: rebalanceWaitMs,
      });
    }
    this.log('JoinGroup answered', {
      errorCode: join.errorCode,
      generationId: join.generationId,
      leader: join.leader === join.memberId,
    });
    if (join.errorCode !== 0) throw new KafkaProtocolError(join.errorCode, 'JoinGroup');
    if (this.left) {
      // Left while the coordinator held the JoinGroup: the member it just admitted leaves as well.
      if (join.memberId !== this.memberId) {
        this.memberId = join.memberId;
        if (!this.silentLeave) await this.sendLeave('the member left while joining').catch(() => {});
      }
      return;
    }
    this.memberId = join.memberId;
    this.generationId = join.generationId;
    this.protocolName = join.protocolName;
    let assignments: { memberId: string; assignment: Buffer }[] = [];
    if (join.leader === join.memberId && !join.skipAssignment) {
      const members = join.members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        metadata: m.metadata,
      }));
      const plan = await this.assign(join.protocolName ?? '', join.leader, members);
      assignments = [...plan].map(([memberId, assignment]) => ({ memberId, assignment }));
    }
    const sync = await cluster.send<SyncGroupResponse>(
      coordinator,
      ApiKey.SYNC_GROUP,
      {
        groupId: this.m.groupId,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: this.m.groupInstanceId,
        protocolType: this.m.protocolType,
        protocolName: this.protocolName,
        assignments,
      },
      { timeoutMs: rebalanceWaitMs },
    );
    this.log('SyncGroup answered', { errorCode: sync.errorCode, generationId: this.generationId });
    if (sync.errorCode !== 0) throw new KafkaProtocolError(sync.errorCode, 'SyncGroup');
    if (this.left) return;
    // onAssigned may ask for another rejoin (a cooperative member that gave work up); it decides after this,
    // when ensureActive() applies the assignment.
    this.needsJoin = false;
    this.rejoinReason = '';
    this.startHeartbeats();
    this.joinedAssignment = {
      protocolName: this.protocolName ?? '',
      assignment: sync.assignment,
      generation: this.generation(),
    };
  }

  private startHeartbeats(): void {
    this.stopHeartbeats();
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.m.heartbeatIntervalMs);
  }

  protected stopHeartbeats(): void {
    if (this.heartbeatTimer !== null) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private heartbeat(): void {
    if (this.m.leaveWhenNotPolled && Date.now() - this.lastPollMs > this.m.rebalanceTimeoutMs) {
      // max.poll.interval.ms passed without a poll: give the work to someone who is making progress. As Kafka's
      // maybeLeaveGroup, only a dynamic member sends LeaveGroup: a static one stays in the group until its session
      // times out, so that a late poll finds its place (and partitions) kept instead of a rebalance done.
      this.m.cluster.options.logger?.warn(
        'consumer poll timeout has expired: the time between calls to poll() was longer than ' +
          'max.poll.interval.ms; increase max.poll.interval.ms or reduce max.poll.records',
        { group: this.m.groupId, memberId: this.memberId },
      );
      this.stopHeartbeats();
      if (this.m.groupInstanceId === null)
        this.sendLeave('consumer poll timeout has expired.').catch(() => {});
      this.memberId = '';
      this.generationId = -1;
      this.requestRejoin('consumer pro-actively leaving the group');
      this.loseGeneration();
      return;
    }
    const coordinator = this.coordinatorId;
    if (coordinator < 0) return;
    this.m.cluster
      .send<HeartbeatResponse>(coordinator, ApiKey.HEARTBEAT, {
        groupId: this.m.groupId,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: this.m.groupInstanceId,
      })
      .then(
        (res) => {
          if (res.errorCode === 0) return;
          this.log('Heartbeat answered', { errorCode: res.errorCode, generationId: this.generationId });
          this.handleGroupError(res.errorCode);
          this.noteHeartbeatRejoin(res.errorCode);
          if (res.errorCode === ErrorCode.FENCED_INSTANCE_ID) this.fencedByInstance();
        },
        () => {
          this.coordinatorId = -1;
          this.coordinator().catch(() => {});
        },
      );
  }

  /**
   * An offset commit of generation `sent` the coordinator refused, as Kafka's OffsetCommitResponseHandler takes it:
   * REBALANCE_IN_PROGRESS makes the member rejoin, keeping its generation; UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION
   * lose the generation (and, for the first, the member id) and rejoin, unless the member has moved on since.
   */
  commitRefused(code: number, sent: GenerationInfo): void {
    if (code === ErrorCode.REBALANCE_IN_PROGRESS) {
      this.requestRejoin('offset commit failed since group is already rebalancing');
      return;
    }
    if (code !== ErrorCode.UNKNOWN_MEMBER_ID && code !== ErrorCode.ILLEGAL_GENERATION) return;
    if (sent.generationId !== this.generationId || sent.memberId !== this.memberId) return;
    this.handleGroupError(code);
    this.rejoinReason = `encountered ${errorName(code)} from OFFSET_COMMIT response`;
  }

  /**
   * Another instance with this group.instance.id replaced the member. As Kafka's heartbeat thread, which keeps a
   * FencedInstanceIdException for the next poll to throw, the next ensureActive() throws FENCED_INSTANCE_ID instead
   * of rejoining quietly (which would take the id back and fence the other instance in turn); heartbeats stop.
   */
  private fencedByInstance(): void {
    this.stopHeartbeats();
    this.joinFailure ??= {
      error: new KafkaProtocolError(
        ErrorCode.FENCED_INSTANCE_ID,
        `the group instance id ${this.m.groupInstanceId} has been fenced by another instance`,
      ),
    };
  }

  /** The reason Kafka's heartbeat handler gives the rejoin an error answer asks for. */
  private noteHeartbeatRejoin(code: number): void {
    if (code === ErrorCode.REBALANCE_IN_PROGRESS) this.rejoinReason = 'group is already rebalancing';
    else if (GENERATION_LOST_CODES.has(code))
      this.rejoinReason = `encountered ${errorName(code)} from HEARTBEAT response`;
  }

  protected async sendLeave(reason: string): Promise<void> {
    if (this.memberId === '' || this.coordinatorId < 0) return;
    const res = await this.m.cluster.send<LeaveGroupResponse>(this.coordinatorId, ApiKey.LEAVE_GROUP, {
      groupId: this.m.groupId,
      memberId: this.memberId,
      members: [
        { memberId: this.memberId, groupInstanceId: this.m.groupInstanceId, reason: truncateReason(reason) },
      ],
    });
    if (res.errorCode !== 0 && res.errorCode !== ErrorCode.UNKNOWN_MEMBER_ID) {
      throw new KafkaProtocolError(res.errorCode, 'LeaveGroup');
    }
  }

  /**
   * Stops taking part in the group: hands the work over (onLeave) and, for a dynamic member, sends LeaveGroup so
   * the group rebalances at once (a static member keeps its place until its session ends). With `sendLeaveGroup`
   * false (Kafka's internal.leave.group.on.close=false) it only stops: the coordinator keeps the member until its
   * session times out, as it keeps a static member. `staticToo` (Kafka 4.1's close with GroupMembershipOperation
   * LEAVE_GROUP) sends LeaveGroup for a static member as well, which removes it from the group at once.
   */
  async leave(
    reason = 'the member is being closed',
    sendLeaveGroup = true,
    staticToo = false,
  ): Promise<void> {
    if (this.left) return;
    this.left = true;
    this.silentLeave = !sendLeaveGroup;
    this.stopHeartbeats();
    // A join in flight is not waited for (the coordinator may hold it for the rebalance timeout): it stops when
    // answered, and a member id it learned then leaves too (joinOnce).
    this.joinedAssignment = null;
    if (sendLeaveGroup) await this.onLeave();
    if ((this.m.groupInstanceId === null || staticToo) && sendLeaveGroup)
      await this.sendLeave(reason).catch(() => {});
    this.generationId = -1;
  }

  /** Before the LeaveGroup request: hand work over. */
  protected async onLeave(): Promise<void> {}
}

/** Waits for `p` until `deadlineMs` (Date.now() time); true when it settled by then. `p` must not reject. */
export async function settledBefore(p: Promise<void>, deadlineMs: number): Promise<boolean> {
  if (deadlineMs === Number.POSITIVE_INFINITY) {
    await p;
    return true;
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadlineMs - Date.now()));
  });
  try {
    return await Promise.race([p.then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
