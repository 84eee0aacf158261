// Topology: the graph of sources, processors and sinks, with the state stores connected to processors (Kafka's
// Topology and the parts of its InternalTopologyBuilder that the runtime needs). Built by the Processor API
// (addSource, addProcessor, addSink, addStateStore) or by StreamsBuilder.build().
//
// Sub-topologies are the connected parts of the graph, where processors sharing a store count as connected;
// they are numbered in the order their first node was added, as Kafka does, and a task is one sub-topology on
// one partition number of its input topics ("1_0"). Internal topics (repartition topics) are named here without
// the application id; the runtime prefixes `<application.id>-`.

import assert from 'node:assert/strict';
import { TopologyError } from './errors.js';
import type { Processor, ProcessorSupplier } from './processor.js';

export { TopologyError };

import type { Deserializer, Serializer } from './serdes.js';
import type { StoreBuilder } from './state/stores.js';
import { describeTopology, type TopologyDescription } from './topology-description.js';

/** Picks the record timestamp a task works with (Kafka's TimestampExtractor). */
export type TimestampExtractor = (
  record: {
    topic: string;
    partition: number;
    offset: number;
    timestamp: number;
    key: unknown;
    value: unknown;
  },
  partitionTime: number,
) => number;

/** The topic a sink writes a record to (Kafka's TopicNameExtractor). */
export type TopicNameExtractor<K = unknown, V = unknown> = (
  key: K,
  value: V,
  context: { topic: string | null; partition: number; offset: number },
) => string;

/** Chooses a record's partition, or undefined for the default (murmur2 of the serialized key). */
export type StreamPartitioner<K = unknown, V = unknown> = (
  topic: string,
  key: K,
  value: V,
  numPartitions: number,
) => number | undefined;

export interface SourceNode {
  kind: 'source';
  name: string;
  topics: string[];
  keyDeserializer: Deserializer<unknown> | null;
  valueDeserializer: Deserializer<unknown> | null;
  timestampExtractor: TimestampExtractor | null;
}

export interface ProcessorNode {
  kind: 'processor';
  name: string;
  parents: string[];
  supplier: ProcessorSupplier<unknown, unknown, unknown, unknown>;
  stores: string[];
}

export interface SinkNode {
  kind: 'sink';
  name: string;
  parents: string[];
  topic: string | TopicNameExtractor;
  keySerializer: Serializer<unknown> | null;
  valueSerializer: Serializer<unknown> | null;
  partitioner: StreamPartitioner | null;
}

export type TopologyNode = SourceNode | ProcessorNode | SinkNode;

export interface SourceOptions {
  name: string;
  keyDeserializer?: Deserializer<unknown>;
  valueDeserializer?: Deserializer<unknown>;
  timestampExtractor?: TimestampExtractor;
}

export interface SinkOptions {
  name: string;
  keySerializer?: Serializer<unknown>;
  valueSerializer?: Serializer<unknown>;
  partitioner?: StreamPartitioner;
}

/** What the runtime needs to know of one sub-topology. */
export interface Subtopology {
  id: number;
  /** Node names in the order they were added. */
  nodes: string[];
  sourceTopics: string[];
  /** Internal topics this sub-topology writes to (repartition topics), unprefixed. */
  sinkTopics: string[];
  stores: string[];
  /** A global store's source and updater: it makes no tasks, a global thread feeds it from every partition. */
  global: boolean;
}

export class Topology {
  readonly nodes = new Map<string, TopologyNode>();
  readonly stores = new Map<string, StoreBuilder>();
  /** Internal topic name (unprefixed) -> partition count hint (-1: derived from the writing sub-topology). */
  readonly internalTopics = new Map<string, number>();
  private readonly topicToSource = new Map<string, string>();
  /** Processors (joins) whose sub-topology's input topics must be co-partitioned. */
  readonly copartitioned = new Set<string>();
  /**
   * Store -> the source topic it is restored from instead of a changelog of its own (Kafka's
   * connectSourceStoreAndTopic: a source KTable's store under reuse.ktable.source.topics).
   */
  readonly sourceChangelogs = new Map<string, string>();
  /** Topics feeding global stores (read whole by every instance, never part of the group's subscription). */
  private readonly globalTopicSet = new Set<string>();
  private cachedSubtopologies: Subtopology[] | null = null;

  addSource(nameOrOptions: string | SourceOptions, ...topics: string[]): this {
    const o = typeof nameOrOptions === 'string' ? { name: nameOrOptions } : nameOrOptions;
    if (topics.length === 0) throw new TopologyError(`source ${o.name} needs at least one topic`);
    this.checkNewName(o.name);
    for (const t of topics) {
      const other = this.topicToSource.get(t);
      if (other !== undefined)
        throw new TopologyError(`Topic ${t} has already been registered by another source.`);
      this.topicToSource.set(t, o.name);
    }
    this.add({
      kind: 'source',
      name: o.name,
      topics,
      keyDeserializer: o.keyDeserializer ?? null,
      valueDeserializer: o.valueDeserializer ?? null,
      timestampExtractor: o.timestampExtractor ?? null,
    });
    return this;
  }

  addProcessor<KIn, VIn, KOut, VOut>(
    name: string,
    supplier: ProcessorSupplier<KIn, VIn, KOut, VOut>,
    ...parentNames: string[]
  ): this {
    this.checkNewName(name);
    this.checkParents(name, parentNames);
    this.add({
      kind: 'processor',
      name,
      parents: parentNames,
      supplier: supplier as unknown as ProcessorSupplier<unknown, unknown, unknown, unknown>,
      stores: [],
    });
    return this;
  }

  addSink(
    nameOrOptions: string | SinkOptions,
    topic: string | TopicNameExtractor,
    ...parentNames: string[]
  ): this {
    const o = typeof nameOrOptions === 'string' ? { name: nameOrOptions } : nameOrOptions;
    this.checkNewName(o.name);
    this.checkParents(o.name, parentNames);
    this.add({
      kind: 'sink',
      name: o.name,
      parents: parentNames,
      topic,
      keySerializer: o.keySerializer ?? null,
      valueSerializer: o.valueSerializer ?? null,
      partitioner: o.partitioner ?? null,
    });
    return this;
  }

  addStateStore(store: StoreBuilder, ...processorNames: string[]): this {
    if (this.stores.has(store.name)) throw new TopologyError(`StateStore ${store.name} is already added.`);
    this.stores.set(store.name, store);
    for (const p of processorNames) this.connectProcessorAndStateStores(p, store.name);
    return this;
  }

  /**
   * A global store (Kafka's addGlobalStore): `topic`, read from all its partitions by every instance, goes
   * through the processor `processorName`, which keeps the store up to date. The store has no changelog: it is
   * restored from the topic itself.
   */
  addGlobalStore<KIn, VIn>(
    store: StoreBuilder,
    sourceName: string,
    keyDeserializer: Deserializer<unknown> | null,
    valueDeserializer: Deserializer<unknown> | null,
    topic: string,
    processorName: string,
    supplier: ProcessorSupplier<KIn, VIn, never, never>,
  ): this {
    store.withLoggingDisabled();
    this.addSource(
      {
        name: sourceName,
        keyDeserializer: keyDeserializer ?? undefined,
        valueDeserializer: valueDeserializer ?? undefined,
      },
      topic,
    );
    this.globalTopicSet.add(topic);
    this.addProcessor(processorName, supplier as ProcessorSupplier<KIn, VIn, unknown, unknown>, sourceName);
    this.addStateStore(store, processorName);
    return this;
  }

  /** The topics of global stores. */
  globalTopics(): string[] {
    return [...this.globalTopicSet];
  }

  connectProcessorAndStateStores(processorName: string, ...storeNames: string[]): this {
    const node = this.nodes.get(processorName);
    if (node === undefined || node.kind !== 'processor')
      throw new TopologyError(`Processor ${processorName} is not added yet.`);
    for (const s of storeNames) {
      if (!this.stores.has(s)) throw new TopologyError(`StateStore ${s} is not added yet.`);
      if (!node.stores.includes(s)) node.stores.push(s);
    }
    this.cachedSubtopologies = null;
    return this;
  }

  /**
   * The store, kept by the records of `topic` (a source table's), is restored from that topic up to the group's
   * committed offset and writes no changelog of its own (Kafka's connectSourceStoreAndTopic).
   */
  connectSourceStoreAndTopic(store: string, topic: string): this {
    if (this.sourceChangelogs.has(store)) throw new TopologyError(`Source store ${store} is already added.`);
    this.sourceChangelogs.set(store, topic);
    return this;
  }

  /** Marks a topic as the application's own (a repartition topic), created by the application. */
  markInternalTopic(topic: string, partitions = -1): void {
    this.internalTopics.set(topic, partitions);
  }

  /** The input topics of this processor's sub-topology must have equal partition counts (a join). */
  markCopartitioned(processorName: string): void {
    this.copartitioned.add(processorName);
  }

  describe(): TopologyDescription {
    return describeTopology(this);
  }

  /** The sub-topologies, numbered as Kafka numbers them. */
  subtopologies(): Subtopology[] {
    if (this.cachedSubtopologies !== null) return this.cachedSubtopologies;
    const root = new Map<string, string>();
    const find = (n: string): string => {
      let r = n;
      while (root.get(r) !== r) r = root.get(r)!;
      root.set(n, r);
      return r;
    };
    const union = (a: string, b: string) => root.set(find(a), find(b));
    for (const name of this.nodes.keys()) root.set(name, name);
    const storeOwner = new Map<string, string>();
    for (const node of this.nodes.values()) {
      if (node.kind !== 'source') for (const p of node.parents) union(node.name, p);
      if (node.kind === 'processor') {
        for (const s of node.stores) {
          const owner = storeOwner.get(s);
          if (owner === undefined) storeOwner.set(s, node.name);
          else union(node.name, owner);
        }
      }
    }
    const byRoot = new Map<string, Subtopology>();
    const out: Subtopology[] = [];
    for (const node of this.nodes.values()) {
      const r = find(node.name);
      let st = byRoot.get(r);
      if (st === undefined) {
        st = { id: out.length, nodes: [], sourceTopics: [], sinkTopics: [], stores: [], global: false };
        byRoot.set(r, st);
        out.push(st);
      }
      st.nodes.push(node.name);
      if (node.kind === 'source') {
        st.sourceTopics.push(...node.topics);
        if (node.topics.some((t) => this.globalTopicSet.has(t))) st.global = true;
      }
      if (node.kind === 'sink' && typeof node.topic === 'string' && this.internalTopics.has(node.topic))
        st.sinkTopics.push(node.topic);
      if (node.kind === 'processor')
        for (const s of node.stores) if (!st.stores.includes(s)) st.stores.push(s);
    }
    this.cachedSubtopologies = out;
    return out;
  }

  /** The sub-topology reading a topic. */
  subtopologyOfTopic(topic: string): Subtopology | undefined {
    const source = this.topicToSource.get(topic);
    if (source === undefined) return undefined;
    return this.subtopologies().find((s) => s.nodes.includes(source));
  }

  /** The topics tasks read (the group's subscription): every source topic but those of global stores. */
  sourceTopics(): string[] {
    return [...this.topicToSource.keys()].filter((t) => !this.globalTopicSet.has(t));
  }

  sourceNodeOfTopic(topic: string): SourceNode | undefined {
    const name = this.topicToSource.get(topic);
    return name === undefined ? undefined : (this.nodes.get(name) as SourceNode);
  }

  childrenOf(name: string): string[] {
    const out: string[] = [];
    for (const n of this.nodes.values())
      if (n.kind !== 'source' && n.parents.includes(name)) out.push(n.name);
    return out;
  }

  /**
   * The graph rewired by an optimization (StreamsBuilder.build()): `nodes` in place of the nodes, in this order
   * (sub-topologies are numbered by it), the sources' topics registered again; stores and topics stay.
   */
  replaceNodes(nodes: TopologyNode[]): void {
    this.nodes.clear();
    this.topicToSource.clear();
    for (const node of nodes) {
      this.nodes.set(node.name, node);
      if (node.kind === 'source') for (const t of node.topics) this.topicToSource.set(t, node.name);
    }
    this.cachedSubtopologies = null;
  }

  private add(node: TopologyNode): void {
    this.nodes.set(node.name, node);
    this.cachedSubtopologies = null;
  }

  private checkNewName(name: string): void {
    assert.ok(typeof name === 'string' && name.length > 0, 'a node needs a name');
    if (this.nodes.has(name)) throw new TopologyError(`Processor ${name} is already added.`);
  }

  private checkParents(name: string, parents: string[]): void {
    if (parents.length === 0) throw new TopologyError(`${name} needs at least one parent`);
    for (const p of parents) {
      const parent = this.nodes.get(p);
      if (parent === undefined) throw new TopologyError(`Parent processor ${p} is not added yet for ${name}`);
      if (parent.kind === 'sink') throw new TopologyError(`Sink ${p} cannot be used a parent.`);
    }
  }
}

export type { Processor };
