// `npm run bench -- codec-messages [options]` (once registered in bench/main.ts): what the generated codecs
// cost on the produce and fetch paths, as MB/s of frame bytes and as a ratio to a memcpy (Buffer.copy) of the
// same bytes measured in the same run.
//
// Measured, each over one frame body built from --topics x --partitions partitions:
//   produce-request   v9 (flexible), each partition carrying a --batch-kib record blob: what the broker decodes
//   produce-response  v9, one result per partition: what the broker encodes
//   fetch-request     v13 (topic ids), no records: what the broker decodes on every consumer poll
//   fetch-response    v12, each partition carrying a --batch-kib blob: what the broker encodes
// For each: decode (Reader over the frame) and encode (Writer; record blobs are attached by reference, so the
// encoder's output is a chunk list as a socket would write it). Record blobs are never copied or parsed by
// these codecs, so with large blobs the ratio to memcpy can exceed 1: the codec touches only the framing.

import { parseArgs } from 'node:util';
import {
  decodeProduceRequest,
  decodeProduceResponse,
  encodeProduceRequest,
  encodeProduceResponse,
  type ProduceRequest,
  type ProduceResponse,
} from '../../src/protocol/messages/00-produce.js';
import {
  decodeFetchRequest,
  decodeFetchResponse,
  encodeFetchRequest,
  encodeFetchResponse,
  type FetchRequest,
  type FetchResponse,
} from '../../src/protocol/messages/01-fetch.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import {
  positiveInteger,
  ratioOfSummaries,
  repeat,
  type Summary,
  stepThroughput,
  summarize,
} from '../harness/index.js';
import { ResultWriter } from '../harness/results.js';
import { formatSummaryRange, formatTable } from '../harness/table.js';

const usage = `usage: npm run bench -- codec-messages [options]
  --quick              0.3 s per repetition instead of 1 s
  --topics N           topics per message (default 4)
  --partitions N       partitions per topic (default 16)
  --batch-kib N        record blob per partition in produce requests and fetch responses (default 16)
  --repetitions N      at least 3 (default 3)
  --results-dir DIR    where the result file goes (default bench/results)`;

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

function topicId(t: number): string {
  const bytes = Buffer.alloc(16, t + 1);
  return bytes.toString('base64url');
}

function produceRequest(topics: number, partitions: number, blob: Buffer): ProduceRequest {
  return {
    transactionalId: null,
    acks: -1,
    timeoutMs: 30000,
    topicData: Array.from({ length: topics }, (_, t) => ({
      name: `topic-${t}`,
      partitionData: Array.from({ length: partitions }, (_, p) => ({ index: p, records: blob })),
    })),
  };
}

function produceResponse(topics: number, partitions: number): ProduceResponse {
  return {
    responses: Array.from({ length: topics }, (_, t) => ({
      name: `topic-${t}`,
      partitionResponses: Array.from({ length: partitions }, (_, p) => ({
        index: p,
        errorCode: 0,
        baseOffset: BigInt(p * 1000),
        logAppendTimeMs: -1n,
        logStartOffset: 0n,
        recordErrors: [],
        errorMessage: null,
        currentLeader: { leaderId: -1, leaderEpoch: -1 },
      })),
    })),
    throttleTimeMs: 0,
    nodeEndpoints: [],
  };
}

function fetchRequest(topics: number, partitions: number): FetchRequest {
  return {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: 500,
    minBytes: 1,
    maxBytes: 52428800,
    isolationLevel: 1,
    sessionId: 0,
    sessionEpoch: -1,
    topics: Array.from({ length: topics }, (_, t) => ({
      topic: '',
      topicId: topicId(t),
      partitions: Array.from({ length: partitions }, (_, p) => ({
        partition: p,
        currentLeaderEpoch: 3,
        fetchOffset: BigInt(p * 1000),
        lastFetchedEpoch: -1,
        logStartOffset: -1n,
        partitionMaxBytes: 1048576,
        replicaDirectoryId: ZERO_UUID,
      })),
    })),
    forgottenTopicsData: [],
    rackId: '',
  };
}

function fetchResponse(topics: number, partitions: number, blob: Buffer): FetchResponse {
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId: 0,
    responses: Array.from({ length: topics }, (_, t) => ({
      topic: `topic-${t}`,
      topicId: ZERO_UUID,
      partitions: Array.from({ length: partitions }, (_, p) => ({
        partitionIndex: p,
        errorCode: 0,
        highWatermark: 100000n,
        lastStableOffset: 100000n,
        logStartOffset: 0n,
        divergingEpoch: { epoch: -1, endOffset: -1n },
        currentLeader: { leaderId: -1, leaderEpoch: -1 },
        snapshotId: { endOffset: -1n, epoch: -1 },
        abortedTransactions: null,
        preferredReadReplica: -1,
        records: blob,
      })),
    })),
    nodeEndpoints: [],
  };
}

interface Case {
  readonly name: string;
  readonly version: number;
  readonly value: unknown;
  readonly encode: (w: Writer, version: number, value: never) => void;
  readonly decode: (r: Reader, version: number) => unknown;
}

function encoded(c: Case): Buffer {
  const w = new Writer();
  c.encode(w, c.version, c.value as never);
  return w.toBuffer();
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      quick: { type: 'boolean', default: false },
      topics: { type: 'string', default: '4' },
      partitions: { type: 'string', default: '16' },
      'batch-kib': { type: 'string', default: '16' },
      repetitions: { type: 'string', default: '3' },
      'results-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  const durationMs = values.quick ? 300 : 1000;
  const topics = positiveInteger('--topics', values.topics);
  const partitions = positiveInteger('--partitions', values.partitions);
  const blobBytes = positiveInteger('--batch-kib', values['batch-kib']) * 1024;
  const repetitions = positiveInteger('--repetitions', values.repetitions);
  const writer = new ResultWriter({ bench: 'codec-messages', args, dir: values['results-dir'] });
  const blob = Buffer.alloc(blobBytes, 0x5a);

  const cases: Case[] = [
    {
      name: 'produce-request',
      version: 9,
      value: produceRequest(topics, partitions, blob),
      encode: encodeProduceRequest,
      decode: decodeProduceRequest,
    },
    {
      name: 'produce-response',
      version: 9,
      value: produceResponse(topics, partitions),
      encode: encodeProduceResponse,
      decode: decodeProduceResponse,
    },
    {
      name: 'fetch-request',
      version: 13,
      value: fetchRequest(topics, partitions),
      encode: encodeFetchRequest,
      decode: decodeFetchRequest,
    },
    {
      name: 'fetch-response',
      version: 12,
      value: fetchResponse(topics, partitions, blob),
      encode: encodeFetchResponse,
      decode: decodeFetchResponse,
    },
  ];

  const rows: string[][] = [];
  for (const c of cases) {
    const frame = encoded(c);
    const target = Buffer.allocUnsafe(frame.length);
    const measure = async (step: () => void): Promise<Summary> =>
      summarize(await repeat(repetitions, async () => stepThroughput(durationMs, frame.length, step)));
    const memcpy = await measure(() => {
      frame.copy(target);
    });
    const decode = await measure(() => {
      c.decode(new Reader(frame), c.version);
    });
    const encode = await measure(() => {
      const w = new Writer();
      c.encode(w, c.version, c.value as never);
      w.chunksOut();
    });
    const details = { frameBytes: frame.length, topics, partitions, blobBytes };
    writer.figure(`${c.name}/memcpy`, 'MB/s', memcpy, details);
    for (const [step, summary] of [
      ['decode', decode],
      ['encode', encode],
    ] as const) {
      const r = ratioOfSummaries(summary, memcpy);
      writer.figure(`${c.name}/${step}`, 'MB/s', summary, details);
      writer.write(`${c.name}/${step}/memcpy`, { ...r });
      rows.push([
        `${c.name} ${step}`,
        String(frame.length),
        formatSummaryRange(summary),
        formatSummaryRange(r),
      ]);
    }
  }
  console.log(
    `${topics} topics x ${partitions} partitions, ${blobBytes / 1024} KiB record blobs; ` +
      `median (min-max) of ${repetitions}`,
  );
  console.log(formatTable(['step', 'frame bytes', 'MB/s', 'ratio to memcpy'], rows));
  console.log(`results: ${writer.path}`);
}
