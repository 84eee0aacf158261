// The message browser: reads a bounded window of a topic's records (newest first, from an offset, from a time, or
// from the start), one partition or all, with a consumer of its own that joins no group and commits nothing; and
// produces a test message. Every read stops at the end offsets seen when it began, at `limit` records a partition,
// or at its time budget, whichever comes first, so a browse of a busy or stalled partition still answers.

import type { Admin } from '../client/admin.js';
import { Consumer, type ConsumerRecord } from '../client/consumer.js';
import type { ClientOptions } from '../client/options.js';
import type { Producer } from '../client/producer.js';
import { HttpError, kafkaError } from './api-error.js';
import type { BrowseMode, BrowseResult, ProduceRequest, ProduceResult, RecordView } from './api-types.js';

/** Records one browse returns at most. */
export const BROWSE_LIMIT_MAX = 500;
/** Bytes of a value (and of a key) sent to the page; the rest is cut and the record marked truncated. */
export const SHOWN_BYTES_MAX = 64 * 1024;

export interface BrowseQuery {
  mode: BrowseMode;
  partition?: number;
  offset?: number;
  timestampMs?: number;
  limit: number;
}

function view(r: ConsumerRecord): RecordView {
  const cut = (b: Buffer | null): string | null =>
    b === null ? null : b.subarray(0, SHOWN_BYTES_MAX).toString('base64');
  return {
    partition: r.partition,
    offset: r.offset,
    timestamp: r.timestamp,
    key: cut(r.key),
    value: cut(r.value),
    headers: r.headers.map((h) => ({ key: h.key, value: cut(h.value) })),
    valueBytes: r.value?.length ?? 0,
    truncated: (r.value?.length ?? 0) > SHOWN_BYTES_MAX || (r.key?.length ?? 0) > SHOWN_BYTES_MAX,
  };
}

/** Where each partition's window starts, given the log's bounds. */
async function startOffsets(
  admin: Admin,
  topic: string,
  partitions: number[],
  query: BrowseQuery,
): Promise<{ partition: number; startOffset: number; endOffset: number }[]> {
  const tps = partitions.map((partition) => ({ topic, partition }));
  const [earliest, latest] = await Promise.all([
    admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'earliest' as const }))),
    admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const }))),
  ]);
  const byTime =
    query.mode === 'timestamp'
      ? await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: query.timestampMs! })))
      : null;
  return partitions.map((partition, i) => {
    const low = earliest[i]!.offset;
    const high = latest[i]!.offset;
    let start: number;
    if (query.mode === 'newest') start = Math.max(low, high - query.limit);
    else if (query.mode === 'oldest') start = low;
    else if (query.mode === 'offset') start = Math.min(Math.max(query.offset!, low), high);
    else start = byTime![i]!.offset < 0 ? high : Math.max(byTime![i]!.offset, low);
    return { partition, startOffset: start, endOffset: high };
  });
}

export async function browse(
  admin: Admin,
  clientOptions: ClientOptions,
  topic: string,
  query: BrowseQuery,
  budgetMs: number,
): Promise<BrowseResult> {
  const [t] = await admin.describeTopics([topic]);
  if (t === undefined || t.error !== null) {
    if (t?.error && t.error.code !== 3) throw kafkaError(t.error.code, t.error.message);
    throw new HttpError(404, `topic '${topic}' does not exist`, 'UNKNOWN_TOPIC_OR_PARTITION');
  }
  const all = t.partitions.map((p) => p.partition).sort((a, b) => a - b);
  if (query.partition !== undefined && !all.includes(query.partition)) {
    throw new HttpError(
      404,
      `topic '${topic}' has no partition ${query.partition}`,
      'UNKNOWN_TOPIC_OR_PARTITION',
    );
  }
  const windows = await startOffsets(
    admin,
    topic,
    query.partition === undefined ? all : [query.partition],
    query,
  );
  const wanted = new Map<number, { next: number; end: number; records: RecordView[] }>();
  for (const w of windows) {
    if (w.startOffset < w.endOffset)
      wanted.set(w.partition, { next: w.startOffset, end: w.endOffset, records: [] });
  }
  if (wanted.size > 0) await read(clientOptions, topic, wanted, query.limit, budgetMs);
  let records = [...wanted.values()].flatMap((w) => w.records);
  if (query.mode === 'newest') {
    records.sort((a, b) => b.timestamp - a.timestamp || b.offset - a.offset || a.partition - b.partition);
  } else {
    records.sort((a, b) => a.timestamp - b.timestamp || a.offset - b.offset || a.partition - b.partition);
  }
  records = records.slice(0, query.limit);
  return { records, partitions: windows };
}

/** Reads each wanted partition from `next` until its end, `limit` records, or the budget runs out. */
async function read(
  clientOptions: ClientOptions,
  topic: string,
  wanted: Map<number, { next: number; end: number; records: RecordView[] }>,
  limit: number,
  budgetMs: number,
): Promise<void> {
  const consumer = new Consumer({
    ...clientOptions,
    clientId: 'brook-console-browser',
    // Browsing reads topics that exist; it must not create one (deleted meanwhile) as the consumer's default would.
    allowAutoCreateTopics: false,
    maxPollRecords: BROWSE_LIMIT_MAX,
    fetchMaxWaitMs: 100,
    enableAutoCommit: false,
  });
  const stopAt = Date.now() + budgetMs;
  try {
    consumer.assign([...wanted.keys()].map((partition) => ({ topic, partition })));
    for (const [partition, w] of wanted) consumer.seek({ topic, partition }, w.next);
    const done = (): boolean =>
      [...wanted.values()].every((w) => w.next >= w.end || w.records.length >= limit);
    while (!done() && Date.now() < stopAt) {
      const batch = await consumer.poll(Math.max(1, Math.min(500, stopAt - Date.now())));
      for (const r of batch) {
        const w = wanted.get(r.partition);
        if (w === undefined || r.offset >= w.end || w.records.length >= limit) continue;
        w.records.push(view(r));
        w.next = r.offset + 1;
      }
      // The position also moves past what poll() does not return (transaction markers, aborted records), so a
      // window that ends in a marker is done when the position reaches its end, not when the budget runs out.
      for (const [partition, w] of wanted) {
        w.next = Math.max(w.next, await consumer.position({ topic, partition }));
      }
    }
  } finally {
    // A consumer without a group has nothing to commit or leave; closing only ends its connections.
    await consumer.close().catch(() => {});
  }
}

export async function produce(
  producer: Producer,
  topic: string,
  request: ProduceRequest,
): Promise<ProduceResult> {
  const meta = await producer.send({
    topic,
    ...(request.partition === undefined ? {} : { partition: request.partition }),
    key: request.key === undefined || request.key === null ? null : Buffer.from(request.key, 'utf8'),
    value: request.value === null ? null : Buffer.from(request.value, 'utf8'),
    headers: Object.entries(request.headers ?? {}).map(([key, value]) => ({ key, value })),
  });
  return { partition: meta.partition, offset: meta.offset };
}
