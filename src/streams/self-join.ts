// topology.optimization's single.store.self.join (KIP-862), as Kafka's InternalStreamsBuilder
// .rewriteSingleStoreSelfJoin rewrites its graph, here on the built Topology: a stream-stream join whose two windowed
// nodes hang from one and the same node (a stream joined with itself, also after merge.repartition.topics gave both
// sides one repartition) keeps its this side's windowed node and store; the other windowed node, both join nodes, the
// other store and an outer join's shared store go, and the merge node becomes the one self-join processor (Kafka's
// KStreamKStreamSelfJoin) below the this windowed node, reading the this store. Kafka checks no join kind: a left or
// outer self-join is rewritten too.

import type { InternalBuilder, StreamJoinSite } from './internal-builder.js';
import type { ProcessorNode, TopologyNode } from './topology.js';

export function rewriteSelfJoins(b: InternalBuilder): void {
  const topology = b.topology;
  const selfJoins = b.streamJoins.filter((site) => isSelfJoin(topology.nodes, site));
  if (selfJoins.length === 0) return;
  const removed = new Set<string>();
  const replaced = new Map<string, ProcessorNode>();
  for (const site of selfJoins) {
    for (const name of [site.otherWindowed, site.thisJoin, site.otherJoin]) removed.add(name);
    replaced.set(site.merge, {
      kind: 'processor',
      name: site.merge,
      parents: [site.thisWindowed],
      supplier: site.selfJoin,
      stores: [site.thisStore],
    });
    topology.stores.delete(site.otherStore);
    if (site.sharedStore !== null) topology.stores.delete(site.sharedStore);
    // The sub-topology's inputs stay co-partitioned, now through the processor that is left.
    if (topology.copartitioned.delete(site.thisJoin)) topology.markCopartitioned(site.merge);
  }
  const nodes: TopologyNode[] = [];
  for (const node of topology.nodes.values()) {
    if (removed.has(node.name)) continue;
    nodes.push(replaced.get(node.name) ?? node);
  }
  topology.replaceNodes(nodes);
}

/** Kafka's condition: the join node has a single parent, so both windowed nodes hang from it alone. */
function isSelfJoin(nodes: ReadonlyMap<string, TopologyNode>, site: StreamJoinSite): boolean {
  const self = nodes.get(site.thisWindowed);
  const other = nodes.get(site.otherWindowed);
  if (self?.kind !== 'processor' || other?.kind !== 'processor') return false;
  return self.parents.length === 1 && other.parents.length === 1 && self.parents[0] === other.parents[0];
}
