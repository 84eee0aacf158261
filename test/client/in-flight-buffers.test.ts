// Record-batch buffers and requests that time out. The producer sends a batch's buffer by reference (the socket
// writes it with writev, no copy), gives it back to its BufferPool once the batch has its outcome, and may rewrite
// its header in place when the broker refused a retry and the batch is renumbered under a bumped epoch (see
// producer.ts). That is safe only if a request's promise settles when nothing will read its bytes any more: its
// response came (the broker had read all of it), or its socket was destroyed first, so bytes still queued in the
// socket are dropped, never sent later with new contents.
//
// Here a peer stops reading in the middle of a large request: the request times out, the client changes the
// buffer (as a retry or the pool would), and the peer then reads everything that reaches it. A TCP proxy in front
// of a real broker does the same to the producer, and another one withholds a produce response that the broker
// did append, so the retry has to be deduplicated by its unchanged sequence number.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { test } from 'node:test';
import type { BufferPool } from '../../src/client/buffer-pool.js';
import { Connection } from '../../src/client/connection.js';
import { RequestTimeoutError } from '../../src/client/errors.js';
import { resolveClientOptions } from '../../src/client/options.js';
import { Producer, type ProducerOptions } from '../../src/client/producer.js';
import { decodeRequestHeader, encodeResponseHeader } from '../../src/protocol/headers.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { FrameSplitter } from '../helpers/frame-splitter.js';
import { createTopic, readPartition, WireClient } from '../helpers/wire-client.js';

/** Resolves when the socket has ended or closed, or after `ms` (then with false). */
function ended(socket: net.Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.readableEnded || socket.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    const done = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    socket.once('end', done);
    socket.once('close', done);
  });
}

/**
 * Request bytes sure to be more than the kernel takes from a socket whose peer does not read: mostly the sender's
 * send buffer, which grows up to tcp_wmem's maximum (4 MiB by default on Linux).
 */
function moreThanSocketBuffers(): number {
  let sendBufferMax = 4 * 1024 * 1024;
  try {
    sendBufferMax = Number(readFileSync('/proc/sys/net/ipv4/tcp_wmem', 'utf8').trim().split(/\s+/)[2]);
  } catch {
    // Not Linux: the default above.
  }
  return Math.min(256 * 1024 * 1024, Math.max(32 * 1024 * 1024, 4 * sendBufferMax));
}

test('a request that timed out sends nothing more of its buffer, whatever the client writes into it', async () => {
  const RECORDS_BYTES = moreThanSocketBuffers();
  let peer: net.Socket | null = null;
  const received: Buffer[] = [];
  const server = net.createServer((socket) => {
    peer = socket;
    socket.on('error', () => {});
    const fromClient = new FrameSplitter({ sizePrefix: 'strip' });
    let stalled = false;
    socket.on('data', (d: Buffer) => {
      if (stalled) {
        received.push(d);
        return;
      }
      fromClient.push(d);
      for (const frame of fromClient.frames()) {
        const { header } = decodeRequestHeader(new Reader(frame));
        assert.equal(header.requestApiKey, ApiKey.API_VERSIONS);
        const w = new Writer();
        w.int32(0);
        encodeResponseHeader(w, header.requestApiKey, header.requestApiVersion, header.correlationId);
        getApi(ApiKey.API_VERSIONS).encodeResponse(w, header.requestApiVersion, {
          errorCode: 0,
          apiKeys: [
            { apiKey: ApiKey.API_VERSIONS, minVersion: 0, maxVersion: 3 },
            { apiKey: ApiKey.PRODUCE, minVersion: 3, maxVersion: 11 },
          ],
          throttleTimeMs: 0,
          supportedFeatures: [],
          finalizedFeaturesEpoch: -1n,
          finalizedFeatures: [],
          zkMigrationReady: false,
        });
        const out = w.toBuffer();
        out.writeInt32BE(out.length - 4, 0);
        socket.write(out);
        // Negotiated: read nothing more, so the next request backs up in the client's socket.
        stalled = true;
        socket.pause();
        const rest = fromClient.takeBuffered();
        if (rest.length > 0) received.push(rest);
        return;
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  let c: Connection | null = null;
  try {
    c = await Connection.connect(
      '127.0.0.1',
      port,
      resolveClientOptions({ bootstrapServers: `127.0.0.1:${port}`, requestTimeoutMs: 300 }),
    );
    const records = Buffer.alloc(RECORDS_BYTES, 0x5a);
    const sent = c.request(ApiKey.PRODUCE, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 30_000,
      topicData: [{ name: 't', partitionData: [{ index: 0, records }] }],
    });
    // A retry rewriting the batch, or the pool handing the buffer to a new batch, happens once the failure is
    // seen: here, in the same turn as the rejection.
    await assert.rejects(
      sent.catch((err: unknown) => {
        records.fill(0xee);
        throw err;
      }),
      RequestTimeoutError,
    );
    assert.equal(c.isOpen, false, 'a request timeout closes the connection, as Kafka NetworkClient does');
    assert.ok(peer !== null);
    const p = peer as net.Socket;
    p.resume();
    assert.equal(await ended(p, 10_000), true, 'the peer sees the connection end');
    const all = Buffer.concat(received);
    // The request header and the produce fields before the records take well under 100 bytes.
    const HEAD = 100;
    assert.ok(all.length > HEAD + 64 * 1024, `only ${all.length} bytes reached the peer`);
    assert.equal(all.indexOf(0xee), -1, 'bytes written into the buffer after the timeout reached the peer');
    assert.ok(
      all.subarray(HEAD).equals(Buffer.alloc(all.length - HEAD, 0x5a)),
      'the records arrived unchanged',
    );
    // The rest was still queued in the client's socket when the request timed out, and was dropped with it.
    assert.ok(
      all.length < RECORDS_BYTES,
      `all ${all.length} bytes reached the peer: none was still queued in the client when the request timed out`,
    );
  } finally {
    c?.close();
    (peer as net.Socket | null)?.destroy();
    await new Promise((r) => server.close(r));
  }
});

/** One client connection through the proxy. */
interface ProxiedConnection {
  /** Whole Produce request frames forwarded to the broker, size prefix included. */
  produceFrames: Buffer[];
  /** Set when a produce was held: every byte from that request's first on, never forwarded. */
  stalled: Buffer[] | null;
  client: net.Socket;
}

/**
 * A TCP proxy in front of one broker that forwards whole frames each way. `stallProduces` holds the next that
 * many Produce requests: the proxy stops reading that connection (so the request backs up in the producer's
 * socket) until `resumeStalled()`. `dropProduceResponses` forwards the next that many Produce requests but
 * withholds their responses.
 */
async function startProxy() {
  const state = {
    upstreamPort: 0,
    stallProduces: 0,
    dropProduceResponses: 0,
    connections: [] as ProxiedConnection[],
  };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(state.upstreamPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const conn: ProxiedConnection = { produceFrames: [], stalled: null, client };
    state.connections.push(conn);
    const dropped = new Set<number>();
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => {
      if (conn.stalled === null) client.destroy();
    });
    const fromClient = new FrameSplitter({ sizePrefix: 'keep' });
    client.on('data', (d: Buffer) => {
      if (conn.stalled !== null) {
        conn.stalled.push(d);
        return;
      }
      fromClient.push(d);
      // The size prefix and the request header's api key, version and correlation id: enough to hold a Produce
      // request before all of it has arrived.
      for (let head = fromClient.peek(12); head !== null; head = fromClient.peek(12)) {
        const apiKey = head.readInt16BE(4);
        if (apiKey === ApiKey.PRODUCE && state.stallProduces > 0) {
          state.stallProduces--;
          conn.stalled = [fromClient.takeBuffered()];
          client.pause();
          return;
        }
        const whole = fromClient.next();
        if (whole === null) return;
        const frame = Buffer.from(whole);
        if (apiKey === ApiKey.PRODUCE) {
          conn.produceFrames.push(frame);
          if (state.dropProduceResponses > 0) {
            state.dropProduceResponses--;
            dropped.add(frame.readInt32BE(8));
          }
        }
        upstream.write(frame);
      }
    });
    const fromBroker = new FrameSplitter({ sizePrefix: 'keep' });
    upstream.on('data', (d: Buffer) => {
      fromBroker.push(d);
      for (const frame of fromBroker.frames()) {
        if (!dropped.delete(frame.readInt32BE(4))) client.write(frame);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    state,
    port: (server.address() as net.AddressInfo).port,
    /** Reads the held connections to their end; resolves with their bytes from the held request on. */
    async resumeStalled(): Promise<Buffer[]> {
      const held = state.connections.filter((c) => c.stalled !== null);
      for (const c of held) c.client.resume();
      await Promise.all(held.map((c) => ended(c.client, 10_000)));
      return held.map((c) => Buffer.concat(c.stalled!));
    },
    async close(): Promise<void> {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

type TestProxy = Awaited<ReturnType<typeof startProxy>>;

async function brokerBehind(proxy: TestProxy): Promise<BrokerProcess> {
  const broker = await startBroker({
    overrides: {
      'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxy.port}`,
      'message.max.bytes': 16 * 1024 * 1024,
    },
  });
  proxy.state.upstreamPort = broker.port;
  return broker;
}

/** What a test body gets from withProxiedProducer. */
interface ProxiedProducer {
  readonly proxy: TestProxy;
  /** A wire client connected to the broker itself (not through the proxy), to read the log back. */
  readonly wire: WireClient;
  /** Connected through the proxy, with the topic's metadata already fetched. */
  readonly producer: Producer;
}

/**
 * A proxy in front of a fresh broker that advertises it, `topic` created with one partition, and a producer
 * bootstrapped through the proxy with `options`; runs `body`, then always closes the producer, the wire client,
 * the broker and the proxy, in that order.
 */
async function withProxiedProducer<T>(
  topic: string,
  options: Omit<ProducerOptions, 'bootstrapServers'>,
  body: (t: ProxiedProducer) => Promise<T>,
): Promise<T> {
  const proxy = await startProxy();
  let broker: BrokerProcess | null = null;
  let wire: WireClient | null = null;
  let producer: Producer | null = null;
  try {
    broker = await brokerBehind(proxy);
    wire = await WireClient.connect(broker.host, broker.port);
    await createTopic(wire, topic, { numPartitions: 1 });
    producer = new Producer({ bootstrapServers: `127.0.0.1:${proxy.port}`, ...options });
    await producer.connect();
    await producer.cluster.refreshMetadata([topic]);
    return await body({ proxy, wire, producer });
  } finally {
    await producer?.close(0);
    wire?.close();
    await broker?.stop();
    await proxy.close();
  }
}

function values(count: number, bytes: number, first: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => Buffer.alloc(bytes, (first + i) & 0xff));
}

test('a produce held past request.timeout.ms is retried on a new connection; its buffer is reused only after', async () => {
  const options = {
    batchSize: 8 * 1024 * 1024,
    maxRequestSize: 8 * 1024 * 1024,
    // The pool keeps spares up to a quarter of buffer.memory: room for this batch's 8 MiB buffer.
    bufferMemory: 64 * 1024 * 1024,
    lingerMs: 20,
    requestTimeoutMs: 1_500,
    retryBackoffMs: 50,
    retryBackoffMaxMs: 200,
  };
  await withProxiedProducer('held', options, async ({ proxy, wire, producer }) => {
    // Which buffers the pool hands out, and when they come back.
    const pool = (producer as unknown as { accumulator: { bufferPool: BufferPool } }).accumulator.bufferPool;
    const taken: ArrayBufferLike[] = [];
    const take = pool.take.bind(pool);
    pool.take = (bytes: number) => {
      const b = take(bytes);
      taken.push(b.buffer);
      return b;
    };

    proxy.state.stallProduces = 1;
    // 7 MiB: more than loopback TCP buffers took here (about 4 MB), so part of it is still queued in the
    // producer's socket when it times out.
    const first = values(112, 64 * 1024, 1);
    const firstSent = await Promise.all(first.map((value) => producer.send({ topic: 'held', value })));
    assert.deepEqual(
      firstSent.map((m) => m.offset),
      first.map((_, i) => i),
    );
    const second = values(112, 64 * 1024, 121);
    const secondSent = await Promise.all(second.map((value) => producer.send({ topic: 'held', value })));
    assert.deepEqual(
      secondSent.map((m) => m.offset),
      second.map((_, i) => 112 + i),
    );
    assert.equal(taken.length, 2);
    assert.ok(taken[1] === taken[0], 'the second batch reused the first batch buffer from the pool');

    // The held connection, read now that its batch buffer holds the second batch's records: whatever of the first
    // request left the producer before the timeout must be the first request's bytes, and nothing after them.
    const held = await proxy.resumeStalled();
    assert.equal(held.length, 1);
    const stalled = held[0]!;
    const retried = proxy.state.connections.find((c) => c.stalled === null && c.produceFrames.length > 0);
    assert.ok(retried !== undefined, 'the retry went on another connection');
    const original = retried.produceFrames[0]!;
    assert.ok(stalled.length > 64 * 1024, `only ${stalled.length} bytes of the held request arrived`);
    assert.ok(
      stalled.length <= original.length,
      `${stalled.length} bytes arrived for a ${original.length}-byte request`,
    );
    // Same bytes but the correlation id (bytes 8-11): same producer id and sequence, same records.
    assert.ok(
      stalled.subarray(0, 8).equals(original.subarray(0, 8)),
      'the held request began as the retry did',
    );
    assert.ok(
      stalled.subarray(12).equals(original.subarray(12, stalled.length)),
      'bytes of the held request differ from the retry: the buffer changed while the request still held it',
    );

    const log = await readPartition(wire, 'held', 0);
    assert.deepEqual(
      log.map((r) => r.value![0]),
      [...first, ...second].map((v) => v[0]),
    );
  });
});

test('a produce the broker appended but whose answer never came is retried with the same sequence: one copy', async () => {
  const options = { lingerMs: 5, requestTimeoutMs: 1_000, retryBackoffMs: 50, retryBackoffMaxMs: 200 };
  await withProxiedProducer('unanswered', options, async ({ proxy, wire, producer }) => {
    proxy.state.dropProduceResponses = 1;
    const first = values(20, 100, 1);
    const sent = await Promise.all(first.map((value) => producer.send({ topic: 'unanswered', value })));
    assert.deepEqual(
      sent.map((m) => m.offset),
      first.map((_, i) => i),
    );
    const frames = proxy.state.connections.flatMap((c) => c.produceFrames);
    assert.equal(frames.length, 2, 'the batch went twice: once unanswered, once retried');
    // Both requests the same but for the correlation id (bytes 8-11): producer id, epoch, base sequence, CRC.
    assert.ok(frames[0]!.subarray(0, 8).equals(frames[1]!.subarray(0, 8)));
    assert.ok(frames[0]!.subarray(12).equals(frames[1]!.subarray(12)), 'the retry carries the same batch');
    await producer.send({ topic: 'unanswered', value: Buffer.from('after') });
    const log = await readPartition(wire, 'unanswered', 0);
    assert.deepEqual(
      log.map((r) => r.value!.toString('hex')),
      [...first, Buffer.from('after')].map((v) => v.toString('hex')),
    );
  });
});
