// A connection against a scripted broker: no more than max.in.flight requests on the wire at once, responses
// matched to requests by correlation id even when they come back out of order, and ApiVersions negotiation that
// falls back to v0 when the broker answers UNSUPPORTED_VERSION, then uses the highest common version. With the
// options a broker's own connections use: versions given (no ApiVersions), throttle times ignored, a large
// response read into a frame of a FramePool that stays the caller's until released.

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { Connection } from '../../src/client/connection.js';
import { resolveClientOptions } from '../../src/client/options.js';
import { FramePool } from '../../src/common/frame-pool.js';
import { decodeRequestHeader, encodeResponseHeader } from '../../src/protocol/headers.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { FrameSplitter } from '../helpers/frame-splitter.js';

interface Seen {
  apiKey: number;
  version: number;
  correlationId: number;
}

/** A TCP server that decodes request headers and lets the test answer each request when it chooses. */
async function scriptedBroker(
  onRequest: (seen: Seen, reply: (body: unknown, version?: number) => void) => void,
  write: (socket: net.Socket, bytes: Buffer) => void = (socket, bytes) => socket.write(bytes),
) {
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    const fromClient = new FrameSplitter({ sizePrefix: 'strip' });
    socket.on('data', (d: Buffer) => {
      fromClient.push(d);
      for (const frame of fromClient.frames()) {
        const { header } = decodeRequestHeader(new Reader(frame));
        const seen = {
          apiKey: header.requestApiKey,
          version: header.requestApiVersion,
          correlationId: header.correlationId,
        };
        onRequest(seen, (body, version = seen.version) => {
          const w = new Writer();
          w.int32(0);
          encodeResponseHeader(w, seen.apiKey, seen.version, seen.correlationId);
          getApi(seen.apiKey).encodeResponse(w, version, body);
          const out = w.toBuffer();
          out.writeInt32BE(out.length - 4, 0);
          write(socket, out);
        });
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const apiVersions = (keys: [number, number, number][]) => ({
  errorCode: 0,
  apiKeys: keys.map(([apiKey, minVersion, maxVersion]) => ({ apiKey, minVersion, maxVersion })),
  throttleTimeMs: 0,
  supportedFeatures: [],
  finalizedFeaturesEpoch: -1n,
  finalizedFeatures: [],
  zkMigrationReady: false,
});

const metadataBody = {
  topics: [],
  allowAutoTopicCreation: false,
  includeClusterAuthorizedOperations: false,
  includeTopicAuthorizedOperations: false,
};

test('at most max.in.flight requests are on the wire, and out-of-order answers reach the right caller', async () => {
  const held: { seen: Seen; reply: (b: unknown) => void }[] = [];
  const versions: string[] = [];
  const broker = await scriptedBroker((seen, reply) => {
    versions.push(`${seen.apiKey}v${seen.version}`);
    if (seen.apiKey === ApiKey.API_VERSIONS) {
      if (seen.version > 2) {
        // Answer as an old broker: UNSUPPORTED_VERSION, written at v0, with what it serves.
        reply({ ...apiVersions([[ApiKey.API_VERSIONS, 0, 2]]), errorCode: 35 }, 0);
        return;
      }
      reply(
        apiVersions([
          [ApiKey.API_VERSIONS, 0, 2],
          [ApiKey.METADATA, 0, 7],
        ]),
      );
      return;
    }
    held.push({ seen, reply });
  });
  try {
    const options = resolveClientOptions({ bootstrapServers: 'x:1', maxInFlightRequestsPerConnection: 3 });
    const c = await Connection.connect('127.0.0.1', broker.port, options);
    assert.deepEqual(
      versions,
      ['18v3', '18v2'],
      'v3 first, then the broker newest after UNSUPPORTED_VERSION',
    );
    assert.equal(c.pickVersion(ApiKey.METADATA), 7, 'the highest version both sides support');
    const answers = Array.from({ length: 5 }, () =>
      c.request<MetadataResponse>(ApiKey.METADATA, metadataBody),
    );
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(held.length, 3, 'the fourth request waits for a free slot');
    // Answer in reverse order; each throttle time names the request it answers.
    for (const h of held.splice(0).reverse()) {
      h.reply({
        throttleTimeMs: h.seen.correlationId,
        brokers: [],
        clusterId: null,
        controllerId: 0,
        topics: [],
        clusterAuthorizedOperations: 0,
      });
    }
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(held.length, 2, 'freed slots let the queued requests go');
    for (const h of held.splice(0)) {
      h.reply({
        throttleTimeMs: h.seen.correlationId,
        brokers: [],
        clusterId: null,
        controllerId: 0,
        topics: [],
        clusterAuthorizedOperations: 0,
      });
    }
    const results = await Promise.all(answers);
    const ids = results.map((r) => r.throttleTimeMs);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'each caller got the answer to its own request',
    );
    assert.equal(new Set(ids).size, 5);
    c.close();
    await assert.rejects(() => c.request(ApiKey.METADATA, metadataBody), /closed/);
  } finally {
    broker.close();
  }
});

test('responses split into single bytes, or several in one read, are framed correctly', async () => {
  let split = true;
  const queued: Buffer[] = [];
  const broker = await scriptedBroker(
    (seen, reply) => {
      if (seen.apiKey === ApiKey.API_VERSIONS)
        reply(
          apiVersions([
            [ApiKey.API_VERSIONS, 0, 3],
            [ApiKey.METADATA, 0, 12],
          ]),
        );
      else
        reply({
          throttleTimeMs: seen.correlationId,
          brokers: [],
          clusterId: 'c'.repeat(5000),
          controllerId: 0,
          topics: [],
          clusterAuthorizedOperations: 0,
        });
    },
    (socket, bytes) => {
      if (split) {
        // One byte per write, each on its own turn of the event loop.
        let i = 0;
        const next = () => {
          if (i < bytes.length) socket.write(bytes.subarray(i, ++i), () => setImmediate(next));
        };
        next();
        return;
      }
      queued.push(bytes);
      if (queued.length === 3) socket.write(Buffer.concat(queued.splice(0)));
    },
  );
  try {
    const c = await Connection.connect(
      '127.0.0.1',
      broker.port,
      resolveClientOptions({ bootstrapServers: 'x:1' }),
    );
    const one = await c.request<MetadataResponse>(ApiKey.METADATA, metadataBody);
    assert.equal(one.clusterId, 'c'.repeat(5000));
    split = false;
    const three = await Promise.all(
      [0, 1, 2].map(() => c.request<MetadataResponse>(ApiKey.METADATA, metadataBody)),
    );
    const ids = three.map((r) => r.throttleTimeMs);
    assert.deepEqual(
      ids,
      [ids[0]!, ids[0]! + 1, ids[0]! + 2],
      'three frames in one read reach their three callers',
    );
    c.close();
  } finally {
    broker.close();
  }
});

test('with versions given: no ApiVersions, no throttling, and a held response in a pooled frame', async () => {
  const seen: string[] = [];
  const CLUSTER_ID = 'k'.repeat(100_000);
  const broker = await scriptedBroker((request, reply) => {
    seen.push(`${request.apiKey}v${request.version}`);
    reply({
      throttleTimeMs: 60_000,
      brokers: [],
      clusterId: CLUSTER_ID,
      controllerId: 0,
      topics: [],
      clusterAuthorizedOperations: 0,
    });
  });
  const pool = new FramePool(1024 * 1024, true);
  try {
    const c = await Connection.connect('127.0.0.1', broker.port, {
      ...resolveClientOptions({ bootstrapServers: 'x:1' }),
      versions: new Map([[ApiKey.METADATA, { min: 0, max: 9 }]]),
      honourThrottle: false,
      framePool: pool,
    });
    try {
      assert.equal(c.pickVersion(ApiKey.METADATA), 9, 'the highest of the versions given');
      const held = await c.requestHeld<MetadataResponse>(ApiKey.METADATA, metadataBody);
      assert.deepEqual(seen, ['3v9'], 'nothing but the request itself was sent');
      assert.equal(held.response.clusterId, CLUSTER_ID);
      assert.ok(c.readsIntoOwnBuffers);
      assert.ok(pool.isPooled(held.frame), 'the response was read into a frame of the pool');
      assert.equal(c.throttled, false, 'a throttle time is ignored');
      // Not held back: the next request goes out and is answered (a throttled connection would wait 60 s).
      const plain = await c.request<MetadataResponse>(ApiKey.METADATA, metadataBody);
      assert.equal(plain.clusterId, CLUSTER_ID);
      assert.equal(pool.stats.dropped, 1, "an ordinary response's frame leaves the pool");
      c.releaseFrame(held.frame);
      assert.equal(pool.stats.recycled, 1, 'the released frame is idle again');
    } finally {
      c.close();
    }
  } finally {
    broker.close();
  }
});
