// Brook's client honours throttle_time_ms as Kafka's NetworkClient does (KIP-219): after a response of a version
// whose throttle the client applies, the next request to that broker waits until the time has passed; for older
// versions (the broker delayed the response itself) nothing waits. Against a scripted broker, so that the only
// thing that can hold the second request back is the client.

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { Connection } from '../../src/client/connection.js';
import { resolveClientOptions } from '../../src/client/options.js';
import { decodeRequestHeader, encodeResponseHeader } from '../../src/protocol/headers.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { FrameSplitter } from '../helpers/frame-splitter.js';

const THROTTLE_MS = 1500;

/** A broker that serves Metadata up to `metadataMax`, answering the first Metadata with THROTTLE_MS. */
async function throttlingBroker(metadataMax: number) {
  const metadataArrivals: number[] = [];
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    const frames = new FrameSplitter({ sizePrefix: 'strip' });
    socket.on('data', (d: Buffer) => {
      frames.push(d);
      for (const frame of frames.frames()) {
        const { header } = decodeRequestHeader(new Reader(frame));
        const reply = (body: unknown, version = header.requestApiVersion) => {
          const w = new Writer();
          w.int32(0);
          encodeResponseHeader(w, header.requestApiKey, header.requestApiVersion, header.correlationId);
          getApi(header.requestApiKey).encodeResponse(w, version, body);
          const out = w.toBuffer();
          out.writeInt32BE(out.length - 4, 0);
          socket.write(out);
        };
        if (header.requestApiKey === ApiKey.API_VERSIONS) {
          reply({
            errorCode: 0,
            apiKeys: [
              { apiKey: ApiKey.API_VERSIONS, minVersion: 0, maxVersion: 3 },
              { apiKey: ApiKey.METADATA, minVersion: 0, maxVersion: metadataMax },
            ],
            throttleTimeMs: 0,
            supportedFeatures: [],
            finalizedFeaturesEpoch: -1n,
            finalizedFeatures: [],
            zkMigrationReady: false,
          });
          continue;
        }
        metadataArrivals.push(performance.now());
        reply({
          throttleTimeMs: metadataArrivals.length === 1 ? THROTTLE_MS : 0,
          brokers: [],
          clusterId: null,
          controllerId: 0,
          topics: [],
          clusterAuthorizedOperations: 0,
        });
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    metadataArrivals,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const metadataBody = {
  topics: [],
  allowAutoTopicCreation: false,
  includeClusterAuthorizedOperations: false,
  includeTopicAuthorizedOperations: false,
};

test('after a throttled Metadata v7 answer the next request waits out throttle_time_ms', async () => {
  const broker = await throttlingBroker(7);
  const c = await Connection.connect(
    '127.0.0.1',
    broker.port,
    resolveClientOptions({ bootstrapServers: 'x:1' }),
  );
  try {
    assert.equal(c.pickVersion(ApiKey.METADATA), 7);
    const first = await c.request<MetadataResponse>(ApiKey.METADATA, metadataBody);
    assert.equal(first.throttleTimeMs, THROTTLE_MS);
    assert.equal(c.throttled, true, 'the connection is throttled once the answer is in');
    const second = await c.request<MetadataResponse>(ApiKey.METADATA, metadataBody);
    assert.equal(second.throttleTimeMs, 0);
    const [sentFirst, sentSecond] = broker.metadataArrivals;
    const gap = sentSecond! - sentFirst!;
    // A lower bound only: a loaded machine can make the gap longer, never shorter.
    assert.ok(
      gap >= THROTTLE_MS - 50,
      `the second request reached the broker ${gap.toFixed(0)} ms after the first`,
    );
  } finally {
    c.close();
    broker.close();
  }
});

test('before Metadata v6 the broker delays its answer itself, so the client does not wait again', async () => {
  const broker = await throttlingBroker(5);
  const c = await Connection.connect(
    '127.0.0.1',
    broker.port,
    resolveClientOptions({ bootstrapServers: 'x:1' }),
  );
  try {
    assert.equal(c.pickVersion(ApiKey.METADATA), 5);
    const first = await c.request<MetadataResponse>(ApiKey.METADATA, metadataBody);
    assert.equal(first.throttleTimeMs, THROTTLE_MS);
    assert.equal(c.throttled, false);
  } finally {
    c.close();
    broker.close();
  }
});
