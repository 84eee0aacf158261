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

import { ErrorCode } from '../protocol/errors.js';
import type { JoinGroupResponse } from '../protocol/messages/11-join-group.js';
import type { HeartbeatResponse } from '../protocol/messages/12-heartbeat.js';
import type { LeaveGroupResponse } from '../protocol/messages/13-leave-group.js';
import type { SyncGroupResponse } from '../protocol/messages/14-sync-group.js';
import { ApiKey } from '../protocol/registry.js';
import { type Cluster, sleep } from './cluster.js';
import { KafkaClientError, KafkaProtocolError } from './errors.js';
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
  private joining: Promise<void> | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private lastPollMs = Date.now();
  protected left = false;

  constructor(protected readonly m: GroupMembershipOptions) {}

  /** The generation and member id an offset commit must carry, so the coordinator refuses one from a stale member. */
  generation(): GenerationInfo {
    return {
      generationId: this.generationId,
      memberId: this.memberId,
      groupInstanceId: this.m.groupInstanceId,
    };
  }

  /** True while the member has joined and no rebalance is pending: its assignment can be used. */
  isStable(): boolean {
    return this.generationId >= 0 && !this.needsJoin;
  }

  /** True when the next ensureActive() will join (a rebalance is pending for this member). */
  rejoinNeeded(): boolean {
    return this.needsJoin;
  }

  /** Makes the next ensureActive() join again (the coordinator then rebalances the whole group). */
  requestRejoin(): void {
    this.needsJoin = true;
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
  /** Before each join (the eager consumer protocol revokes everything here). */
  protected async beforeJoin(): Promise<void> {}
  /** The generation was lost without a chance to hand work over cleanly (fenced, timed out). */
  protected onGenerationLost(): void {}

  /** Joins (or rejoins) when needed; resolves once the member has a current assignment. */
  async ensureActive(): Promise<void> {
    while (this.needsJoin && !this.left) {
      if (this.joining === null) {
        this.joining = this.join().finally(() => {
          this.joining = null;
        });
      }
      await this.joining;
    }
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
        if (err instanceof KafkaProtocolError) {
          // Retriable answers too: NOT_COORDINATOR from a broker that no longer coordinates the group (it moved
          // while this member was joining) must send the next JoinGroup to the new coordinator, not back there.
          if (!this.handleGroupError(err.code) && !err.retriable) throw err;
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
        this.onGenerationLost();
        return code === ErrorCode.UNKNOWN_MEMBER_ID;
      case ErrorCode.ILLEGAL_GENERATION:
        this.generationId = -1;
        this.needsJoin = true;
        this.onGenerationLost();
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
    await this.beforeJoin();
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
      reason: null,
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
    // onAssigned may ask for another rejoin (a cooperative member that gave work up); it decides after this.
    this.needsJoin = false;
    this.startHeartbeats();
    await this.onAssigned(this.protocolName ?? '', sync.assignment);
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
      // max.poll.interval.ms passed without a poll: give the work to someone who is making progress.
      this.stopHeartbeats();
      this.sendLeave('consumer poll timeout has expired').catch(() => {});
      this.memberId = '';
      this.generationId = -1;
      this.needsJoin = true;
      this.onGenerationLost();
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
        },
        () => {
          this.coordinatorId = -1;
          this.coordinator().catch(() => {});
        },
      );
  }

  protected async sendLeave(reason: string): Promise<void> {
    if (this.memberId === '' || this.coordinatorId < 0) return;
    const res = await this.m.cluster.send<LeaveGroupResponse>(this.coordinatorId, ApiKey.LEAVE_GROUP, {
      groupId: this.m.groupId,
      memberId: this.memberId,
      members: [{ memberId: this.memberId, groupInstanceId: this.m.groupInstanceId, reason }],
    });
    if (res.errorCode !== 0 && res.errorCode !== ErrorCode.UNKNOWN_MEMBER_ID) {
      throw new KafkaProtocolError(res.errorCode, 'LeaveGroup');
    }
  }

  /** Leaves the group (a static member keeps its place until its session ends); onLeave runs first. */
  async leave(reason = 'the member is being closed'): Promise<void> {
    if (this.left) return;
    this.left = true;
    this.stopHeartbeats();
    await this.joining?.catch(() => {});
    await this.onLeave();
    if (this.m.groupInstanceId === null) await this.sendLeave(reason).catch(() => {});
    this.generationId = -1;
  }

  /** Before the LeaveGroup request: hand work over. */
  protected async onLeave(): Promise<void> {}
}
