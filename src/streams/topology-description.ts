// Topology.describe(): the same text Kafka's TopologyDescription prints, so that a Kafka Streams user can diff
// the two. Within a sub-topology, nodes are ordered by the size of the graph below them (larger first), then by
// name, as Kafka's NodeComparator orders them. A node's successors and predecessors are Kafka's TreeSets under that
// comparator, filled as Kafka's describeSubtopology fills them: edges added in the iteration order of Java hash
// collections of the node names (deterministic: String.hashCode and HashMap's buckets), each inserted with the
// subgraph sizes of that moment, which later edges still change; so the printed order is Kafka's, not a sort.

import type { Topology, TopologyNode } from './topology.js';

interface DescribedNode {
  node: TopologyNode;
  size: number;
  successors: JavaTreeSet<DescribedNode>;
  predecessors: JavaTreeSet<DescribedNode>;
}

/** Java's String.hashCode: UTF-16 code units, 32-bit arithmetic. */
function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The iteration order of a java.util.HashSet (or HashMap) of strings added in this order: default capacity 16
 * doubled while more than 3/4 full, by bucket (the spread hash masked), then in insertion order within a bucket
 * (a resize keeps that order; a bucket of 8 or more would be a tree, which Kafka's topologies do not reach).
 */
function javaHashOrder(keys: string[]): string[] {
  let capacity = 16;
  while (keys.length > capacity * 0.75) capacity *= 2;
  const bucket = (k: string) => {
    const h = javaHash(k);
    return (h ^ (h >>> 16)) & (capacity - 1);
  };
  return keys
    .map((k, i) => ({ k, i, b: bucket(k) }))
    .sort((x, y) => x.b - y.b || x.i - y.i)
    .map((e) => e.k);
}

interface TreeEntry<T> {
  value: T;
  left: TreeEntry<T> | null;
  right: TreeEntry<T> | null;
  parent: TreeEntry<T> | null;
  red: boolean;
}

/**
 * java.util.TreeSet's red-black tree (TreeMap.put and fixAfterInsertion), so that its in-order walk is Kafka's
 * even when the comparator changes its mind about elements already inserted (node sizes grow while edges are
 * added): each insertion compares only along its path, as Java's does.
 */
class JavaTreeSet<T> {
  private root: TreeEntry<T> | null = null;

  constructor(private readonly compare: (a: T, b: T) => number) {}

  add(value: T): void {
    let t = this.root;
    if (t === null) {
      this.root = { value, left: null, right: null, parent: null, red: false };
      return;
    }
    let parent: TreeEntry<T>;
    let c: number;
    do {
      parent = t;
      c = this.compare(value, t.value);
      if (c < 0) t = t.left;
      else if (c > 0) t = t.right;
      else return;
    } while (t !== null);
    const e: TreeEntry<T> = { value, left: null, right: null, parent, red: false };
    if (c < 0) parent.left = e;
    else parent.right = e;
    this.fixAfterInsertion(e);
  }

  values(): T[] {
    const out: T[] = [];
    const walk = (e: TreeEntry<T> | null) => {
      if (e === null) return;
      walk(e.left);
      out.push(e.value);
      walk(e.right);
    };
    walk(this.root);
    return out;
  }

  private fixAfterInsertion(entry: TreeEntry<T>): void {
    const parentOf = (e: TreeEntry<T> | null) => e?.parent ?? null;
    const isRed = (e: TreeEntry<T> | null) => e?.red ?? false;
    const setRed = (e: TreeEntry<T> | null, red: boolean) => {
      if (e !== null) e.red = red;
    };
    let x: TreeEntry<T> | null = entry;
    x.red = true;
    while (x !== null && x !== this.root && isRed(x.parent)) {
      const grand = parentOf(parentOf(x));
      if (parentOf(x) === (grand?.left ?? null)) {
        const y = grand?.right ?? null;
        if (isRed(y)) {
          setRed(parentOf(x), false);
          setRed(y, false);
          setRed(grand, true);
          x = grand;
        } else {
          if (x === parentOf(x)?.right) {
            x = parentOf(x)!;
            this.rotateLeft(x);
          }
          setRed(parentOf(x), false);
          setRed(parentOf(parentOf(x)), true);
          this.rotateRight(parentOf(parentOf(x)));
        }
      } else {
        const y = grand?.left ?? null;
        if (isRed(y)) {
          setRed(parentOf(x), false);
          setRed(y, false);
          setRed(grand, true);
          x = grand;
        } else {
          if (x === parentOf(x)?.left) {
            x = parentOf(x)!;
            this.rotateRight(x);
          }
          setRed(parentOf(x), false);
          setRed(parentOf(parentOf(x)), true);
          this.rotateLeft(parentOf(parentOf(x)));
        }
      }
    }
    this.root!.red = false;
  }

  private rotateLeft(p: TreeEntry<T> | null): void {
    if (p === null) return;
    const r = p.right!;
    p.right = r.left;
    if (r.left !== null) r.left.parent = p;
    r.parent = p.parent;
    if (p.parent === null) this.root = r;
    else if (p.parent.left === p) p.parent.left = r;
    else p.parent.right = r;
    r.left = p;
    p.parent = r;
  }

  private rotateRight(p: TreeEntry<T> | null): void {
    if (p === null) return;
    const l = p.left!;
    p.left = l.right;
    if (l.right !== null) l.right.parent = p;
    l.parent = p.parent;
    if (p.parent === null) this.root = l;
    else if (p.parent.right === p) p.parent.right = l;
    else p.parent.left = l;
    l.right = p;
    p.parent = l;
  }
}

export interface TopologyDescription {
  subtopologies: { id: number; nodes: { name: string; kind: string }[] }[];
  toString(): string;
}

function order(a: DescribedNode, b: DescribedNode): number {
  if (a.size !== b.size) return b.size - a.size;
  return a.node.name < b.node.name ? -1 : a.node.name > b.node.name ? 1 : 0;
}

/** Kafka's NodeComparator, read at the time of each comparison: the same node is equal to itself. */
function liveOrder(a: DescribedNode, b: DescribedNode): number {
  return a === b ? 0 : order(a, b);
}

function names(set: JavaTreeSet<DescribedNode>): string {
  const list = set.values();
  return list.length === 0 ? 'none' : list.map((d) => d.node.name).join(', ');
}

function nodeText(d: DescribedNode): string {
  const n = d.node;
  switch (n.kind) {
    case 'source':
      return `Source: ${n.name} (topics: [${n.topics.join(', ')}])\n      --> ${names(d.successors)}`;
    case 'processor':
      return `Processor: ${n.name} (stores: [${n.stores.join(', ')}])\n      --> ${names(d.successors)}\n      <-- ${names(d.predecessors)}`;
    case 'sink': {
      const target =
        typeof n.topic === 'string' ? `topic: ${n.topic}` : `extractor class: ${n.topic.name || 'function'}`;
      return `Sink: ${n.name} (${target})\n      <-- ${names(d.predecessors)}`;
    }
  }
}

function grow(d: DescribedNode, delta: number): void {
  d.size += delta;
  for (const p of d.predecessors.values()) grow(p, delta);
}

export function describeTopology(topology: Topology): TopologyDescription {
  const subtopologies = topology.subtopologies().map((st) => {
    // Kafka's describeSubtopology: the node group (a HashSet filled in the order nodes were added) goes into a
    // HashMap by name, whose iteration order is the order the edges are added in, each parent's size growing as
    // it goes; successors and predecessors are TreeSets ordered by those sizes when each element went in.
    const described = new Map<string, DescribedNode>();
    for (const name of javaHashOrder(javaHashOrder(st.nodes)))
      described.set(name, {
        node: topology.nodes.get(name)!,
        size: 1,
        successors: new JavaTreeSet(liveOrder),
        predecessors: new JavaTreeSet(liveOrder),
      });
    for (const d of described.values()) {
      if (d.node.kind === 'source') continue;
      for (const p of d.node.parents) {
        const parent = described.get(p)!;
        d.predecessors.add(parent);
        parent.successors.add(d);
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
