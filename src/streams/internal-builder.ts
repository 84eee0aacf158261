// What StreamsBuilder and the DSL objects share while a topology is built: the Topology being written and the
// counter behind generated names ("KSTREAM-FILTER-0000000001"), consumed in the same order as Kafka's
// InternalStreamsBuilder so that generated names, and so topic and store names, match a Kafka Streams
// application written the same way. It also keeps what merge.repartition.topics needs to know of the graph
// (`merge-repartitions.ts`): which nodes change keys or values, the merge nodes, and each repartition written.

import type { ProcessorSupplier } from './processor.js';
import type { Serde } from './serdes.js';
import { Topology } from './topology.js';

/** One repartition written by `repartitionThrough`: filter -> sink -> topic -> source. */
export interface RepartitionSite {
  filter: string;
  sink: string;
  source: string;
  /** Unprefixed, `<name>-repartition`. */
  topic: string;
  keySerde: Serde<unknown> | null;
  valueSerde: Serde<unknown> | null;
  /** Kafka's OptimizableRepartitionNode (groupings, toTable, joins); repartition() is not. */
  optimizable: boolean;
}

/** One stream-stream join's nodes and stores, for single.store.self.join (`self-join.ts`). */
export interface StreamJoinSite {
  thisWindowed: string;
  otherWindowed: string;
  thisJoin: string;
  otherJoin: string;
  merge: string;
  thisStore: string;
  otherStore: string;
  /** The outer join's store of records waiting for a partner (left and outer joins). */
  sharedStore: string | null;
  /** The processor of the join rewritten as a self-join (Kafka's KStreamKStreamSelfJoin), on the this store. */
  selfJoin: ProcessorSupplier<unknown, unknown, unknown, unknown>;
}

export class InternalBuilder {
  readonly topology = new Topology();
  /** Kafka's key-changing operations (selectKey, map, flatMap, groupBy's key selection), in order. */
  readonly keyChangingNodes: string[] = [];
  /** Kafka's value-changing operations (mapValues, flatMapValues). */
  readonly valueChangingNodes = new Set<string>();
  /** KStream.merge nodes, in order. */
  readonly mergeNodes: string[] = [];
  readonly repartitions: RepartitionSite[] = [];
  readonly streamJoins: StreamJoinSite[] = [];
  private index = 0;

  newProcessorName(prefix: string): string {
    return `${prefix}${String(this.index++).padStart(10, '0')}`;
  }

  newStoreName(prefix: string): string {
    return `${prefix}STATE-STORE-${String(this.index++).padStart(10, '0')}`;
  }

  /** A user's name when given, else a generated one. */
  nameOr(named: { name: string | null } | null | undefined, prefix: string): string {
    return named?.name ?? this.newProcessorName(prefix);
  }
}
