// The baseline of `mirror` and `mirror-trace`: Brook's plain consume-and-produce, as a user writes it with the
// client. One Consumer (no group) reads the topic and one Producer (acks=all) writes each record to the same
// partition of a topic on the other cluster; every poll's records go as one sendBatch() without waiting for the
// previous ones, but the records sent and not yet acknowledged are bounded in bytes by the producer's
// buffer.memory, as the Connect runtime bounds MirrorMaker's (it waits for the acknowledgements until half of it is
// left). Without that bound (before 2026-12-03 evening) the loop read the whole topic ahead of the target and kept
// every batch's metadata until the end: at 1,000,000 records the process held about 1 GB and spent 5.9 us of CPU
// per record against 3.4 at 200,000, so the baseline slowed down with the copy's size.

import { Consumer, Producer } from '../../src/client/index.js';

/** The producer's default buffer.memory, which bounds the unacknowledged bytes here as in the Connect runtime. */
const BUFFER_MEMORY_BYTES = 32 * 1024 * 1024;
/** What one record counts beyond its key and value (its batch framing, roughly; the runtime's figure). */
const RECORD_OVERHEAD_BYTES = 64;

export interface PlainCopyOptions {
  from: string;
  to: string;
  topic: string;
  partitions: number;
  target: string;
  records: number;
  /** client.id of the consumer and the producer (the trace tells their requests apart by them). */
  clientIds?: { consumer: string; producer: string };
  /** Called as the first poll with records returns: the copy's clock starts there. */
  onFirstRecords?: () => void;
}

/** Copies `records` records; returns the milliseconds from the first record read to the last acknowledged. */
export async function plainCopy(o: PlainCopyOptions): Promise<number> {
  const consumer = new Consumer({
    bootstrapServers: o.from,
    clientId: o.clientIds?.consumer,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const producer = new Producer({ bootstrapServers: o.to, clientId: o.clientIds?.producer, acks: 'all' });
  consumer.assign(Array.from({ length: o.partitions }, (_, partition) => ({ topic: o.topic, partition })));
  let copied = 0;
  let first = 0;
  // Sends not yet awaited, oldest first, with their bytes; a failed send fails the copy when it is awaited.
  const inFlight: { sent: Promise<unknown>; bytes: number }[] = [];
  let outstandingBytes = 0;
  try {
    while (copied < o.records) {
      const batch = await consumer.poll(500);
      if (batch.length === 0) continue;
      if (copied === 0) {
        first = performance.now();
        o.onFirstRecords?.();
      }
      copied += batch.length;
      let bytes = 0;
      const out = batch.map((r) => {
        bytes += RECORD_OVERHEAD_BYTES + (r.key?.length ?? 0) + (r.value?.length ?? 0);
        return {
          topic: o.target,
          partition: r.partition,
          key: r.key,
          value: r.value,
          timestamp: r.timestamp,
          headers: r.headers,
        };
      });
      const sent = producer.sendBatch(out);
      sent.catch(() => {}); // handled where it is awaited; a rejection before then is not an unhandled one
      inFlight.push({ sent, bytes });
      outstandingBytes += bytes;
      if (outstandingBytes >= BUFFER_MEMORY_BYTES) {
        while (outstandingBytes > BUFFER_MEMORY_BYTES / 2) {
          const oldest = inFlight.shift()!;
          await oldest.sent;
          outstandingBytes -= oldest.bytes;
        }
      }
    }
    for (const s of inFlight) await s.sent;
    return performance.now() - first;
  } finally {
    await producer.close();
    await consumer.close();
  }
}
