// The final read of a chaos run: a whole partition from offset 0 to its end (the high watermark, or the last
// stable offset under read_committed) with a fresh consumer of Brook's client, tried again for up to a minute
// while the partition has no leader right after healing. Shared by the workloads.

import { type Admin, Consumer, type IsolationLevel } from '../../src/client/index.js';
import { withTimeout } from './chaos-cluster.js';
import { errorText } from './history.js';
import { sleep } from './nodes.js';

/** A record as a reader saw it: [partition, offset, value]. */
export type Seen = [number, number, string];

export interface PartitionRead {
  partition: number;
  end: number;
  records: Seen[];
}

export const CLIENT_TIMEOUTS = { requestTimeoutMs: 5_000, connectionTimeoutMs: 3_000 };
const FINAL_READ_PATIENCE_MS = 60_000;

export async function readPartitionPatiently(
  bootstrap: string,
  topic: string,
  partition: number,
  isolationLevel: IsolationLevel,
  log: (line: string) => void,
): Promise<PartitionRead> {
  const deadline = Date.now() + FINAL_READ_PATIENCE_MS;
  for (;;) {
    try {
      return await withTimeout(readPartition(bootstrap, topic, partition, isolationLevel), 90_000);
    } catch (e) {
      if (Date.now() > deadline) throw e;
      log(`final read of ${topic}-${partition} failed, trying again: ${errorText(e)}`);
      await sleep(5_000);
    }
  }
}

async function readPartition(
  bootstrap: string,
  topic: string,
  partition: number,
  isolationLevel: IsolationLevel,
): Promise<PartitionRead> {
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    clientId: 'chaos-final',
    isolationLevel,
    ...CLIENT_TIMEOUTS,
  });
  try {
    const tp = { topic, partition };
    const [end] = await consumer.endOffsets([tp]);
    const endOffset = end?.offset ?? 0;
    consumer.assign([tp]);
    consumer.seek(tp, 0);
    const records: Seen[] = [];
    while ((await consumer.position(tp)) < endOffset) {
      for (const r of await consumer.poll(1_000)) {
        if (r.offset < endOffset) records.push([r.partition, r.offset, r.value?.toString() ?? '']);
      }
    }
    return { partition, end: endOffset, records };
  } finally {
    await consumer.close().catch(() => {});
  }
}

/**
 * Waits up to timeoutMs for the group's committed offsets to reach the end of every partition of the input topic
 * (the drain before the final reads of the transactional and Streams workloads); answers the partitions they did
 * not reach, with where the group was and the end.
 */
export async function drainGroup(
  admin: Admin,
  input: { topic: string; partitions: number },
  groupId: string,
  timeoutMs: number,
): Promise<Record<number, { polled: number; end: number }>> {
  const tps = Array.from({ length: input.partitions }, (_, partition) => ({
    topic: input.topic,
    partition,
    spec: 'latest' as const,
  }));
  const ends = await withTimeout(admin.listOffsets(tps), 10_000).catch(() => []);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const committed = await withTimeout(admin.listConsumerGroupOffsets(groupId), 10_000).catch(() => []);
    const behind: Record<number, { polled: number; end: number }> = {};
    for (const e of ends) {
      const c = committed.find((x) => x.topic === input.topic && x.partition === e.partition);
      const at = c?.offset ?? 0;
      if (at < e.offset) behind[e.partition] = { polled: at, end: e.offset };
    }
    if (Object.keys(behind).length === 0 || Date.now() > deadline) return behind;
    await sleep(1_000);
  }
}
