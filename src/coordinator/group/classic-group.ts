// One classic consumer group (JoinGroup/SyncGroup protocol) and its committed offsets, as the group coordinator
// holds them in memory. The coordinator owns every ClassicGroup and is the only code that changes one; the
// group itself only answers questions about its state (who has joined, which protocol wins) and keeps its
// indexes consistent.
//
// States and their transitions (Kafka's GroupMetadata):
//   Empty               -> PreparingRebalance (a member joins), Dead (deleted or expired)
//   PreparingRebalance  -> CompletingRebalance (every member rejoined, or the rebalance timeout), Empty, Dead
//   CompletingRebalance -> Stable (the leader's assignment is stored), PreparingRebalance, Dead
//   Stable              -> PreparingRebalance (join, leave, expiry, changed subscription), Dead
//   Dead                   terminal; the group object is dropped

import { assert } from '../../common/assert.js';

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export const GROUP_STATES: readonly GroupState[] = [
  'Empty',
  'PreparingRebalance',
  'CompletingRebalance',
  'Stable',
  'Dead',
];

const VALID_PREVIOUS: Readonly<Record<GroupState, readonly GroupState[]>> = {
  Empty: ['PreparingRebalance'],
  PreparingRebalance: ['Stable', 'CompletingRebalance', 'Empty'],
  CompletingRebalance: ['PreparingRebalance'],
  Stable: ['CompletingRebalance'],
  Dead: ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'],
};

export interface JoinResult {
  readonly errorCode: number;
  readonly generationId: number;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly leader: string;
  readonly memberId: string;
  readonly skipAssignment: boolean;
  readonly members: readonly {
    readonly memberId: string;
    readonly groupInstanceId: string | null;
    readonly metadata: Buffer;
  }[];
}

export interface SyncResult {
  readonly errorCode: number;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignment: Buffer;
}

export interface Protocol {
  readonly name: string;
  readonly metadata: Buffer;
}

export interface CommittedOffset {
  readonly offset: number;
  readonly leaderEpoch: number;
  readonly metadata: string;
  readonly commitTimestampMs: number;
  /** An explicit expiry from OffsetCommit v1-v4 retention, or -1 for the broker's retention rule. */
  readonly expireTimestampMs: number;
  /**
   * The offset of its record in __consumer_offsets (-1 unknown): a transaction's offset that commits after a plain
   * commit of the same partition written later in the log does not replace it.
   */
  readonly recordOffset: number;
}

const EMPTY = Buffer.alloc(0);

export class Member {
  assignment: Buffer = EMPTY;
  /** The parked JoinGroup of this member, answered when the join phase completes. */
  awaitingJoin: ((result: JoinResult) => void) | null = null;
  /** The parked SyncGroup of this member, answered when the leader's assignment is stored. */
  awaitingSync: ((result: SyncResult) => void) | null = null;
  /** Monotonic time after which the member is considered dead unless it heartbeats, joins or syncs. */
  sessionDeadlineMs = 0;

  constructor(
    public memberId: string,
    readonly groupInstanceId: string | null,
    public clientId: string,
    public clientHost: string,
    public rebalanceTimeoutMs: number,
    public sessionTimeoutMs: number,
    public protocolType: string,
    public protocols: readonly Protocol[],
  ) {}

  metadataFor(protocolName: string): Buffer {
    const p = this.protocols.find((x) => x.name === protocolName);
    assert(p !== undefined, `member ${this.memberId} does not support protocol ${protocolName}`);
    return p.metadata;
  }

  sameProtocols(protocols: readonly Protocol[]): boolean {
    return (
      protocols.length === this.protocols.length &&
      protocols.every(
        (p, i) => p.name === this.protocols[i]!.name && p.metadata.equals(this.protocols[i]!.metadata),
      )
    );
  }

  get isStatic(): boolean {
    return this.groupInstanceId !== null;
  }
}

export class ClassicGroup {
  state: GroupState = 'Empty';
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  /** Wall-clock time of the last state change, stored as currentStateTimestamp (offset expiry counts from it). */
  currentStateTimestampMs: number;
  readonly members = new Map<string, Member>();
  /** group.instance.id -> the member id currently holding it. */
  readonly staticMembers = new Map<string, string>();
  /** Member ids issued with MEMBER_ID_REQUIRED that have not joined with them yet, and when they lapse. */
  readonly pendingMembers = new Map<string, number>();
  /** Members that got this generation's JoinGroup answer but have not sent SyncGroup yet. */
  readonly pendingSync = new Set<string>();
  pendingSyncDeadlineMs = -1;
  /** When the join phase ends even if not every member has rejoined. */
  rebalanceDeadlineMs = -1;
  /** group.initial.rebalance.delay.ms in force: the join phase cannot end before this time. */
  initialDelayDeadlineMs = -1;
  initialDelayRemainingMs = 0;
  newMemberAdded = false;
  readonly offsets = new Map<string, CommittedOffset>();
  /** Commits appended but not yet durable, per topic-partition key (require_stable answers from this). */
  readonly pendingCommits = new Map<string, number>();

  constructor(
    readonly groupId: string,
    readonly partition: number,
    nowMs: number,
  ) {
    this.currentStateTimestampMs = nowMs;
  }

  is(state: GroupState): boolean {
    return this.state === state;
  }

  transitionTo(state: GroupState, nowMs: number): void {
    assert(
      VALID_PREVIOUS[state].includes(this.state),
      `group ${this.groupId}: ${this.state} -> ${state} is not a valid transition`,
    );
    this.state = state;
    this.currentStateTimestampMs = nowMs;
  }

  add(member: Member): void {
    if (this.members.size === 0) this.protocolType = member.protocolType;
    this.members.set(member.memberId, member);
    if (member.groupInstanceId !== null) this.staticMembers.set(member.groupInstanceId, member.memberId);
    if (this.leaderId === null) this.leaderId = member.memberId;
    this.pendingMembers.delete(member.memberId);
  }

  remove(memberId: string): Member | undefined {
    const member = this.members.get(memberId);
    if (member === undefined) return undefined;
    this.members.delete(memberId);
    if (member.groupInstanceId !== null && this.staticMembers.get(member.groupInstanceId) === memberId) {
      this.staticMembers.delete(member.groupInstanceId);
    }
    this.pendingSync.delete(memberId);
    if (this.leaderId === memberId) {
      // The next leader is a member that has rejoined, if any, so that it can compute the assignment.
      const next =
        [...this.members.values()].find((m) => m.awaitingJoin !== null) ?? this.members.values().next().value;
      this.leaderId = next?.memberId ?? null;
    }
    return member;
  }

  /** Static member `instanceId` continues under a new member id; the old id is fenced from now on. */
  replaceStaticMember(instanceId: string, oldMemberId: string, newMemberId: string): Member {
    const member = this.members.get(oldMemberId);
    assert(member !== undefined, `static member ${instanceId} has no member ${oldMemberId}`);
    this.members.delete(oldMemberId);
    member.memberId = newMemberId;
    this.members.set(newMemberId, member);
    this.staticMembers.set(instanceId, newMemberId);
    if (this.leaderId === oldMemberId) this.leaderId = newMemberId;
    if (this.pendingSync.delete(oldMemberId)) this.pendingSync.add(newMemberId);
    return member;
  }

  get awaitingJoinCount(): number {
    let n = 0;
    for (const m of this.members.values()) if (m.awaitingJoin !== null) n++;
    return n;
  }

  hasAllMembersJoined(): boolean {
    return this.awaitingJoinCount === this.members.size && this.pendingMembers.size === 0;
  }

  /** The largest rebalance timeout of the members: how long the join phase may last. */
  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  /** Protocols every member supports, in the order of the first member's preference. */
  candidateProtocols(): string[] {
    const all = [...this.members.values()];
    if (all.length === 0) return [];
    return all[0]!.protocols
      .map((p) => p.name)
      .filter((name) => all.every((m) => m.protocols.some((p) => p.name === name)));
  }

  /** Whether a joining member's protocols fit the group's (same type, at least one protocol in common). */
  supportsProtocols(protocolType: string, protocols: readonly Protocol[]): boolean {
    if (this.members.size === 0) return protocolType !== '' && protocols.length > 0;
    if (protocolType !== this.protocolType) return false;
    const candidates = this.candidateProtocols();
    return protocols.some((p) => candidates.includes(p.name));
  }

  /** Each member votes for its most preferred protocol among those all support; the most votes wins. */
  selectProtocol(): string {
    const candidates = this.candidateProtocols();
    assert(candidates.length > 0, `group ${this.groupId} has no protocol every member supports`);
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const choice = m.protocols.find((p) => candidates.includes(p.name))!.name;
      votes.set(choice, (votes.get(choice) ?? 0) + 1);
    }
    let best = candidates[0]!;
    for (const c of candidates) if ((votes.get(c) ?? 0) > (votes.get(best) ?? 0)) best = c;
    return best;
  }

  /** The members list the leader receives in its JoinGroup answer. */
  currentMemberMetadata(): JoinResult['members'] {
    assert(this.protocolName !== null, 'no protocol selected');
    return [...this.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      metadata: m.metadataFor(this.protocolName!),
    }));
  }
}

export function offsetKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export function splitOffsetKey(key: string): { topic: string; partition: number } {
  const at = key.lastIndexOf('\u0000');
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}
