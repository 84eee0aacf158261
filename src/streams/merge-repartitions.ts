// topology.optimization's merge.repartition.topics, as Kafka's InternalStreamsBuilder.mergeRepartitionTopics
// rewrites its graph, here on the built Topology. The repartitions (groupings, toTable, joins; not repartition())
// whose nearest key- or value-changing ancestor is a key-changing node (selectKey, map, flatMap, groupBy) are
// grouped by that node, or by a merge node below it that all of them descend from. Each group becomes one
// repartition right below its node, through the first one's topic, with the first key and value serdes given;
// its nodes are named after the topic (`<topic>-filter`, `-sink`, `-source`) and take three numbers of the name
// counter, as Kafka's. The node below the key changer on the way to each old repartition moves below the merged
// source (so a filter between them then runs after the repartition, as in Kafka), the old repartition's children
// hang from its parent, and its nodes and topic go. A group of one is rewritten too: Kafka renames its nodes.

import { TopologyError } from './errors.js';
import type { InternalBuilder, RepartitionSite } from './internal-builder.js';
import type { ProcessorNode, SinkNode, SourceNode, TopologyNode } from './topology.js';

export function mergeRepartitionTopics(b: InternalBuilder): void {
  const topology = b.topology;
  // A working copy: the parents lists change while the groups are rewritten one after another.
  const nodes = new Map<string, TopologyNode>();
  for (const [name, n] of topology.nodes)
    nodes.set(name, n.kind === 'source' ? { ...n } : ({ ...n, parents: [...n.parents] } as TopologyNode));
  const siteOfSource = new Map(b.repartitions.map((s) => [s.source, s]));
  const keyChanging = new Set(b.keyChangingNodes);

  // Kafka's graph, where a repartition is one node below its upstream: the repartition stands as its filter,
  // and a repartition source's parent is that filter.
  const parents = (name: string): string[] => {
    const n = nodes.get(name);
    if (n === undefined) return [];
    if (n.kind !== 'source') return n.parents;
    const site = siteOfSource.get(name);
    return site === undefined || !nodes.has(site.filter) ? [] : [site.filter];
  };
  // Kafka's findParentNodeMatching, its walk included: the last parent's answer wins.
  const find = (start: string, test: (name: string) => boolean): string | null => {
    if (test(start)) return start;
    let found: string | null = null;
    for (const p of parents(start)) {
      if (test(p)) return p;
      found = find(p, test);
    }
    return found;
  };
  const keyChangingParent = (site: RepartitionSite): string | null => {
    const nearest = find(site.filter, (n) => keyChanging.has(n) || b.valueChangingNodes.has(n));
    return nearest !== null && nearest === find(site.filter, (n) => keyChanging.has(n)) ? nearest : null;
  };
  const below = (node: string) => (n: string) => parents(n).includes(node);

  const groups = new Map<string, RepartitionSite[]>(b.keyChangingNodes.map((k) => [k, []]));
  for (const site of b.repartitions) {
    if (!site.optimizable) continue;
    const key = keyChangingParent(site);
    if (key !== null) groups.get(key)!.push(site);
  }
  // Kafka's maybeUpdateKeyChangingRepartitionNodeMap: a merge node below a key changer that every repartition of
  // the key changer descends from takes its group over.
  const mergeTakes = new Map<string, string[]>();
  for (const merge of b.mergeNodes) {
    const keys: string[] = [];
    for (const [key, sites] of groups)
      if (sites.every((s) => find(s.filter, below(merge)) !== null) && find(merge, below(key)) !== null)
        keys.push(key);
    mergeTakes.set(merge, keys);
  }
  const taken = new Set<string>();
  for (const [merge, keys] of mergeTakes) {
    groups.set(merge, [...new Set(keys.flatMap((k) => groups.get(k)!))]);
    for (const k of keys) taken.add(k);
  }
  for (const k of taken) groups.delete(k);

  const mergedAfter = new Map<string, TopologyNode[]>();
  const removedTopics = new Set<string>();
  for (const [key, sites] of groups) {
    if (sites.length === 0) continue;
    const topic = sites[0]!.topic;
    const keySerde = sites.find((s) => s.keySerde !== null)?.keySerde ?? null;
    const valueSerde = sites.find((s) => s.valueSerde !== null)?.valueSerde ?? null;
    // Kafka's createRepartitionedSource takes three names of the counter even when the topic names the nodes.
    b.newProcessorName('KSTREAM-SINK-');
    b.newProcessorName('KSTREAM-FILTER-');
    b.newProcessorName('KSTREAM-SOURCE-');
    const filter: ProcessorNode = {
      ...(nodes.get(sites[0]!.filter) as ProcessorNode),
      name: `${topic}-filter`,
      parents: [key],
    };
    const sink: SinkNode = {
      ...(nodes.get(sites[0]!.sink) as SinkNode),
      name: `${topic}-sink`,
      parents: [filter.name],
      keySerializer: keySerde,
      valueSerializer: valueSerde,
    };
    const source: SourceNode = {
      ...(nodes.get(sites[0]!.source) as SourceNode),
      name: `${topic}-source`,
      keyDeserializer: keySerde,
      valueDeserializer: valueSerde,
    };
    for (const site of sites) {
      const child = find(site.filter, below(key));
      if (child === null) throw new TopologyError(`Found a null keyChangingChild node for ${site.source}`);
      const upstream = parents(site.filter);
      const children = [...nodes.values()].filter(
        (n) => n.kind !== 'source' && n.parents.includes(site.source),
      );
      if (child === site.filter) {
        for (const c of children) reparent(c, site.source, [source.name]);
      } else {
        reparent(nodes.get(child)!, key, [source.name]);
        for (const c of children) reparent(c, site.source, upstream);
      }
      for (const n of [site.filter, site.sink, site.source]) nodes.delete(n);
      if (site.topic !== topic) removedTopics.add(site.topic);
    }
    mergedAfter.set(key, [filter, sink, source]);
    for (const n of [filter, sink, source]) nodes.set(n.name, n);
    siteOfSource.set(source.name, {
      ...sites[0]!,
      filter: filter.name,
      sink: sink.name,
      source: source.name,
    });
  }
  if (mergedAfter.size === 0) return;

  // Kafka writes the merged repartition right after its key changer (it takes that node's build priority).
  const merged = new Set([...mergedAfter.values()].flat().map((n) => n.name));
  const ordered: TopologyNode[] = [];
  for (const name of topology.nodes.keys()) {
    const n = nodes.get(name);
    if (n === undefined || merged.has(name)) continue;
    ordered.push(n);
    ordered.push(...(mergedAfter.get(name) ?? []));
  }
  for (const t of removedTopics) topology.internalTopics.delete(t);
  topology.replaceNodes(ordered);
}

/** `old` out of the node's parents, `added` appended to them (Kafka's removeChild and addChild). */
function reparent(node: TopologyNode, old: string, added: string[]): void {
  if (node.kind === 'source') return;
  node.parents = node.parents.filter((p) => p !== old);
  for (const p of added) if (!node.parents.includes(p)) node.parents.push(p);
}
