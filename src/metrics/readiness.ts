// The readiness rule of /readyz. A broker is ready to take traffic when:
// 1. its logs are loaded (recovery after an unclean shutdown is over),
// 2. it is registered in the coordination store (/brokers/ids/<id>: the controller counts it alive),
// 3. it serves requests (its handlers are installed),
// 4. it knows the active controller (the controller's UpdateMetadata reached it; on a single node, at once),
// 5. in a cluster: it is in the ISR of every partition it follows whose leader is known, as the controller's
//    metadata says. A broker back from a restart is not ready until it has caught up with every leader and been
//    added back to the ISR, so that a rolling restart that waits for /readyz never takes a second replica of a
//    partition away while the first is still behind (which would leave that partition under min.insync.replicas).
// Partitions without a leader are left out of 5: no follower can catch up with them, and waiting would keep the
// broker unready exactly when its replicas are most needed.

import type { MetadataCache } from '../broker/metadata/metadata-cache.js';
import type { ReplicaManager } from '../broker/replica/replica-manager.js';

export interface ReadinessProbe {
  readonly logsLoaded: boolean;
  readonly registered: boolean;
  readonly serving: boolean;
  /** A ZooKeeper cluster (rule 5 applies), not a single node with the embedded store. */
  readonly inCluster: boolean;
  readonly brokerId: number;
  readonly replicas: ReplicaManager | null;
  readonly metadata: MetadataCache | null;
}

export interface Readiness {
  readonly ready: boolean;
  /** What is missing, in the rule's order, in words. */
  readonly missing: string[];
  /** Followed partitions whose ISR does not hold this broker yet (rule 5), at most PARTITIONS_LISTED_MAX. */
  readonly partitionsNotInIsr: string[];
}

const PARTITIONS_LISTED_MAX = 20;

export function checkReadiness(probe: ReadinessProbe): Readiness {
  const missing: string[] = [];
  const partitionsNotInIsr: string[] = [];
  if (!probe.logsLoaded) missing.push('logs are not loaded yet');
  if (!probe.registered) missing.push('the broker is not registered yet');
  if (!probe.serving) missing.push('request handlers are not serving yet');
  const metadata = probe.metadata;
  if (metadata === null || metadata.controllerId < 0) missing.push('no controller known yet');
  if (probe.inCluster && probe.replicas !== null && metadata !== null) {
    let behind = 0;
    for (const p of probe.replicas.all()) {
      if (p.isLeader || p.leaderId < 0) continue;
      const info = metadata.partition(p.topic, p.partition);
      if (info === undefined || info.leader < 0 || info.isr.includes(probe.brokerId)) continue;
      behind++;
      if (partitionsNotInIsr.length < PARTITIONS_LISTED_MAX) partitionsNotInIsr.push(p.key);
    }
    if (behind > 0) missing.push(`not in the ISR of ${behind} followed partition(s) yet`);
  }
  return { ready: missing.length === 0, missing, partitionsNotInIsr };
}
