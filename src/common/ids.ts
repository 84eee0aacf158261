// Branded identifiers, so that an offset cannot be passed where a leader epoch is expected.
//
// Representation of 64-bit values, chosen once for the whole codebase:
// - At the wire (generated codecs, record batch headers) int64 fields are `bigint`, exactly as Kafka sends them.
// - Inside the broker and the storage engine, offsets, producer ids and timestamps are `number`, checked to be
//   safe integers when they cross from the wire (toOffset and friends). 2^53 offsets is far beyond what a
//   partition reaches, and numbers keep the hot path free of bigint allocation.

import { assert } from './assert.js';

declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type Offset = Brand<number, 'Offset'>;
export type LeaderEpoch = Brand<number, 'LeaderEpoch'>;
export type BrokerId = Brand<number, 'BrokerId'>;
export type PartitionId = Brand<number, 'PartitionId'>;
export type ProducerId = Brand<number, 'ProducerId'>;
export type ProducerEpoch = Brand<number, 'ProducerEpoch'>;
export type TimestampMs = Brand<number, 'TimestampMs'>;

/** Kafka uses -1 for "no producer", "no leader epoch", "no timestamp". */
export const NO_PRODUCER_ID = -1 as ProducerId;
export const NO_PRODUCER_EPOCH = -1 as ProducerEpoch;
export const NO_LEADER_EPOCH = -1 as LeaderEpoch;
export const NO_TIMESTAMP = -1 as TimestampMs;
/** Kafka's -1 for "no broker": no leader known, no controller. */
export const NO_BROKER_ID = -1 as BrokerId;

function checkedNumber(value: bigint | number, what: string): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  assert(Number.isSafeInteger(n), `${what} ${String(value)} is not a safe integer`);
  return n;
}

export function toOffset(value: bigint | number): Offset {
  return checkedNumber(value, 'offset') as Offset;
}

/** The lower of two offsets, still an offset (Math.min answers a plain number). */
export function minOffset(a: Offset, b: Offset): Offset {
  return a <= b ? a : b;
}

export function toProducerId(value: bigint | number): ProducerId {
  return checkedNumber(value, 'producer id') as ProducerId;
}

export function toTimestamp(value: bigint | number): TimestampMs {
  return checkedNumber(value, 'timestamp') as TimestampMs;
}

/** A producer epoch (int16): -1 for none, at most 32767 (past it a producer needs a new producer id). */
export function toProducerEpoch(value: number): ProducerEpoch {
  assert(Number.isInteger(value) && value >= -1 && value <= 0x7fff, `bad producer epoch ${value}`);
  return value as ProducerEpoch;
}

export function toLeaderEpoch(value: number): LeaderEpoch {
  assert(Number.isInteger(value) && value >= -1 && value <= 0x7fffffff, `bad leader epoch ${value}`);
  return value as LeaderEpoch;
}

export function toBrokerId(value: number): BrokerId {
  assert(Number.isInteger(value) && value >= -1 && value <= 0x7fffffff, `bad broker id ${value}`);
  return value as BrokerId;
}

/**
 * Broker ids as a request carries them (replica sets, ISRs), branded without a copy: the lists come from the
 * controller, which only ever names registered brokers.
 */
export function asBrokerIds(ids: readonly number[]): readonly BrokerId[] {
  return ids as readonly BrokerId[];
}

export function toPartitionId(value: number): PartitionId {
  assert(Number.isInteger(value) && value >= 0 && value <= 0x7fffffff, `bad partition id ${value}`);
  return value as PartitionId;
}
