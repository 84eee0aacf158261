// Partitioners: which partition a record without an explicit partition goes to.
//
// - default: records with a key go to murmur2(key) & 0x7fffffff % partitions, the Java client's formula, so a
//   key lands on the same partition whichever of Java, librdkafka (murmur2_random) or this client produced it;
//   records without a key stick to one partition until its batch is closed, then move on (KIP-480's sticky
//   partitioner), which fills batches instead of spreading small ones.
// - murmur2: the key hash for keyed records, random for null keys (librdkafka's murmur2_random).
// - round-robin, random, or a custom function.

/** A custom partitioner: the partition for a record of a topic with `partitionCount` partitions. */
export type PartitionerFn = (args: { topic: string; key: Buffer | null; partitionCount: number }) => number;

/** The built-in partitioners. */
export type PartitionerName = 'default' | 'murmur2' | 'round-robin' | 'random';

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2) as a signed 32-bit integer. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (SEED ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest > 0) {
    // Java's fall-through switch: case 3 adds byte 2, case 2 byte 1, case 1 byte 0 and the multiply.
    if (rest === 3) h ^= data[tail + 2]! << 16;
    if (rest >= 2) h ^= data[tail + 1]! << 8;
    h ^= data[tail]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition the Java client picks for a key. */
export function keyPartition(key: Uint8Array, partitionCount: number): number {
  return (murmur2(key) & 0x7fffffff) % partitionCount;
}

/**
 * A partition chooser for one producer. `onBatchClosed` tells the sticky logic that the batch of its current
 * partition was closed (full or sent), so the next null-key record moves to another partition.
 */
export interface Partitioner {
  partition(topic: string, key: Buffer | null, partitionCount: number): number;
  onBatchClosed(topic: string, partition: number): void;
}

function randomPartition(count: number): number {
  return Math.floor(Math.random() * count);
}

class DefaultPartitioner implements Partitioner {
  /** topic -> [sticky partition, partition count when chosen]. */
  private readonly sticky = new Map<string, { partition: number; count: number }>();
  constructor(private readonly stickyNullKeys: boolean) {}

  partition(topic: string, key: Buffer | null, partitionCount: number): number {
    if (key !== null) return keyPartition(key, partitionCount);
    if (!this.stickyNullKeys) return randomPartition(partitionCount);
    const s = this.sticky.get(topic);
    if (s !== undefined && s.count === partitionCount) return s.partition;
    const partition = randomPartition(partitionCount);
    this.sticky.set(topic, { partition, count: partitionCount });
    return partition;
  }

  onBatchClosed(topic: string, partition: number): void {
    const s = this.sticky.get(topic);
    if (s === undefined || s.partition !== partition) return;
    // Move to a different partition when there is one (KIP-480).
    const next = s.count > 1 ? (partition + 1 + randomPartition(s.count - 1)) % s.count : partition;
    this.sticky.set(topic, { partition: next, count: s.count });
  }
}

class RoundRobinPartitioner implements Partitioner {
  private readonly counters = new Map<string, number>();
  partition(topic: string, _key: Buffer | null, partitionCount: number): number {
    const n = this.counters.get(topic) ?? 0;
    this.counters.set(topic, n + 1);
    return n % partitionCount;
  }
  onBatchClosed(): void {}
}

class RandomPartitioner implements Partitioner {
  partition(_topic: string, _key: Buffer | null, partitionCount: number): number {
    return randomPartition(partitionCount);
  }
  onBatchClosed(): void {}
}

class CustomPartitioner implements Partitioner {
  constructor(private readonly fn: PartitionerFn) {}
  partition(topic: string, key: Buffer | null, partitionCount: number): number {
    const p = this.fn({ topic, key, partitionCount });
    if (!Number.isInteger(p) || p < 0 || p >= partitionCount) {
      throw new RangeError(`custom partitioner returned ${p} for ${partitionCount} partitions of ${topic}`);
    }
    return p;
  }
  onBatchClosed(): void {}
}

/**
 * The partitioner for a name (`default` is Kafka's sticky partitioner with murmur2 for keyed records) or a
 * custom function.
 */
export function createPartitioner(choice: PartitionerName | PartitionerFn = 'default'): Partitioner {
  if (typeof choice === 'function') return new CustomPartitioner(choice);
  switch (choice) {
    case 'default':
      return new DefaultPartitioner(true);
    case 'murmur2':
      return new DefaultPartitioner(false);
    case 'round-robin':
      return new RoundRobinPartitioner();
    case 'random':
      return new RandomPartitioner();
  }
}
