// Topology.describe(): the same text Kafka's TopologyDescription prints, so that a Kafka Streams user can diff
// the two. Within a sub-topology, nodes are ordered by the size of the graph below them (larger first), then by
// name, as Kafka's NodeComparator orders them; successors and predecessors the same way.

import type { Topology, TopologyNode } from './topology.js';

interface DescribedNode {
  node: TopologyNode;
  size: number;
  successors: DescribedNode[];
  predecessors: DescribedNode[];
}

export interface TopologyDescription {
  subtopologies: { id: number; nodes: { name: string; kind: string }[] }[];
  toString(): string;
}

function order(a: DescribedNode, b: DescribedNode): number {
  if (a.size !== b.size) return b.size - a.size;
  return a.node.name < b.node.name ? -1 : a.node.name > b.node.name ? 1 : 0;
}

function names(list: DescribedNode[]): string {
  return list.length === 0
    ? 'none'
    : [...list]
        .sort(order)
        .map((d) => d.node.name)
        .join(', ');
}

/**
 * Predecessors in the order the node named its parents: what Kafka prints for the merge nodes of joins
 * ("<-- KSTREAM-JOINTHIS-…, KSTREAM-JOINOTHER-…"), whose parents have equal sizes.
 */
function parentNames(list: DescribedNode[]): string {
  return list.length === 0 ? 'none' : list.map((d) => d.node.name).join(', ');
}

function nodeText(d: DescribedNode): string {
  const n = d.node;
  switch (n.kind) {
    case 'source':
      return `Source: ${n.name} (topics: [${n.topics.join(', ')}])\n      --> ${names(d.successors)}`;
    case 'processor':
      return `Processor: ${n.name} (stores: [${n.stores.join(', ')}])\n      --> ${names(d.successors)}\n      <-- ${parentNames(d.predecessors)}`;
    case 'sink': {
      const target =
        typeof n.topic === 'string' ? `topic: ${n.topic}` : `extractor class: ${n.topic.name || 'function'}`;
      return `Sink: ${n.name} (${target})\n      <-- ${parentNames(d.predecessors)}`;
    }
  }
}

function grow(d: DescribedNode, delta: number): void {
  d.size += delta;
  for (const p of d.predecessors) grow(p, delta);
}

export function describeTopology(topology: Topology): TopologyDescription {
  const subtopologies = topology.subtopologies().map((st) => {
    const described = new Map<string, DescribedNode>();
    for (const name of st.nodes)
      described.set(name, { node: topology.nodes.get(name)!, size: 1, successors: [], predecessors: [] });
    for (const d of described.values()) {
      if (d.node.kind === 'source') continue;
      for (const p of d.node.parents) {
        const parent = described.get(p)!;
        d.predecessors.push(parent);
        parent.successors.push(d);
        grow(parent, d.size);
      }
    }
    return { id: st.id, global: st.global, nodes: [...described.values()].sort(order) };
  });
  return {
    subtopologies: subtopologies.map((s) => ({
      id: s.id,
      nodes: s.nodes.map((d) => ({ name: d.node.name, kind: d.node.kind })),
    })),
    toString() {
      let out = 'Topologies:\n ';
      for (const s of subtopologies) {
        if (s.global) {
          // Kafka prints a global store's source and processor without the blank line after them.
          out += `  Sub-topology: ${s.id} for global store (will not generate tasks)\n`;
          for (const d of s.nodes) out += `    ${nodeText(d)}\n`;
          continue;
        }
        out += `  Sub-topology: ${s.id}\n`;
        for (const d of s.nodes) out += `    ${nodeText(d)}\n`;
        out += '\n';
      }
      return out;
    },
  };
}
