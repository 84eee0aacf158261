// A TCP proxy in front of one broker process, for producer tests that need the network to misbehave on cue. It
// forwards whole frames each way and decodes Produce requests (partition, producer id, epoch, sequence and values
// of each batch). It can hold the next Produce request of a chosen partition without forwarding it (the broker
// never sees it) or forward it and withhold the broker's answer (the broker appended it); either way the test later
// answers it with an error code of its choosing (0 with an offset: a success the broker never recorded). It can
// also hide a partition's leader in Metadata responses (leader -1, LEADER_NOT_AVAILABLE), so that the client's
// batches for it wait in its accumulator.

import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  decodeRequestHeader,
  decodeResponseHeader,
  encodeResponseHeader,
} from '../../src/protocol/headers.js';
import type { ProduceRequest, ProduceResponse } from '../../src/protocol/messages/00-produce.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from './broker-process.js';
import { FrameSplitter } from './frame-splitter.js';
import { createTopic, WireClient } from './wire-client.js';

/** One batch of a Produce request that reached the broker, in the order they reached it. */
export interface SeenBatch {
  topic: string;
  partition: number;
  producerId: number;
  epoch: number;
  baseSequence: number;
  /** The codec of its records (batch attributes, low 3 bits: 0 none). */
  compression: number;
  transactional: boolean;
  /** The records' keys as text (null for a record without one). */
  keys: (string | null)[];
  values: string[];
}

export interface Held {
  /** Resolves once the request is held (and, for a forwarded one, once the broker has answered it). */
  caught: Promise<void>;
  /** Answers the held request with `errorCode` for each of its partitions (and `baseOffset`, for a success). */
  answer(errorCode: number, baseOffset?: bigint): void;
}

interface HeldRequest {
  client: net.Socket;
  version: number;
  correlationId: number;
  request: ProduceRequest;
}

/** The batches of a Produce request, with the producer fields of each. */
export function batchesOf(request: ProduceRequest): SeenBatch[] {
  const out: SeenBatch[] = [];
  for (const t of request.topicData) {
    for (const p of t.partitionData) {
      const records = p.records!;
      out.push({
        topic: t.name,
        partition: p.index,
        producerId: batchHeader.producerId(records, 0),
        epoch: batchHeader.producerEpoch(records, 0),
        baseSequence: batchHeader.baseSequence(records, 0),
        compression: batchHeader.attributes(records, 0) & 0x07,
        transactional: batchHeader.isTransactional(records, 0),
        keys: [...readRecords(records, 0)].map((r) => r.key?.toString() ?? null),
        values: [...readRecords(records, 0)].map((r) => r.value!.toString()),
      });
    }
  }
  return out;
}

/** Frames a response body written by `body` after the header of `apiKey` at `version`. */
function responseFrame(apiKey: number, version: number, correlationId: number, body: unknown): Buffer {
  const w = new Writer();
  w.int32(0);
  encodeResponseHeader(w, apiKey, version, correlationId);
  getApi(apiKey).encodeResponse(w, version, body);
  const out = w.toBuffer();
  out.writeInt32BE(out.length - 4, 0);
  return out;
}

/** A Produce response answering every partition of `request` with `errorCode` (and `baseOffset`, for a success). */
export function produceAnswer(request: ProduceRequest, errorCode: number, baseOffset = -1n): ProduceResponse {
  return {
    responses: request.topicData.map((t) => ({
      name: t.name,
      partitionResponses: t.partitionData.map((p) => ({
        index: p.index,
        errorCode,
        baseOffset,
        logAppendTimeMs: -1n,
        logStartOffset: -1n,
        recordErrors: [],
        errorMessage: null,
        currentLeader: { leaderId: -1, leaderEpoch: -1 },
      })),
    })),
    throttleTimeMs: 0,
    nodeEndpoints: [],
  };
}

export async function startProduceProxy() {
  let upstreamPort = 0;
  /** Batches forwarded to the broker, in order. */
  const forwarded: SeenBatch[] = [];
  let hold: { partition: number; forward: boolean; onCaught: () => void; held: HeldRequest | null } | null =
    null;
  /** "topic/partition" whose leader Metadata responses hide. */
  const hiddenLeaders = new Set<string>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    /** Correlation ids whose broker answer is withheld, and what to do when it comes. */
    const withheld = new Map<number, () => void>();
    /** Metadata requests forwarded, by correlation id: their version, to rewrite the answer. */
    const metadataVersions = new Map<number, number>();
    const fromClient = new FrameSplitter({ sizePrefix: 'keep' });
    client.on('data', (d: Buffer) => {
      fromClient.push(d);
      for (const whole of fromClient.frames()) {
        const frame = Buffer.from(whole);
        const r = new Reader(frame.subarray(4));
        const { header } = decodeRequestHeader(r);
        if (header.requestApiKey === ApiKey.METADATA) {
          metadataVersions.set(header.correlationId, header.requestApiVersion);
        } else if (header.requestApiKey === ApiKey.PRODUCE) {
          const request = getApi(ApiKey.PRODUCE).decodeRequest(r, header.requestApiVersion) as ProduceRequest;
          const batches = batchesOf(request);
          const h = hold;
          if (h !== null && batches.some((b) => b.partition === h.partition)) {
            hold = null;
            h.held = {
              client,
              version: header.requestApiVersion,
              correlationId: header.correlationId,
              request,
            };
            if (!h.forward) {
              h.onCaught();
              continue;
            }
            withheld.set(header.correlationId, h.onCaught);
          }
          forwarded.push(...batches);
        }
        upstream.write(frame);
      }
    });
    const fromBroker = new FrameSplitter({ sizePrefix: 'keep' });
    upstream.on('data', (d: Buffer) => {
      fromBroker.push(d);
      for (const frame of fromBroker.frames()) {
        const correlationId = frame.readInt32BE(4);
        const metadataVersion = metadataVersions.get(correlationId);
        const onWithheld = withheld.get(correlationId);
        if (metadataVersion !== undefined) {
          metadataVersions.delete(correlationId);
          client.write(hideLeaders(frame, metadataVersion, correlationId));
        } else if (onWithheld === undefined) {
          client.write(frame);
        } else {
          withheld.delete(correlationId);
          onWithheld();
        }
      }
    });
  });

  function hideLeaders(frame: Buffer, version: number, correlationId: number): Buffer {
    if (hiddenLeaders.size === 0) return frame;
    const r = new Reader(frame.subarray(4));
    decodeResponseHeader(r, ApiKey.METADATA, version);
    const res = getApi(ApiKey.METADATA).decodeResponse(r, version) as MetadataResponse;
    for (const t of res.topics) {
      for (const p of t.partitions) {
        if (!hiddenLeaders.has(`${t.name}/${p.partitionIndex}`)) continue;
        p.leaderId = -1;
        p.errorCode = ErrorCode.LEADER_NOT_AVAILABLE;
      }
    }
    return responseFrame(ApiKey.METADATA, version, correlationId, res);
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    forwarded,
    setUpstream(port: number): void {
      upstreamPort = port;
    },
    /** Metadata responses from now on say that the partition has no leader (or, with false, pass it on). */
    hideLeader(topic: string, partition: number, hidden = true): void {
      if (hidden) hiddenLeaders.add(`${topic}/${partition}`);
      else hiddenLeaders.delete(`${topic}/${partition}`);
    },
    /**
     * Holds the next Produce request with a batch for `partition`: `forward` sends it on to the broker (which
     * appends it) but withholds the answer; otherwise the broker never sees it.
     */
    holdNext(partition: number, forward: boolean): Held {
      let onCaught!: () => void;
      const caught = new Promise<void>((r) => (onCaught = r));
      const h = { partition, forward, onCaught, held: null as HeldRequest | null };
      hold = h;
      return {
        caught,
        answer(errorCode: number, baseOffset = -1n): void {
          const held = h.held!;
          held.client.write(
            responseFrame(
              ApiKey.PRODUCE,
              held.version,
              held.correlationId,
              produceAnswer(held.request, errorCode, baseOffset),
            ),
          );
        },
      };
    },
    async close(): Promise<void> {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

export type ProduceProxy = Awaited<ReturnType<typeof startProduceProxy>>;

/** A broker process that advertises the proxy, so that clients bootstrapped through it stay behind it. */
export async function brokerBehind(
  proxy: ProduceProxy,
  overrides: Record<string, string | number | boolean> = {},
): Promise<BrokerProcess> {
  const broker = await startBroker({
    overrides: { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxy.port}`, ...overrides },
  });
  proxy.setUpstream(broker.port);
  return broker;
}

/** Polls `cond` every 10 ms until it holds; throws after `ms`. */
export async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** What a test body gets from withProxiedTopic. */
export interface ProxiedTopic {
  readonly proxy: ProduceProxy;
  readonly broker: BrokerProcess;
  /** A wire client connected to the broker itself (not through the proxy), to read the log back. */
  readonly wire: WireClient;
  /** Registers a client to close when the body ends (before the broker stops); answers it. */
  closing<C extends { close(timeoutMs?: number): Promise<void> }>(client: C): C;
}

/**
 * A produce proxy in front of a fresh broker that advertises it, with `topic` created with `partitions` (and topic
 * `configs`, if any); runs `body`, then always closes the clients it registered, the wire client, the broker and the
 * proxy, in that order.
 */
export async function withProxiedTopic<T>(
  topic: string,
  partitions: number,
  body: (t: ProxiedTopic) => Promise<T>,
  configs: Record<string, string> = {},
): Promise<T> {
  const proxy = await startProduceProxy();
  let broker: BrokerProcess | null = null;
  let wire: WireClient | null = null;
  const clients: { close(timeoutMs?: number): Promise<void> }[] = [];
  try {
    broker = await brokerBehind(proxy);
    wire = await WireClient.connect(broker.host, broker.port);
    await createTopic(wire, topic, { numPartitions: partitions, configs });
    const closing = <C extends { close(timeoutMs?: number): Promise<void> }>(client: C): C => {
      clients.push(client);
      return client;
    };
    return await body({ proxy, broker, wire, closing });
  } finally {
    for (const c of clients) await c.close(0);
    wire?.close();
    await broker?.stop();
    await proxy.close();
  }
}
