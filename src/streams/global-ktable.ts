// GlobalKTable: a table of a whole topic, every partition, held by every instance of the application in a
// global store (builder.globalTable). A global thread keeps the store up to date from the topic (it has no
// changelog: it is restored from the topic itself), so a stream can join it on any key it picks from its records
// without co-partitioning or repartitioning (KStream.join(globalTable, keySelector, joiner)).

import type { Named } from './dsl-options.js';
import type { InternalBuilder } from './internal-builder.js';
import type { KStream } from './kstream.js';
import { KStream as KStreamClass } from './kstream.js';
import type { Processor, ProcessorContext } from './processor.js';
import type { TimestampedStore } from './state/store-stack.js';

export class GlobalKTable<K, V> {
  /** @internal type-only: the key and value types of the table */
  declare readonly _types?: [K, V];

  constructor(
    /** @internal */ readonly builder: InternalBuilder,
    private readonly storeName: string,
  ) {}

  /** The global store's name (queryable through KafkaStreams.store and the test driver). */
  queryableStoreName(): string {
    return this.storeName;
  }
}

/**
 * Whether a stream-table or stream-globalTable join skips a record, as Kafka's KStreamKTableJoinProcessor does
 * (3.7+, KIP-962): a null value means there is nothing to join (and a joiner's null stands for a missing table
 * row), so such a record is dropped in every kind of join; so is a record whose join key (the record key, or the
 * global key selector's answer) is null, except in a left join whose record key itself is null, where the joiner
 * gets a null table value. A keyed record whose selector answers null is dropped by a left join too.
 */
export function skipsTableJoin(left: boolean, key: unknown, value: unknown, joinKey: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (left && (key === null || key === undefined)) return false;
  return joinKey === null || joinKey === undefined;
}

/**
 * Each record of the stream joins the global table's value for keySelector(key, value); inner drops records
 * without one, left calls the joiner with null (after skipsTableJoin's drops). Kafka names the node
 * KSTREAM-JOIN- / KSTREAM-LEFTJOIN- and lists no store on it: the global store is not part of the stream's
 * sub-topology.
 */
export function globalTableJoin<K, V, GK, GV, VR>(
  stream: KStream<K, V>,
  table: GlobalKTable<GK, GV>,
  keySelector: (key: K, value: V) => GK,
  joiner: (value: V, globalValue: GV | null, key: K) => VR,
  named: Named | undefined,
  left: boolean,
): KStream<K, VR> {
  const b = stream.builder;
  const name = b.nameOr(named, left ? 'KSTREAM-LEFTJOIN-' : 'KSTREAM-JOIN-');
  const storeName = table.queryableStoreName();
  b.topology.addProcessor(
    name,
    (): Processor<K, V, K, VR> => {
      let context: ProcessorContext<K, VR>;
      let store: TimestampedStore<GK, GV>;
      return {
        init(c) {
          context = c;
          store = c.getStateStore<TimestampedStore<GK, GV>>(storeName);
        },
        process(r) {
          if (r.value === null || r.value === undefined) return;
          const globalKey = keySelector(r.key, r.value);
          if (skipsTableJoin(left, r.key, r.value, globalKey)) return;
          const globalValue =
            globalKey === null || globalKey === undefined ? null : (store.get(globalKey)?.value ?? null);
          if (globalValue === null && !left) return;
          context.forward(r.withValue(joiner(r.value, globalValue, r.key)));
        },
      };
    },
    stream.nodeName,
  );
  return new KStreamClass<K, VR>(b, name, stream.keySerde, null, stream.repartitionRequired);
}
