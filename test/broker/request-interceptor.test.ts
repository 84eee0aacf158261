// The request interceptor of the dispatcher (src/broker/request-interceptor.ts) on a broker run in this process:
// a request can be delayed, dropped, answered by the test, or rewritten before or after its handler, and the
// broker serves on normally once the interceptor is cleared.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import type { CreateTopicsRequest } from '../../src/protocol/messages/19-create-topics.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { delayKey, type InProcessBroker, onKey, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const METADATA_V12 = {
  topics: null,
  allowAutoTopicCreation: false,
  includeClusterAuthorizedOperations: false,
  includeTopicAuthorizedOperations: false,
};

describe('the request interceptor', () => {
  let broker: InProcessBroker;
  let client: WireClient;
  before(async () => {
    broker = await startInProcessBroker();
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  test('delays the requests of one key and lets the others through at once', async () => {
    broker.interception.set(delayKey(ApiKey.METADATA, 400));
    try {
      const started = Date.now();
      const versions = await client.call(ApiKey.API_VERSIONS, 3, {
        clientSoftwareName: 'test',
        clientSoftwareVersion: '1',
      });
      assert.equal(versions.errorCode, ErrorCode.NONE);
      const metadata = await client.call(ApiKey.METADATA, 12, METADATA_V12);
      assert.equal(metadata.brokers.length, 1);
      assert.ok(Date.now() - started >= 390, `answered after ${Date.now() - started} ms`);
    } finally {
      broker.interception.clear();
    }
  });

  test('drops a request: no answer comes, and other connections are served', async () => {
    const dropped = await WireClient.connect(broker.host, broker.port);
    broker.interception.set(onKey(ApiKey.METADATA, () => null));
    try {
      await assert.rejects(dropped.call(ApiKey.METADATA, 12, METADATA_V12, 1_000));
    } finally {
      broker.interception.clear();
      dropped.close();
    }
    const metadata = await client.call(ApiKey.METADATA, 12, METADATA_V12);
    assert.equal(metadata.brokers.length, 1);
  });

  test("rewrites a request before its handler and the broker's answer after it", async () => {
    broker.interception.set(
      onKey<CreateTopicsRequest>(ApiKey.CREATE_TOPICS, (request) => {
        for (const t of request.body.topics) t.numPartitions = 3;
        return request.handle();
      }),
    );
    try {
      await createTopic(client, 'rewritten', { numPartitions: 1 });
    } finally {
      broker.interception.clear();
    }
    broker.interception.set(
      onKey(ApiKey.METADATA, async (request) => {
        const response = (await request.handle()) as MetadataResponse;
        return { ...response, clusterId: 'rewritten-cluster' };
      }),
    );
    try {
      const metadata = await client.call(ApiKey.METADATA, 12, {
        ...METADATA_V12,
        topics: [{ name: 'rewritten', topicId: Buffer.alloc(16) }],
      });
      assert.equal(metadata.clusterId, 'rewritten-cluster');
      assert.equal(
        metadata.topics[0].partitions.length,
        3,
        'the handler created what the rewritten request asked',
      );
    } finally {
      broker.interception.clear();
    }
  });

  test('answers a held request when the test says so, in order with the requests behind it', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    broker.interception.set(
      onKey(ApiKey.METADATA, async (request) => {
        await released;
        return request.handle();
      }),
    );
    try {
      const order: string[] = [];
      const metadata = client.call(ApiKey.METADATA, 12, METADATA_V12).then(() => order.push('metadata'));
      const versions = client
        .call(ApiKey.API_VERSIONS, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' })
        .then(() => order.push('versions'));
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(order, [], 'responses leave in request order: nothing passes the held one');
      release();
      await Promise.all([metadata, versions]);
      assert.deepEqual(order, ['metadata', 'versions']);
    } finally {
      broker.interception.clear();
    }
  });
});
