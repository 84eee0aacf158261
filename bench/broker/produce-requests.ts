// Pre-encoded Produce requests for generator G1: record batches v2 with null keys and no producer id, built once
// before a run so that the generator spends its time on the wire and not on encoding. The broker under test still
// does all of its work (framing, decoding, CRC, append; with a codec, decompressing and walking every record).
// Uncompressed batches carry random payloads; compressed ones carry word text (harness/word-payloads.ts), which
// compresses as log lines do, since random bytes would leave a codec nothing to do but copy.
//
// Shape: the partitions are cut into groups of `partitionsPerRequest` consecutive partitions; a request carries
// one batch of about `batchBytes` for each partition of one group, as a Java producer's request carries the
// ready batches of several partitions of one broker. `variants` distinct requests are built per group (fresh
// random bytes each), so that the broker does not see the same bytes twice in a row.
import { randomBytes } from 'node:crypto';
import { assert } from '../../src/common/assert.js';
import { CompressionType } from '../../src/protocol/compression/compression-type.js';
import { encodeProduceRequest, type ProduceRequest } from '../../src/protocol/messages/00-produce.js';
import { Writer } from '../../src/protocol/primitives/index.js';
import { buildBatch, estimateRecordBytes } from '../../src/protocol/records/index.js';
import { wordPayload } from '../harness/word-payloads.js';

/** v2 batch header bytes (baseOffset through recordsCount). */
export const batchHeaderBytes = 61;
/** Bound on what one run pre-encodes, so a mistaken option cannot eat the machine's memory. */
const preEncodedBytesMax = 256 * 1024 * 1024;

export interface ProduceShape {
  topic: string;
  partitions: number;
  recordBytes: number;
  /** Target size of one batch (the producer's batch.size); batches never exceed it. */
  batchBytes: number;
  partitionsPerRequest: number;
  /** 1 or -1 (all); 0 is not used, since the generator measures acknowledgements. */
  acks: number;
  timeoutMs: number;
  variants: number;
  /** Kafka's codec id for every batch (CompressionType); none when absent. */
  compression?: number;
}

export interface PreEncodedRequest {
  /** The request body (no header), shared by every send of this request. */
  body: Buffer;
  /** Partitions it carries a batch for, in the order of the body. */
  partitions: readonly number[];
  recordsPerBatch: number;
  records: number;
  /** Record values only: what kafka-producer-perf-test counts as payload. */
  payloadBytes: number;
  /** Record batch bytes (headers included; compressed when the shape has a codec). */
  batchBytes: number;
}

/** Records that fit in one batch of at most `batchBytes`. */
export function recordsPerBatch(recordBytes: number, batchBytes: number): number {
  const perRecord = estimateRecordBytes({ value: Buffer.alloc(recordBytes) });
  return Math.max(1, Math.floor((batchBytes - batchHeaderBytes) / perRecord));
}

/** Requests by group, then variant: `requests[group][variant]`. */
export function buildProduceRequests(shape: ProduceShape, produceVersion: number): PreEncodedRequest[][] {
  assert(produceVersion >= 3, 'record batches v2 need Produce v3 or later');
  assert(shape.partitions >= 1 && shape.partitionsPerRequest >= 1, 'need at least one partition per request');
  const perBatch = recordsPerBatch(shape.recordBytes, shape.batchBytes);
  const groups = Math.ceil(shape.partitions / shape.partitionsPerRequest);
  const total = groups * shape.variants * shape.partitionsPerRequest * perBatch * shape.recordBytes;
  assert(total <= preEncodedBytesMax, `pre-encoded requests would take ${total} bytes`);
  const out: PreEncodedRequest[][] = [];
  for (let group = 0; group < groups; group++) {
    const first = group * shape.partitionsPerRequest;
    const partitions: number[] = [];
    for (let p = first; p < Math.min(first + shape.partitionsPerRequest, shape.partitions); p++)
      partitions.push(p);
    const variants: PreEncodedRequest[] = [];
    for (let v = 0; v < shape.variants; v++)
      variants.push(buildRequest(shape, produceVersion, partitions, perBatch));
    out.push(variants);
  }
  return out;
}

function buildRequest(
  shape: ProduceShape,
  produceVersion: number,
  partitions: readonly number[],
  perBatch: number,
): PreEncodedRequest {
  let batchBytes = 0;
  const partitionData = partitions.map((index) => {
    const compression = shape.compression ?? CompressionType.None;
    const payload =
      compression === CompressionType.None ? randomBytes(perBatch * shape.recordBytes) : undefined;
    const records = [];
    for (let i = 0; i < perBatch; i++) {
      records.push({
        key: null,
        value:
          payload?.subarray(i * shape.recordBytes, (i + 1) * shape.recordBytes) ??
          wordPayload(shape.recordBytes),
      });
    }
    const batch = buildBatch(records, { compression });
    assert(batch.length <= shape.batchBytes, `batch of ${batch.length} bytes over ${shape.batchBytes}`);
    batchBytes += batch.length;
    return { index, records: batch };
  });
  const request: ProduceRequest = {
    transactionalId: null,
    acks: shape.acks,
    timeoutMs: shape.timeoutMs,
    topicData: [{ name: shape.topic, partitionData }],
  };
  const w = new Writer();
  encodeProduceRequest(w, produceVersion, request);
  const records = perBatch * partitions.length;
  return {
    body: w.toBuffer(),
    partitions,
    recordsPerBatch: perBatch,
    records,
    payloadBytes: records * shape.recordBytes,
    batchBytes,
  };
}
