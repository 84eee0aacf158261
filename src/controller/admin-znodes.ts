// The admin znodes of older tools (Kafka's ZooKeeper-mode KafkaController handles them the same way):
// /admin/reassign_partitions, written by tools that predate the AlterPartitionReassignments API (and by operators'
// ZooKeeper tooling), and /admin/preferred_replica_election. Each is turned into what the API requests do
// (reassignment-requests.ts, broker-requests.ts) and the node is updated or removed as Kafka does.
//
// Ownership: one AdminZnodes per Controller; every method runs inside the controller's event queue (the watchers
// only enqueue events). Which reassignments came through the znode is kept in the ControllerContext
// (`ctx.znodeReassignments`), rebuilt at failover from the node itself.

import { onElectLeaders } from './broker-requests.js';
import { type ControllerCore, type Fenced, partitionKey, sameList } from './controller-core.js';
import { isReassigning, targetReplicas } from './reassignment.js';
import { reassign } from './reassignment-requests.js';
import type { CoordinationStore, MultiResult, Op } from './store/store.js';
import {
  decodePreferredReplicaElection,
  decodeReassignPartitions,
  encodeReassignPartitions,
  type PartitionReassignment,
  PREFERRED_REPLICA_ELECTION_PATH,
  REASSIGN_PARTITIONS_PATH,
} from './zk-layout/index.js';

/** What the admin znode handling needs of its controller. */
export interface AdminZnodesHost {
  readonly core: ControllerCore;
  /** The controller's current session. */
  store(): CoordinationStore;
  /** A write guarded by the controller epoch; `fenced` when another controller has taken over. */
  fencedMulti(ops: readonly Op[]): Promise<MultiResult | Fenced>;
  /** A guarded write found a newer controller: resign. */
  onFenced(): void;
  /** Runs `fn` as an event of the controller's queue (coalesced with queued events of the same key). */
  enqueue(name: string, fn: () => Promise<void>, key?: string): void;
}

export class AdminZnodes {
  constructor(private readonly host: AdminZnodesHost) {}

  /** The watcher of /admin/reassign_partitions; also called when a reassignment it started finishes. */
  readonly watchReassign = (): void => {
    this.host.enqueue('zkPartitionReassignment', () => this.onReassignZnode(), 'zkPartitionReassignment');
  };

  /** The watcher of /admin/preferred_replica_election. */
  readonly watchPreferredElection = (): void => {
    this.host.enqueue('zkPreferredElection', () => this.onPreferredElectionZnode(), 'zkPreferredElection');
  };

  /**
   * /admin/reassign_partitions: each listed partition starts moving as if asked through the API; partitions
   * leave the node as they finish (or fail to start), and the node goes when it is empty, as in Kafka.
   */
  async onReassignZnode(): Promise<void> {
    const host = this.host;
    const core = host.core;
    const ctx = core.ctx;
    if (ctx === null) return;
    const exists = await host.store().exists(REASSIGN_PARTITIONS_PATH, this.watchReassign);
    if (!exists.ok || exists.value === null || core.ctx !== ctx) return;
    const node = await host.store().get(REASSIGN_PARTITIONS_PATH);
    if (!node.ok || core.ctx !== ctx) return;
    const decoded = decodeReassignPartitions(node.value.data);
    if (!decoded.ok) {
      core.logger.error(`ignoring ${REASSIGN_PARTITIONS_PATH}: ${decoded.error.message}`);
      await this.rewriteReassignZnode([], node.value.stat.version);
      return;
    }
    const remaining: PartitionReassignment[] = [];
    for (const r of decoded.value) {
      if (core.ctx !== ctx) return;
      const tp = { topic: r.topic, partition: r.partition };
      const k = partitionKey(tp);
      const entry = ctx.partition(tp);
      if (ctx.znodeReassignments.has(k)) {
        // Started earlier: it stays listed while it is still moving.
        if (entry !== undefined && isReassigning(entry.assignment)) remaining.push(r);
        else ctx.znodeReassignments.delete(k);
        continue;
      }
      if (
        entry !== undefined &&
        !isReassigning(entry.assignment) &&
        sameList(entry.assignment.replicas, r.replicas)
      ) {
        continue;
      }
      if (
        entry !== undefined &&
        isReassigning(entry.assignment) &&
        sameList(targetReplicas(entry.assignment), r.replicas)
      ) {
        // Already moving there (started before a controller failover): follow it without writing again.
        ctx.znodeReassignments.add(k);
        remaining.push(r);
        continue;
      }
      const problem = await reassign(core, tp, [...r.replicas]);
      if (problem !== null) {
        core.logger.warn(
          `reassignment of ${r.topic}-${r.partition} from ${REASSIGN_PARTITIONS_PATH} refused: ${problem.errorMessage}`,
        );
        continue;
      }
      const now = ctx.partition(tp);
      if (now !== undefined && isReassigning(now.assignment)) {
        ctx.znodeReassignments.add(k);
        remaining.push(r);
      }
    }
    if (core.ctx !== ctx || remaining.length === decoded.value.length) return;
    const fresh = await host.store().exists(REASSIGN_PARTITIONS_PATH);
    if (fresh.ok && fresh.value !== null) await this.rewriteReassignZnode(remaining, fresh.value.version);
  }

  private async rewriteReassignZnode(
    remaining: readonly PartitionReassignment[],
    version: number,
  ): Promise<void> {
    const op: Op =
      remaining.length === 0
        ? { op: 'delete', path: REASSIGN_PARTITIONS_PATH, version }
        : { op: 'set', path: REASSIGN_PARTITIONS_PATH, data: encodeReassignPartitions(remaining), version };
    const result = await this.host.fencedMulti([op]);
    if ('fenced' in result) this.host.onFenced();
    // BADVERSION: a tool rewrote the node meanwhile; its watch brings the controller back here.
  }

  /** /admin/preferred_replica_election: a preferred election of the listed partitions, then the node goes. */
  async onPreferredElectionZnode(): Promise<void> {
    const host = this.host;
    const core = host.core;
    const ctx = core.ctx;
    if (ctx === null) return;
    const exists = await host.store().exists(PREFERRED_REPLICA_ELECTION_PATH, this.watchPreferredElection);
    if (!exists.ok || exists.value === null || core.ctx !== ctx) return;
    const node = await host.store().get(PREFERRED_REPLICA_ELECTION_PATH);
    if (!node.ok || core.ctx !== ctx) return;
    const decoded = decodePreferredReplicaElection(node.value.data);
    if (decoded.ok) {
      const byTopic = new Map<string, number[]>();
      for (const p of decoded.value) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
      const answer = await onElectLeaders(core, {
        electionType: 0,
        topicPartitions: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
        timeoutMs: 0,
      });
      core.logger.info(
        `preferred replica election from ${PREFERRED_REPLICA_ELECTION_PATH}: error ${answer.errorCode}`,
      );
    } else {
      core.logger.error(`ignoring ${PREFERRED_REPLICA_ELECTION_PATH}: ${decoded.error.message}`);
    }
    if (core.ctx !== ctx) return;
    const removed = await host.fencedMulti([
      { op: 'delete', path: PREFERRED_REPLICA_ELECTION_PATH, version: node.value.stat.version },
    ]);
    if ('fenced' in removed) host.onFenced();
  }
}
