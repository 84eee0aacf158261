// The controller of the data-plane simulation, following Kafka's ZooKeeper-mode controller rules for partition
// state (the real controller has its own simulation, test/controller/simulation.ts; here only its decisions
// matter):
// - elections (a leader's death, a controlled leader move) choose only a live member of the ISR, in replica
//   order; with none, the partition has no leader and keeps its last ISR until a member comes back;
// - every leader or controller-made ISR change raises the leader epoch and the partition epoch;
// - a dead follower leaves the ISR (never the last member), with a new leader epoch;
// - AlterPartition from a leader is accepted only at the current leader epoch and partition epoch, from the
//   current broker epoch, with the leader in the new ISR and only live replicas added (KIP-841); an accepted one
//   raises the partition epoch; one asking for the ISR as it is already is answered with the current state
//   (a retry whose answer was lost), as Kafka's and Brook's controllers do (src/controller/broker-requests.ts);
// - every change is sent to the partition's live replicas as LeaderAndIsr, in order per broker.
// Each decision is checked against the rules it must keep (leader in the ISR when elected, epochs rising).

import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
} from '../../src/protocol/messages/56-alter-partition.js';

/** The simulated topic's id: replication by topic id (Fetch v15, AlterPartition v3) needs one. */
export const TOPIC_ID = 'YnJvb2stc2ltLXRvcGljIQ';

export interface PartitionState {
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  isr: number[];
  readonly replicas: readonly number[];
}

export interface ControllerOutput {
  /** Sends LeaderAndIsr with these partitions' states to a broker (in order per broker). */
  leaderAndIsr(brokerId: number, states: ReadonlyMap<number, PartitionState>): void;
  trace(line: string): void;
  violation(line: string): void;
}

export class SimController {
  readonly states = new Map<number, PartitionState>();
  /** Brokers the controller counts as alive (registered, session not expired), with their broker epochs. */
  readonly live = new Map<number, number>();
  private nextBrokerEpoch = 100;

  constructor(
    readonly topic: string,
    partitions: number,
    replicas: readonly number[],
    private readonly out: ControllerOutput,
  ) {
    for (let p = 0; p < partitions; p++) {
      // Replica order rotates so that leadership starts spread over the brokers.
      const order = replicas.map((_, i) => replicas[(i + p) % replicas.length]!);
      this.states.set(p, {
        leader: -1,
        leaderEpoch: -1,
        partitionEpoch: -1,
        isr: [...order],
        replicas: order,
      });
    }
  }

  /** A broker registered (started, its logs recovered): it gets the state of its partitions; offline ones elect. */
  brokerStarted(brokerId: number): number {
    // Registered again before its old session was seen to expire (a bounce): first dead, then a newcomer, as
    // Brook's controller and Kafka's (KIP-380) handle it.
    if (this.live.has(brokerId)) this.brokerDied(brokerId, this.live.get(brokerId)!);
    const epoch = this.nextBrokerEpoch++;
    this.live.set(brokerId, epoch);
    this.out.trace(`controller: broker ${brokerId} registered (broker epoch ${epoch})`);
    for (const [p, s] of this.states) {
      if (s.leaderEpoch < 0) continue;
      if (s.leader < 0 && s.isr.includes(brokerId)) this.elect(p, 'offline partition');
      else if (s.replicas.includes(brokerId)) this.send(brokerId, [p]);
    }
    return epoch;
  }

  /** The topic is created: the first replica leads each partition, all replicas in the ISR, at epoch 0. */
  createPartitions(): void {
    for (const [p, s] of this.states) this.change(p, s.replicas[0]!, [...s.replicas], 'created');
  }

  /** A broker's session expired: it leaves every ISR it can leave, and partitions it led elect another leader. */
  brokerDied(brokerId: number, epoch: number): void {
    // The expiry of an older session (the broker bounced since) says nothing about the current one.
    if (this.live.get(brokerId) !== epoch) return;
    this.live.delete(brokerId);
    this.out.trace(`controller: broker ${brokerId} is dead`);
    for (const [p, s] of this.states) {
      if (s.leader === brokerId) {
        this.elect(p, `leader ${brokerId} died`);
      } else if (s.isr.includes(brokerId) && s.isr.length > 1) {
        this.change(
          p,
          s.leader,
          s.isr.filter((id) => id !== brokerId),
          `follower ${brokerId} died`,
        );
      }
    }
  }

  /** A controlled leader move (controlled shutdown, preferred election): another live ISR member leads. */
  moveLeader(p: number, pick: (candidates: number[]) => number): void {
    const s = this.states.get(p)!;
    const candidates = s.replicas.filter((id) => id !== s.leader && s.isr.includes(id) && this.live.has(id));
    if (s.leader < 0 || candidates.length === 0) return;
    const leader = pick(candidates);
    this.change(p, leader, s.isr, `leader moved from ${s.leader}`);
  }

  alterPartition(request: AlterPartitionRequest): AlterPartitionResponse {
    const answer = (errorCode: number, partitionIndex = 0, s?: PartitionState): AlterPartitionResponse => ({
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      topics: [
        {
          topicName: this.topic,
          topicId: TOPIC_ID,
          partitions: [
            {
              partitionIndex,
              errorCode,
              leaderId: s?.leader ?? -1,
              leaderEpoch: s?.leaderEpoch ?? -1,
              isr: s === undefined ? [] : [...s.isr],
              leaderRecoveryState: 0,
              partitionEpoch: s?.partitionEpoch ?? -1,
            },
          ],
        },
      ],
    });
    if (this.live.get(request.brokerId) !== Number(request.brokerEpoch)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.STALE_BROKER_EPOCH, topics: [] };
    }
    const t = request.topics[0]!;
    const r = t.partitions[0]!;
    const s = this.states.get(r.partitionIndex);
    if (s === undefined) return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, r.partitionIndex);
    if (r.partitionEpoch > s.partitionEpoch || r.leaderEpoch > s.leaderEpoch)
      return answer(ErrorCode.NOT_CONTROLLER, r.partitionIndex);
    if (r.leaderEpoch < s.leaderEpoch) return answer(ErrorCode.FENCED_LEADER_EPOCH, r.partitionIndex);
    if (s.leader !== request.brokerId) return answer(ErrorCode.NOT_LEADER_OR_FOLLOWER, r.partitionIndex);
    // Version 3 carries the members with their broker epochs (KIP-903); earlier ones the plain list.
    const isr = r.newIsrWithEpochs.length > 0 ? r.newIsrWithEpochs.map((b) => b.brokerId) : r.newIsr;
    // Already in the requested state (a retry whose first answer was lost): answered with it, as Kafka does.
    if (isr.length === s.isr.length && isr.every((id, i) => s.isr[i] === id))
      return answer(ErrorCode.NONE, r.partitionIndex, s);
    if (r.partitionEpoch < s.partitionEpoch)
      return answer(ErrorCode.INVALID_UPDATE_VERSION, r.partitionIndex);
    if (!isr.includes(s.leader) || isr.some((id) => !s.replicas.includes(id))) {
      return answer(ErrorCode.INVALID_REQUEST, r.partitionIndex);
    }
    if (isr.some((id) => !s.isr.includes(id) && !this.live.has(id))) {
      return answer(ErrorCode.INELIGIBLE_REPLICA, r.partitionIndex);
    }
    // A member named with an epoch that is not its current registration's: the leader decided on what an earlier
    // incarnation fetched (KIP-903).
    const stale = r.newIsrWithEpochs.some(
      (b) =>
        b.brokerEpoch !== -1n &&
        this.live.has(b.brokerId) &&
        BigInt(this.live.get(b.brokerId)!) !== b.brokerEpoch,
    );
    if (stale) return answer(ErrorCode.INELIGIBLE_REPLICA, r.partitionIndex);
    s.isr = [...isr];
    s.partitionEpoch++;
    this.out.trace(
      `controller: AlterPartition from ${request.brokerId} accepted: p${r.partitionIndex} isr ${JSON.stringify(s.isr)} partition epoch ${s.partitionEpoch}`,
    );
    return answer(ErrorCode.NONE, r.partitionIndex, s);
  }

  /** Kafka's OfflinePartitionLeaderElectionStrategy without unclean election: the first live ISR member. */
  private elect(p: number, why: string): void {
    const s = this.states.get(p)!;
    const leader = s.replicas.find((id) => s.isr.includes(id) && this.live.has(id)) ?? -1;
    if (leader < 0) {
      if (s.leader >= 0) {
        s.leader = -1;
        s.leaderEpoch++;
        s.partitionEpoch++;
        this.out.trace(`controller: p${p} offline (${why}), isr stays ${JSON.stringify(s.isr)}`);
        for (const id of s.replicas) if (this.live.has(id)) this.send(id, [p]);
      }
      return;
    }
    this.change(
      p,
      leader,
      s.isr.filter((id) => this.live.has(id)),
      why,
    );
  }

  private change(p: number, leader: number, isr: number[], why: string): void {
    const s = this.states.get(p)!;
    if (leader >= 0 && !s.isr.includes(leader)) {
      this.out.violation(`p${p}: leader ${leader} elected from outside the ISR ${JSON.stringify(s.isr)}`);
    }
    if (leader >= 0 && !isr.includes(leader))
      this.out.violation(`p${p}: leader ${leader} not in its new ISR`);
    if (isr.length === 0) this.out.violation(`p${p}: empty ISR`);
    s.leader = leader;
    s.leaderEpoch++;
    s.partitionEpoch++;
    s.isr = [...isr];
    this.out.trace(
      `controller: p${p} leader ${leader} epoch ${s.leaderEpoch} isr ${JSON.stringify(s.isr)} (${why})`,
    );
    for (const id of s.replicas) if (this.live.has(id)) this.send(id, [p]);
  }

  private send(brokerId: number, partitions: number[]): void {
    const states = new Map<number, PartitionState>();
    for (const p of partitions) {
      const s = this.states.get(p)!;
      states.set(p, { ...s, isr: [...s.isr] });
    }
    this.out.leaderAndIsr(brokerId, states);
  }
}
