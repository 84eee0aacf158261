// Foreign-key KTable-KTable joins (Kafka's KIP-213): `orders.join(customers, (order) => order.customerId, joiner)`.
// The left table's rows are joined with the right table's row whose key the extractor picks from the left value.
//
// As in Kafka, the join runs in two sub-topologies that talk through two internal topics:
// - left side: each left change sends subscriptions, keyed by the foreign key, to
//   `<application.id>-<…>-SUBSCRIPTION-REGISTRATION-<n>-topic` (a new foreign key registers, the old one is told to
//   forget the row);
// - right side: the subscriptions land in a subscription store (changelogged) keyed by (foreign key, primary key);
//   a subscription is answered with the right row of its foreign key, and every change of a right row is sent to
//   all its subscribers, on `<application.id>-<…>-SUBSCRIPTION-RESPONSE-<n>-topic`, keyed by the primary key;
// - left side again: the resolver drops a response unless it was computed for the left row's current value
//   (a hash of the value's bytes travels with the subscription and comes back with the response), so that a row
//   whose foreign key changed never yields a result for the old one; it then joins and emits the result table.
//
// The hash is Kafka's murmur3 128-bit hash (seed 104729) of the serialized left value, so that Brook and Java
// instances agree on which responses are stale. The internal topics carry Kafka's SubscriptionWrapper version 1
// (with the left record's partition, to which the answer goes back: left tables need not be partitioned by the
// default partitioner) and SubscriptionResponseWrapper version 0 layouts, the store Kafka's CombinedKey layout.
// Version-0 subscriptions (Kafka before 3.4) are read too; their answers go where the key hashes.

// Instructions per left change (Kafka's, with KIP-962's null foreign keys for left joins):
// - foreign key unchanged, or a new row: subscribe to it; an inner join on a new row only answers when the right
//   row exists, otherwise (updates, left joins) the answer comes even without a right row, so that an earlier
//   result is replaced by a tombstone (inner) or by joiner(value, null) (left);
// - foreign key changed: the old foreign key forgets the row silently, the new one is subscribed as above;
// - row deleted: the old foreign key forgets the row and answers, which yields a tombstone;
// - inner join, foreign key became null: the old foreign key forgets the row and answers: a tombstone;
// - left join, null foreign key: a subscription without a key (any partition), never stored, answered with null:
//   joiner(value, null), or a tombstone for a deleted row that had no foreign key.

import { type Materialized, Named, TableJoined } from './dsl-options.js';
import { TopologyError } from './errors.js';
import { KTable, storeGetter, tableSourceSupplier } from './ktable.js';
import { Change, type Processor, type ProcessorContext, Record } from './processor.js';
import { type Serde, Serdes, SerializationError } from './serdes.js';
import { murmur3Hash128 } from './state/murmur3.js';
import type { TimestampedStore } from './state/store-stack.js';
import { StoreBuilder, type ValueAndTimestamp } from './state/stores.js';

/** Kafka's SubscriptionWrapper.Instruction values. */
export const Instruction = {
  DELETE_KEY_NO_PROPAGATE: 0,
  DELETE_KEY_AND_PROPAGATE: 1,
  PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE: 2,
  PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE: 3,
} as const;

/** The SubscriptionWrapper version written (Kafka's CURRENT_VERSION since 3.4: the primary partition). */
export const SUBSCRIPTION_VERSION = 1;
/** The SubscriptionResponseWrapper version (the primary partition travels beside it, never in its bytes). */
const RESPONSE_VERSION = 0;
const HASH_NULL_BIT = 0x80;
const HASH_BYTES = 16;

export interface Subscription {
  hash: Buffer | null;
  instruction: number;
  primaryKey: Buffer;
  /** The partition of the left record that sent it (version 1); null in version 0. */
  primaryPartition: number | null;
}

export interface SubscriptionResponse {
  hash: Buffer | null;
  foreignValue: Buffer | null;
}

/**
 * Version 1: `{1 bit hash is null}{7 bits version}{1 byte instruction}{16 bytes hash, if any}{primary key bytes}
 * {int32 primary partition}`; version 0 (a null primary partition) without the partition.
 */
export function encodeSubscription(s: Subscription): Buffer {
  const version = s.primaryPartition === null ? 0 : SUBSCRIPTION_VERSION;
  const hashBytes = s.hash === null ? 0 : HASH_BYTES;
  const out = Buffer.allocUnsafe(2 + hashBytes + s.primaryKey.length + (version === 0 ? 0 : 4));
  out[0] = s.hash === null ? version | HASH_NULL_BIT : version;
  out[1] = s.instruction;
  if (s.hash !== null) {
    if (s.hash.length !== HASH_BYTES)
      throw new SerializationError(`a subscription hash has ${HASH_BYTES} bytes`);
    s.hash.copy(out, 2);
  }
  s.primaryKey.copy(out, 2 + hashBytes);
  if (s.primaryPartition !== null) out.writeInt32BE(s.primaryPartition, out.length - 4);
  return out;
}

export function decodeSubscription(bytes: Buffer): Subscription {
  if (bytes.length < 2) throw new SerializationError('a subscription needs at least 2 bytes');
  const version = bytes[0]! & 0x7f;
  // Kafka's message when a newer application's subscription reaches an older one (a rolling upgrade gone wrong).
  if (version > SUBSCRIPTION_VERSION)
    throw new SerializationError(`SubscriptionWrapper is of an incompatible version (${version}).`);
  const instruction = bytes[1]!;
  if (instruction > Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE)
    throw new SerializationError(`unknown subscription instruction ${instruction}`);
  const hashNull = (bytes[0]! & HASH_NULL_BIT) !== 0;
  const start = hashNull ? 2 : 2 + HASH_BYTES;
  const end = version === 0 ? bytes.length : bytes.length - 4;
  if (end < start) throw new SerializationError('a subscription is shorter than its hash and partition');
  return {
    hash: hashNull ? null : Buffer.from(bytes.subarray(2, start)),
    instruction,
    primaryKey: Buffer.from(bytes.subarray(start, end)),
    primaryPartition: version === 0 ? null : bytes.readInt32BE(end),
  };
}

/** `{1 bit hash is null}{7 bits version}{16 bytes hash, if any}{foreign value bytes, none for null}`. */
export function encodeResponse(r: SubscriptionResponse): Buffer {
  const head = Buffer.from([r.hash === null ? RESPONSE_VERSION | HASH_NULL_BIT : RESPONSE_VERSION]);
  const parts: Buffer[] = [head];
  if (r.hash !== null) parts.push(r.hash);
  if (r.foreignValue !== null) parts.push(r.foreignValue);
  return Buffer.concat(parts);
}

export function decodeResponse(bytes: Buffer): SubscriptionResponse {
  if (bytes.length < 1) throw new SerializationError('a subscription response needs at least 1 byte');
  const version = bytes[0]! & 0x7f;
  // Kafka's ResponseJoinProcessor accepts only its current version.
  if (version !== RESPONSE_VERSION)
    throw new SerializationError(`SubscriptionResponseWrapper is of an incompatible version (${version}).`);
  const hashNull = (bytes[0]! & HASH_NULL_BIT) !== 0;
  const start = hashNull ? 1 : 1 + HASH_BYTES;
  if (bytes.length < start) throw new SerializationError('a subscription response is shorter than its hash');
  return {
    hash: hashNull ? null : Buffer.from(bytes.subarray(1, start)),
    foreignValue: bytes.length > start ? Buffer.from(bytes.subarray(start)) : null,
  };
}

/**
 * A response on its way to the response topic: its bytes and the left partition it answers (Kafka's
 * SubscriptionResponseWrapper.primaryPartition, which its sink's partitioner reads and its serializer leaves out).
 */
export interface OutgoingResponse {
  bytes: Buffer;
  primaryPartition: number | null;
}

const outgoingResponseSerializer = {
  serialize: (_topic: string, r: OutgoingResponse | null) => (r === null ? null : r.bytes),
};

/** Kafka's CombinedKey bytes: `{uint32 foreign key length}{foreign key}{primary key}`; a prefix per foreign key. */
export function combinedKey(foreignKey: Buffer, primaryKey: Buffer): Buffer {
  const out = Buffer.allocUnsafe(4 + foreignKey.length + primaryKey.length);
  out.writeUInt32BE(foreignKey.length, 0);
  foreignKey.copy(out, 4);
  primaryKey.copy(out, 4 + foreignKey.length);
  return out;
}

function foreignKeyPrefix(foreignKey: Buffer): Buffer {
  return combinedKey(foreignKey, Buffer.alloc(0));
}

/** The smallest key above every key starting with `prefix`, or null when there is none (all 0xff). */
function prefixEnd(prefix: Buffer): Buffer | null {
  const out = Buffer.from(prefix);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 0xff) {
      out[i]! += 1;
      return out.subarray(0, i + 1);
    }
  }
  return null;
}

/** Kafka's hash of a serialized left value (Murmur3.hash128), null for a null value. */
export function valueHash(bytes: Buffer | null): Buffer | null {
  return bytes === null ? null : murmur3Hash128(bytes);
}

function sameHash(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

type Extractor<K, V, KO> = (value: V, key: K) => KO | null | undefined;
type Joiner<K, V, VO, VR> = (value: V, otherValue: VO | null, key: K) => VR;

interface Names {
  registrationTopic: string;
  registrationProcessor: string;
  registrationSink: string;
  registrationSource: string;
  store: string;
  receive: string;
  joinForeign: string;
  foreignJoinSubscription: string;
  responseTopic: string;
  responseSink: string;
  responseSource: string;
  resolver: string;
  result: string;
}

/** Kafka's names, consumed from the counter in Kafka's order (KTableImpl.doJoinOnForeignKey). */
function joinNames(b: KTable<unknown, unknown>['builder'], name: string | null): Names {
  const FK = 'KTABLE-FK-JOIN-';
  const n = (suffix: string, prefix: string) => (name !== null ? name + suffix : b.newProcessorName(prefix));
  return {
    registrationTopic: `${n('-subscription-registration', `${FK}SUBSCRIPTION-REGISTRATION-`)}-topic`,
    registrationProcessor: n('-subscription-registration-processor', `${FK}SUBSCRIPTION-REGISTRATION-`),
    registrationSink: n('-subscription-registration-sink', 'KTABLE-SINK-'),
    registrationSource: n('-subscription-registration-source', 'KTABLE-SOURCE-'),
    store: n('-subscription-store', `${FK}SUBSCRIPTION-STATE-STORE-`),
    receive: n('-subscription-receive', `${FK}SUBSCRIPTION-PROCESSOR-`),
    joinForeign: n('-subscription-join-foreign', `${FK}SUBSCRIPTION-PROCESSOR-`),
    foreignJoinSubscription: n('-foreign-join-subscription', `${FK}SUBSCRIPTION-PROCESSOR-`),
    responseTopic: `${n('-subscription-response', `${FK}SUBSCRIPTION-RESPONSE-`)}-topic`,
    responseSink: n('-subscription-response-sink', 'KTABLE-SINK-'),
    responseSource: n('-subscription-response-source', 'KTABLE-SOURCE-'),
    resolver: n('-subscription-response-resolver', `${FK}SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-`),
    result: n('-result', `${FK}OUTPUT-`),
  };
}

export function foreignKeyJoin<K, V, KO, VO, VR>(
  left: KTable<K, V>,
  right: KTable<KO, VO>,
  extractor: Extractor<K, V, KO>,
  joiner: Joiner<K, V, VO, VR>,
  leftJoin: boolean,
  joined: TableJoined | Named | undefined,
  materialized: Materialized<K, VR> | undefined,
): KTable<K, VR> {
  const b = left.builder;
  if (right.builder !== b) throw new TopologyError('both tables of a join must come from one StreamsBuilder');
  const leftGetter = left.valueGetter;
  const rightGetter = right.valueGetter;
  if (leftGetter === null || rightGetter === null)
    throw new TopologyError('a foreign-key join needs tables whose values can be read');
  const userName = joined instanceof Named ? joined.name : (joined?.name ?? null);
  const names = joinNames(b, userName);
  // Kafka's MaterializedInternal names the result store even when it is not materialized.
  const resultStore = materialized?.storeName ?? b.newStoreName('KTABLE-FK-JOIN-OUTPUT-');
  const materializeResult = materialized?.storeName != null;
  const t = b.topology;
  const bytes = Serdes.ByteArray() as Serde<unknown>;
  const serdes = {
    leftKey: left.keySerde as Serde<unknown> | null,
    leftValue: left.valueSerde as Serde<unknown> | null,
    rightKey: right.keySerde as Serde<unknown> | null,
    rightValue: right.valueSerde as Serde<unknown> | null,
  };

  // Both tables send their old values, as Kafka's doJoinOnForeignKey asks of them.
  left.oldValues.enable(true);
  right.oldValues.enable(true);
  // Left side: subscriptions out.
  t.addProcessor(
    names.registrationProcessor,
    sendSupplier<K, V, KO>(extractor, leftJoin, serdes, names),
    left.nodeName,
  );
  // Keys travel typed, in the tables' key serdes (or the default), so that partitioners see them.
  const otherPartitioner = joined instanceof TableJoined ? joined.otherPartitioner : null;
  const partitioner = joined instanceof TableJoined ? joined.partitioner : null;
  t.addSink(
    {
      name: names.registrationSink,
      keySerializer: serdes.rightKey ?? undefined,
      valueSerializer: bytes,
      ...(otherPartitioner === null
        ? {}
        : {
            // A left join's keyless subscription (null foreign key) may go to any partition.
            partitioner: (topic, key, _value, n) =>
              key === null || key === undefined ? undefined : otherPartitioner(topic, key as KO, null, n),
          }),
    },
    names.registrationTopic,
    names.registrationProcessor,
  );
  t.markInternalTopic(names.registrationTopic);

  // Right side: the subscription store, answers to subscriptions, and right changes sent to subscribers.
  t.addSource(
    {
      name: names.registrationSource,
      keyDeserializer: serdes.rightKey ?? undefined,
      valueDeserializer: bytes,
    },
    names.registrationTopic,
  );
  const store = new StoreBuilder<Buffer, Buffer>(
    names.store,
    'persistent',
    Serdes.ByteArray(),
    Serdes.ByteArray(),
    true,
  );
  t.addProcessor(names.receive, receiveSupplier<KO>(names.store, serdes, names), names.registrationSource);
  t.addStateStore(store as StoreBuilder, names.receive);
  t.markCopartitioned(names.receive);
  t.addProcessor(
    names.joinForeign,
    joinForeignSupplier<K, KO, VO>(rightGetter, serdes, names),
    names.receive,
  );
  t.connectProcessorAndStateStores(names.joinForeign, ...rightGetter.stores);
  t.addProcessor(
    names.foreignJoinSubscription,
    foreignChangeSupplier<K, KO, VO>(names.store, serdes, names),
    right.nodeName,
  );
  t.connectProcessorAndStateStores(names.foreignJoinSubscription, names.store);
  t.addSink(
    {
      name: names.responseSink,
      keySerializer: serdes.leftKey ?? undefined,
      valueSerializer: outgoingResponseSerializer as Serde<unknown>,
      // Back to the left record's partition (version-1 subscriptions), unless the join names a partitioner.
      partitioner:
        partitioner === null
          ? (_topic, _key, value) => (value as OutgoingResponse).primaryPartition ?? undefined
          : (topic, key, _value, n) => partitioner(topic, key as K, null, n),
    },
    names.responseTopic,
    names.joinForeign,
    names.foreignJoinSubscription,
  );
  t.markInternalTopic(names.responseTopic);

  // Left side again: responses resolved against the left row's current value.
  t.addSource(
    { name: names.responseSource, keyDeserializer: serdes.leftKey ?? undefined, valueDeserializer: bytes },
    names.responseTopic,
  );
  t.addProcessor(
    names.resolver,
    resolverSupplier<K, V, VO, VR>(leftGetter, joiner, leftJoin, serdes, names),
    names.responseSource,
  );
  t.connectProcessorAndStateStores(names.resolver, ...leftGetter.stores);
  t.markCopartitioned(names.resolver);

  const keySerde = materialized?.keySerde ?? left.keySerde;
  const valueSerde = materialized?.valueSerde ?? null;
  if (materializeResult && materialized !== undefined) {
    t.addProcessor(names.result, tableSourceSupplier<K, VR>(resultStore), names.resolver);
    const out = new StoreBuilder<K, VR>(resultStore, materialized.engine, keySerde, valueSerde, true);
    if (materialized.loggingEnabled) out.withLoggingEnabled(materialized.logConfig);
    else out.withLoggingDisabled();
    if (materialized.cachingEnabled) out.withCachingEnabled();
    t.addStateStore(out as StoreBuilder, names.result);
    return new KTable<K, VR>(b, names.result, keySerde, valueSerde, resultStore);
  }
  // Not materialized unless something below reads its values or regroups it (Kafka's forced materialization):
  // then it gets the store named above, persistent and logged, and forwards old values from it.
  let forcedStore: string | null = null;
  t.addProcessor(
    names.result,
    () =>
      forcedStore === null
        ? unmaterializedResultSupplier<K, VR>()()
        : tableSourceSupplier<K, VR>(forcedStore)(),
    names.resolver,
  );
  return new KTable<K, VR>(b, names.result, keySerde, valueSerde, null, null, () => {
    const out = new StoreBuilder<K, VR>(resultStore, 'persistent', keySerde, valueSerde, true);
    out.withCachingEnabled();
    t.addStateStore(out as StoreBuilder, names.result);
    forcedStore = resultStore;
    return storeGetter<K, VR>(resultStore);
  });
}

interface JoinSerdes {
  leftKey: Serde<unknown> | null;
  leftValue: Serde<unknown> | null;
  rightKey: Serde<unknown> | null;
  rightValue: Serde<unknown> | null;
}

/** The serdes a processor uses: the tables' own, else the application's defaults. */
function resolved(s: JoinSerdes, context: ProcessorContext<unknown, unknown>) {
  return {
    leftKey: s.leftKey ?? context.keySerde(),
    leftValue: s.leftValue ?? context.valueSerde(),
    rightKey: s.rightKey ?? context.keySerde(),
    rightValue: s.rightValue ?? context.valueSerde(),
  };
}

/** The left side's subscription sender (Kafka's SubscriptionSendProcessorSupplier). */
function sendSupplier<K, V, KO>(
  extractor: Extractor<K, V, KO>,
  leftJoin: boolean,
  serdes: JoinSerdes,
  names: Names,
) {
  return (): Processor<K, Change<V>, KO | null, Buffer> => {
    let context: ProcessorContext<KO | null, Buffer>;
    let s: ReturnType<typeof resolved>;
    /** The row's foreign key and its bytes (compared as bytes, as Kafka compares them), or null. */
    const foreignKey = (value: V | null, key: K): { key: KO; bytes: Buffer } | null => {
      if (value === null) return null;
      const fk = extractor(value, key);
      if (fk === null || fk === undefined) return null;
      const bytes = s.rightKey.serialize(`${names.registrationTopic}-fk`, fk);
      return bytes === null ? null : { key: fk, bytes };
    };
    return {
      init(c) {
        context = c;
        s = resolved(serdes, c as ProcessorContext<unknown, unknown>);
      },
      process(r) {
        if (r.key === null || r.key === undefined) return;
        const { newValue, oldValue } = r.value;
        const primaryKey = s.leftKey.serialize(`${names.registrationTopic}-pk`, r.key);
        if (primaryKey === null) return;
        const newBytes =
          newValue === null ? null : s.leftValue.serialize(`${names.registrationTopic}-vh`, newValue);
        const hash = valueHash(newBytes);
        const oldFk = foreignKey(oldValue, r.key);
        const newFk = foreignKey(newValue, r.key);
        const primaryPartition = leftPartition(context);
        const send = (fk: { key: KO } | null, instruction: number) =>
          context.forward(
            new Record(
              fk?.key ?? null,
              encodeSubscription({ hash, instruction, primaryKey, primaryPartition }),
              r.timestamp,
              r.headers,
            ),
          );
        const moved = oldFk !== null && (newFk === null || !newFk.bytes.equals(oldFk.bytes));
        if (leftJoin) {
          if (moved)
            send(
              oldFk,
              newValue === null ? Instruction.DELETE_KEY_AND_PROPAGATE : Instruction.DELETE_KEY_NO_PROPAGATE,
            );
          // A null foreign key goes too (KIP-962), without a key: the right side answers it with null.
          if (newValue !== null) send(newFk, Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE);
          else if (oldFk === null && oldValue !== null)
            send(null, Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE);
          return;
        }
        if (moved)
          send(
            oldFk,
            newFk === null ? Instruction.DELETE_KEY_AND_PROPAGATE : Instruction.DELETE_KEY_NO_PROPAGATE,
          );
        if (newFk !== null)
          send(
            newFk,
            oldValue === null
              ? Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE
              : Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE,
          );
      },
    };
  };
}

/**
 * The partition of the left record being processed, which Kafka sends in the subscription so that the answer
 * comes back to this task: the record's own, else (no record in hand) the task's partition, which is the same.
 */
function leftPartition(context: ProcessorContext<unknown, unknown>): number {
  const metadata = context.recordMetadata();
  if (metadata !== null && metadata.partition >= 0) return metadata.partition;
  const partition = Number(context.taskId.slice(context.taskId.lastIndexOf('_') + 1));
  if (!Number.isInteger(partition) || partition < 0)
    throw new Error(`no partition in task id ${context.taskId}`);
  return partition;
}

/** Keeps the subscription store (Kafka's SubscriptionReceiveProcessorSupplier); forwards keyed by CombinedKey. */
function receiveSupplier<KO>(storeName: string, serdes: JoinSerdes, names: Names) {
  return (): Processor<KO | null, Buffer, KO | null, Subscription> => {
    let context: ProcessorContext<KO | null, Subscription>;
    let store: TimestampedStore<Buffer, Buffer>;
    let s: ReturnType<typeof resolved>;
    return {
      init(c) {
        context = c;
        s = resolved(serdes, c as ProcessorContext<unknown, unknown>);
        store = c.getStateStore<TimestampedStore<Buffer, Buffer>>(storeName);
      },
      process(r) {
        if (r.value === null) return;
        const subscription = decodeSubscription(r.value);
        const fk =
          r.key === null || r.key === undefined
            ? null
            : s.rightKey.serialize(`${names.registrationTopic}-fk`, r.key);
        if (fk === null) {
          // A left join's row without a foreign key: answered (with null), never kept.
          if (subscription.instruction === Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE)
            context.forward(r.withKey(null).withValue(subscription));
          return;
        }
        const key = combinedKey(fk, subscription.primaryKey);
        const remove =
          subscription.instruction === Instruction.DELETE_KEY_AND_PROPAGATE ||
          subscription.instruction === Instruction.DELETE_KEY_NO_PROPAGATE;
        store.put(key, remove ? null : { value: r.value, timestamp: r.timestamp });
        context.forward(r.withValue(subscription));
      },
    };
  };
}

/** Answers a subscription with the foreign row (Kafka's SubscriptionJoinProcessorSupplier). */
function joinForeignSupplier<K, KO, VO>(
  rightGetter: NonNullable<KTable<KO, VO>['valueGetter']>,
  serdes: JoinSerdes,
  names: Names,
) {
  return (): Processor<KO | null, Subscription, K, OutgoingResponse> => {
    let context: ProcessorContext<K, OutgoingResponse>;
    let get: (key: KO) => ValueAndTimestamp<VO> | null;
    let s: ReturnType<typeof resolved>;
    return {
      init(c) {
        context = c;
        s = resolved(serdes, c as ProcessorContext<unknown, unknown>);
        get = rightGetter.init(c as ProcessorContext<unknown, unknown>);
      },
      process(r) {
        const sub = r.value;
        if (sub.instruction === Instruction.DELETE_KEY_NO_PROPAGATE) return;
        let foreign: ValueAndTimestamp<VO> | null = null;
        if (sub.instruction !== Instruction.DELETE_KEY_AND_PROPAGATE) {
          foreign = r.key === null ? null : get(r.key);
          if (foreign === null && sub.instruction === Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE) return;
        }
        const foreignValue =
          foreign === null ? null : s.rightValue.serialize(names.responseTopic, foreign.value);
        const timestamp = foreign === null ? r.timestamp : Math.max(r.timestamp, foreign.timestamp);
        const primaryKey = s.leftKey.deserialize(`${names.registrationTopic}-pk`, sub.primaryKey) as K;
        const response = {
          bytes: encodeResponse({ hash: sub.hash, foreignValue }),
          primaryPartition: sub.primaryPartition,
        };
        context.forward(new Record(primaryKey, response, timestamp, r.headers));
      },
    };
  };
}

/** Sends a right row's change to each of its subscribers (Kafka's ForeignTableJoinProcessorSupplier). */
function foreignChangeSupplier<K, KO, VO>(storeName: string, serdes: JoinSerdes, names: Names) {
  return (): Processor<KO, Change<VO>, K, OutgoingResponse> => {
    let context: ProcessorContext<K, OutgoingResponse>;
    let store: TimestampedStore<Buffer, Buffer>;
    let s: ReturnType<typeof resolved>;
    return {
      init(c) {
        context = c;
        s = resolved(serdes, c as ProcessorContext<unknown, unknown>);
        store = c.getStateStore<TimestampedStore<Buffer, Buffer>>(storeName);
      },
      process(r) {
        if (r.key === null || r.key === undefined) return;
        if (r.value.newValue === null && r.value.oldValue === null) return;
        const fk = s.rightKey.serialize(`${names.registrationTopic}-fk`, r.key);
        if (fk === null) return;
        const prefix = foreignKeyPrefix(fk);
        const end = prefixEnd(prefix);
        const entries = end === null ? store.all() : store.range(prefix, end);
        const foreignValue =
          r.value.newValue === null ? null : s.rightValue.serialize(names.responseTopic, r.value.newValue);
        for (const e of entries) {
          if (e.key.length < prefix.length || !e.key.subarray(0, prefix.length).equals(prefix)) continue;
          const sub = decodeSubscription(e.value.value);
          context.forward(
            new Record(
              s.leftKey.deserialize(`${names.registrationTopic}-pk`, sub.primaryKey) as K,
              {
                bytes: encodeResponse({ hash: sub.hash, foreignValue }),
                primaryPartition: sub.primaryPartition,
              },
              Math.max(r.timestamp, e.value.timestamp),
              r.headers,
            ),
          );
        }
      },
    };
  };
}

/** Joins a response with the left row if it was computed for its current value (Kafka's ResponseJoinProcessor). */
function resolverSupplier<K, V, VO, VR>(
  leftGetter: NonNullable<KTable<K, V>['valueGetter']>,
  joiner: Joiner<K, V, VO, VR>,
  leftJoin: boolean,
  serdes: JoinSerdes,
  names: Names,
) {
  return (): Processor<K, Buffer, K, VR | null> => {
    let context: ProcessorContext<K, VR | null>;
    let get: (key: K) => ValueAndTimestamp<V> | null;
    let s: ReturnType<typeof resolved>;
    return {
      init(c) {
        context = c;
        s = resolved(serdes, c as ProcessorContext<unknown, unknown>);
        get = leftGetter.init(c as ProcessorContext<unknown, unknown>);
      },
      process(r) {
        const key = r.key;
        if (key === null || key === undefined || r.value === null) return;
        const response = decodeResponse(r.value);
        const current = get(key);
        const currentBytes =
          current === null ? null : s.leftValue.serialize(`${names.registrationTopic}-vh`, current.value);
        // A response to an earlier value of the row (its foreign key may have changed since): dropped.
        if (!sameHash(response.hash, valueHash(currentBytes))) return;
        const foreign =
          response.foreignValue === null
            ? null
            : (s.rightValue.deserialize(names.responseTopic, response.foreignValue) as VO);
        const result =
          current === null || (foreign === null && !leftJoin) ? null : joiner(current.value, foreign, key);
        context.forward(new Record(key, result, r.timestamp, r.headers));
      },
    };
  };
}

/** The result table's node when it has no store: each result as a change without its old value. */
function unmaterializedResultSupplier<K, VR>() {
  return (): Processor<K, VR | null, K, Change<VR>> => {
    let context: ProcessorContext<K, Change<VR>>;
    return {
      init(c) {
        context = c;
      },
      process(r) {
        context.forward(r.withValue(new Change<VR>(r.value ?? null, null)));
      },
    };
  };
}
