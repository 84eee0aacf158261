// A Connect worker's membership of its group (Kafka's WorkerGroupMember and WorkerCoordinator): the classic group
// protocol of Brook's client (GroupMembership) with protocol type "connect", the protocols connect.protocol
// offers ("sessioned", "compatible", "default") and Kafka Connect's metadata and assignment layouts
// (connect-protocol.ts). What the worker runs, and what the leader assigns, is the herder's business: this class
// only turns its hooks into the protocol's bytes.

import { type Cluster, GroupMembership, type JoinedMember } from '../../../client/index.js';
import {
  CONNECT_PROTOCOL_TYPE,
  type ConnectAssignment,
  type ConnectProtocolMode,
  decodeAssignment,
  decodeWorkerState,
  encodeAssignment,
  encodeWorkerState,
  offeredProtocols,
  PROTOCOL_VERSIONS,
  type WorkerState,
  type WorkUnits,
} from './connect-protocol.js';

export interface WorkerGroupHooks {
  /** This worker's URL, config offset and what it runs, for JoinGroup. */
  state(): { url: string; configOffset: number; owned: WorkUnits };
  /** Before joining; `eager` when everything must be given up first (eager protocol, or a lost generation). */
  beforeJoin(eager: boolean): Promise<void>;
  /** The leader's assignment, per member id. */
  assign(
    protocolName: string,
    leaderId: string,
    members: { memberId: string; state: WorkerState }[],
  ): Promise<Map<string, ConnectAssignment>>;
  onAssigned(protocolName: string, assignment: ConnectAssignment): Promise<void>;
}

export interface WorkerGroupOptions {
  cluster: Cluster;
  groupId: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  heartbeatIntervalMs: number;
  mode: ConnectProtocolMode;
  hooks: WorkerGroupHooks;
}

export class WorkerGroupMember extends GroupMembership {
  private lastProtocol: string | null = null;
  private generationLost = false;

  constructor(private readonly w: WorkerGroupOptions) {
    super({
      cluster: w.cluster,
      groupId: w.groupId,
      groupInstanceId: null,
      sessionTimeoutMs: w.sessionTimeoutMs,
      rebalanceTimeoutMs: w.rebalanceTimeoutMs,
      heartbeatIntervalMs: w.heartbeatIntervalMs,
      protocolType: CONNECT_PROTOCOL_TYPE,
      leaveWhenNotPolled: false,
    });
  }

  /** The protocol the group chose in the current generation ("sessioned", "compatible" or "default"). */
  currentProtocol(): string | null {
    return this.lastProtocol;
  }

  protected override async beforeJoin(): Promise<boolean> {
    const eager = this.w.mode === 'eager' || this.lastProtocol === 'default' || this.generationLost;
    this.generationLost = false;
    await this.w.hooks.beforeJoin(eager);
    return true;
  }

  protected override onGenerationLost(): void {
    this.generationLost = true;
  }

  protected async joinProtocols(): Promise<{ name: string; metadata: Buffer }[]> {
    const s = this.w.hooks.state();
    return offeredProtocols(this.w.mode).map((name) => ({
      name,
      metadata: encodeWorkerState(PROTOCOL_VERSIONS[name]!, {
        url: s.url,
        configOffset: s.configOffset,
        assignment: s.owned,
      }),
    }));
  }

  protected async assign(
    protocolName: string,
    leaderId: string,
    members: JoinedMember[],
  ): Promise<Map<string, Buffer>> {
    const states = members.map((m) => ({ memberId: m.memberId, state: decodeWorkerState(m.metadata) }));
    const plan = await this.w.hooks.assign(protocolName, leaderId, states);
    return new Map([...plan].map(([id, a]) => [id, encodeAssignment(a)]));
  }

  protected async onAssigned(protocolName: string, assignment: Buffer): Promise<void> {
    this.lastProtocol = protocolName;
    await this.w.hooks.onAssigned(protocolName, decodeAssignment(assignment));
  }

  /** A rejoin the herder asks for, with the reason Kafka's WorkerGroupMember gives. */
  override requestRejoin(reason = 'connect worker requested rejoin'): void {
    super.requestRejoin(reason);
  }

  override async leave(): Promise<void> {
    await super.leave('the worker is being stopped');
  }
}
