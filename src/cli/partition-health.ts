// Why a partition that `brook topics --describe` reports (under-replicated, under or at min.insync.replicas,
// unavailable) is in that state, and what the cluster is doing about it, from what a client can see: the
// partition's leader, replicas, ISR and offline replicas (Metadata), the live brokers, a reassignment in progress,
// and the controller's self-healing timeout (brook.self.healing.broker.failure.timeout.ms, read with
// DescribeConfigs). The controller's own log lines give the times (when a broker went, when its moves start).

/** The partition as Metadata gives it. */
export interface ReportedPartition {
  readonly leader: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly offlineReplicas: readonly number[];
}

export interface HealthContext {
  /** Brokers registered in the cluster. */
  readonly live: ReadonlySet<number>;
  readonly minIsr: number;
  /** A reassignment of the partition in progress (self-healing's moves are reassignments). */
  readonly reassignment?: {
    readonly addingReplicas: readonly number[];
    readonly removingReplicas: readonly number[];
  };
  /** The controller's self-healing timeout; -1 when off, null when the cluster does not say (not a Brook cluster). */
  readonly selfHealingTimeoutMs: number | null;
}

export interface PartitionHealth {
  readonly reason: string;
  readonly action: string;
}

const list = (ids: readonly number[]): string => ids.join(',');

/** Null when the partition is healthy: a live leader and every replica in the ISR, which is at least min ISR. */
export function partitionHealth(p: ReportedPartition, c: HealthContext): PartitionHealth | null {
  const gone = p.replicas.filter((r) => !c.live.has(r));
  const offlineDirs = p.offlineReplicas.filter((r) => c.live.has(r));
  const lagging = p.replicas.filter((r) => c.live.has(r) && !offlineDirs.includes(r) && !p.isr.includes(r));
  const reasons: string[] = [];
  if (p.leader < 0) reasons.push('no leader: no in-sync replica is alive');
  else if (!c.live.has(p.leader)) reasons.push(`leader ${p.leader} is not a live broker`);
  if (gone.length > 0) reasons.push(`broker ${list(gone)} gone`);
  if (offlineDirs.length > 0) reasons.push(`log directory offline on broker ${list(offlineDirs)}`);
  if (lagging.length > 0) reasons.push(`replica ${list(lagging)} out of the ISR (catching up)`);
  if (p.isr.length < c.minIsr) reasons.push(`ISR ${p.isr.length} < min.insync.replicas ${c.minIsr}`);
  if (reasons.length === 0) return null;
  return { reason: reasons.join('; '), action: action(gone, offlineDirs, lagging, c) };
}

function action(gone: number[], offlineDirs: number[], lagging: number[], c: HealthContext): string {
  const r = c.reassignment;
  if (r !== undefined && (r.addingReplicas.length > 0 || r.removingReplicas.length > 0))
    return `moving: adding ${list(r.addingReplicas) || 'none'}, removing ${list(r.removingReplicas) || 'none'}`;
  const actions: string[] = [];
  if (gone.length > 0) {
    if (c.selfHealingTimeoutMs === null) actions.push('none reported for the gone broker');
    else if (c.selfHealingTimeoutMs < 0)
      actions.push(
        'none: self-healing is off (brook.self.healing.broker.failure.timeout.ms=-1); reassign by hand',
      );
    else
      actions.push(
        `self-healing moves the replicas of broker ${list(gone)} once it has been gone ${c.selfHealingTimeoutMs} ms (the controller logs when); none when no live broker can take them`,
      );
  }
  if (offlineDirs.length > 0)
    actions.push('the replica stays offline until its directory is back or it is reassigned');
  if (lagging.length > 0) actions.push('waiting for the follower to catch up');
  return actions.length > 0 ? actions.join('; ') : 'none';
}

/** The fields added to a reported partition's line. */
export function healthFields(h: PartitionHealth | null): string {
  return h === null ? '' : `\tReason: ${h.reason}\tAction: ${h.action}`;
}
