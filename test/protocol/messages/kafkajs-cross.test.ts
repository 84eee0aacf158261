// Cross-checks the generated codecs against an implementation nobody here wrote: kafkajs's hand-written
// protocol encoders and decoders. Requests kafkajs encodes must decode with our codecs to the same values;
// responses we encode must decode with kafkajs to the values we put in.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { decodeProduceRequest, encodeProduceResponse } from '../../../src/protocol/messages/00-produce.js';
import { decodeFetchRequest, encodeFetchResponse } from '../../../src/protocol/messages/01-fetch.js';
import { decodeMetadataRequest, encodeMetadataResponse } from '../../../src/protocol/messages/03-metadata.js';
import { decodeFindCoordinatorRequest } from '../../../src/protocol/messages/10-find-coordinator.js';
import { decodeJoinGroupRequest } from '../../../src/protocol/messages/11-join-group.js';
import { encodeApiVersionsResponse } from '../../../src/protocol/messages/18-api-versions.js';
import { Reader, Writer } from '../../../src/protocol/primitives/index.js';

const require = createRequire(import.meta.url);

// biome-ignore lint/suspicious/noExplicitAny: kafkajs is untyped JavaScript; tests read its output by name.
type Loose = any;

interface KafkajsApi {
  request: { apiKey: number; apiVersion: number; encode(): Promise<{ buffer: Buffer }> };
  response: { decode(bytes: Buffer): Promise<Loose> };
}

function kafkajs(name: string, version: number, args: object = {}): KafkajsApi {
  const module = require(`kafkajs/src/protocol/requests/${name}/index.js`) as {
    protocol(o: { version: number }): (args: object) => KafkajsApi;
  };
  return module.protocol({ version })(args);
}

async function kafkajsRequest(name: string, version: number, args: object): Promise<Reader> {
  const api = kafkajs(name, version, args);
  assert.equal(api.request.apiVersion, version);
  return new Reader((await api.request.encode()).buffer);
}

async function kafkajsDecode(name: string, version: number, write: (w: Writer) => void): Promise<Loose> {
  const w = new Writer();
  write(w);
  return kafkajs(name, version).response.decode(w.toBuffer());
}

describe('generated codecs against kafkajs', () => {
  it('decode kafkajs Metadata requests v0-v6', async () => {
    for (let version = 0; version <= 6; version++) {
      const r = await kafkajsRequest('metadata', version, {
        topics: ['orders', 'pay'],
        allowAutoTopicCreation: false,
      });
      const decoded = decodeMetadataRequest(r, version);
      assert.deepEqual(
        decoded.topics!.map((t) => t.name),
        ['orders', 'pay'],
      );
      assert.equal(decoded.allowAutoTopicCreation, version < 4);
      assert.equal(r.remaining, 0, `v${version}`);
    }
  });

  it('encode Metadata responses v1-v6 that kafkajs reads back', async () => {
    for (let version = 1; version <= 6; version++) {
      const decoded = await kafkajsDecode('metadata', version, (w) =>
        encodeMetadataResponse(w, version, {
          throttleTimeMs: 0,
          brokers: [{ nodeId: 7, host: 'broker-7', port: 9093, rack: 'r1' }],
          clusterId: 'cluster',
          controllerId: 7,
          topics: [
            {
              errorCode: 0,
              name: 'orders',
              topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
              isInternal: false,
              partitions: [
                {
                  errorCode: 0,
                  partitionIndex: 2,
                  leaderId: 7,
                  leaderEpoch: 4,
                  replicaNodes: [7, 8],
                  isrNodes: [7],
                  offlineReplicas: [8],
                },
              ],
              topicAuthorizedOperations: -2147483648,
            },
          ],
          clusterAuthorizedOperations: -2147483648,
        }),
      );
      assert.deepEqual(decoded.brokers[0], { nodeId: 7, host: 'broker-7', port: 9093, rack: 'r1' });
      assert.equal(decoded.controllerId, 7);
      const partition = decoded.topicMetadata[0].partitionMetadata[0];
      assert.equal(decoded.topicMetadata[0].topic, 'orders');
      assert.equal(partition.partitionId, 2);
      assert.equal(partition.leader, 7);
      assert.deepEqual(partition.replicas, [7, 8]);
      assert.deepEqual(partition.isr, [7]);
      if (version >= 2) assert.equal(decoded.clusterId, 'cluster');
      if (version >= 5) assert.deepEqual(partition.offlineReplicas, [8]);
    }
  });

  it('decode kafkajs Produce requests v3-v7 with their record batches intact', async () => {
    for (let version = 3; version <= 7; version++) {
      const r = await kafkajsRequest('produce', version, {
        acks: -1,
        timeout: 30000,
        topicData: [
          { topic: 'orders', partitions: [{ partition: 1, messages: [{ key: 'k', value: 'v' }] }] },
        ],
      });
      const decoded = decodeProduceRequest(r, version);
      assert.equal(decoded.acks, -1);
      assert.equal(decoded.timeoutMs, 30000);
      assert.equal(decoded.transactionalId, null);
      const partition = decoded.topicData[0]!.partitionData[0]!;
      assert.equal(decoded.topicData[0]!.name, 'orders');
      assert.equal(partition.index, 1);
      // A v2 record batch: magic byte 2 at offset 16, and a batch length that spans the rest.
      assert.equal(partition.records![16], 2);
      assert.equal(partition.records!.readInt32BE(8) + 12, partition.records!.length);
      assert.equal(r.remaining, 0);
    }
  });

  it('encode Produce responses v3-v7 that kafkajs reads back', async () => {
    for (let version = 3; version <= 7; version++) {
      const decoded = await kafkajsDecode('produce', version, (w) =>
        encodeProduceResponse(w, version, {
          responses: [
            {
              name: 'orders',
              partitionResponses: [
                {
                  index: 1,
                  errorCode: 0,
                  baseOffset: 1234n,
                  logAppendTimeMs: -1n,
                  logStartOffset: 5n,
                  recordErrors: [],
                  errorMessage: null,
                  currentLeader: { leaderId: -1, leaderEpoch: -1 },
                },
              ],
            },
          ],
          throttleTimeMs: 25,
          nodeEndpoints: [],
        }),
      );
      assert.equal(decoded.topics[0].topicName, 'orders');
      assert.equal(decoded.topics[0].partitions[0].partition, 1);
      assert.equal(decoded.topics[0].partitions[0].baseOffset, '1234');
      // kafkajs reports throttling of KIP-219 versions (v6 on) as client-side throttling.
      assert.equal(decoded.throttleTime || decoded.clientSideThrottleTime, 25);
      if (version >= 5) assert.equal(decoded.topics[0].partitions[0].logStartOffset, '5');
    }
  });

  it('decode kafkajs Fetch requests v4, v7 and v11', async () => {
    for (const version of [4, 7, 11]) {
      const r = await kafkajsRequest('fetch', version, {
        replicaId: -1,
        maxWaitTime: 500,
        minBytes: 1,
        maxBytes: 1048576,
        isolationLevel: 1,
        topics: [{ topic: 'orders', partitions: [{ partition: 3, fetchOffset: '42', maxBytes: 65536 }] }],
      });
      const decoded = decodeFetchRequest(r, version);
      assert.equal(decoded.replicaId, -1);
      assert.equal(decoded.maxWaitMs, 500);
      assert.equal(decoded.maxBytes, 1048576);
      assert.equal(decoded.isolationLevel, 1);
      const partition = decoded.topics[0]!.partitions[0]!;
      assert.equal(decoded.topics[0]!.topic, 'orders');
      assert.equal(partition.partition, 3);
      assert.equal(partition.fetchOffset, 42n);
      assert.equal(partition.partitionMaxBytes, 65536);
      assert.equal(r.remaining, 0);
    }
  });

  it('encode a Fetch v4 response that kafkajs reads back', async () => {
    const decoded = await kafkajsDecode('fetch', 4, (w) =>
      encodeFetchResponse(w, 4, {
        throttleTimeMs: 0,
        errorCode: 0,
        sessionId: 0,
        responses: [
          {
            topic: 'orders',
            topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
            partitions: [
              {
                partitionIndex: 3,
                errorCode: 0,
                highWatermark: 99n,
                lastStableOffset: 98n,
                logStartOffset: -1n,
                divergingEpoch: { epoch: -1, endOffset: -1n },
                currentLeader: { leaderId: -1, leaderEpoch: -1 },
                snapshotId: { endOffset: -1n, epoch: -1 },
                abortedTransactions: [{ producerId: 11n, firstOffset: 12n }],
                preferredReadReplica: -1,
                records: Buffer.alloc(0),
              },
            ],
          },
        ],
        nodeEndpoints: [],
      }),
    );
    const partition = decoded.responses[0].partitions[0];
    assert.equal(decoded.responses[0].topicName, 'orders');
    assert.equal(partition.highWatermark, '99');
    assert.equal(partition.lastStableOffset, '98');
    assert.deepEqual(partition.abortedTransactions, [{ producerId: '11', firstOffset: '12' }]);
  });

  it('encode ApiVersions responses v0-v2 that kafkajs reads back', async () => {
    for (let version = 0; version <= 2; version++) {
      const decoded = await kafkajsDecode('apiVersions', version, (w) =>
        encodeApiVersionsResponse(w, version, {
          errorCode: 0,
          apiKeys: [
            { apiKey: 0, minVersion: 0, maxVersion: 11 },
            { apiKey: 1, minVersion: 4, maxVersion: 17 },
          ],
          throttleTimeMs: 3,
          supportedFeatures: [],
          finalizedFeaturesEpoch: -1n,
          finalizedFeatures: [],
          zkMigrationReady: false,
        }),
      );
      assert.deepEqual(decoded.apiVersions, [
        { apiKey: 0, minVersion: 0, maxVersion: 11 },
        { apiKey: 1, minVersion: 4, maxVersion: 17 },
      ]);
      if (version >= 1) assert.equal(decoded.throttleTime || decoded.clientSideThrottleTime, 3);
    }
  });

  it('decode kafkajs JoinGroup requests v0-v5 and FindCoordinator v0-v2', async () => {
    for (let version = 0; version <= 5; version++) {
      const r = await kafkajsRequest('joinGroup', version, {
        groupId: 'g',
        sessionTimeout: 30000,
        rebalanceTimeout: 60000,
        memberId: '',
        protocolType: 'consumer',
        groupProtocols: [{ name: 'range', metadata: Buffer.from([0, 1, 2]) }],
      });
      const decoded = decodeJoinGroupRequest(r, version);
      assert.equal(decoded.groupId, 'g');
      assert.equal(decoded.sessionTimeoutMs, 30000);
      assert.equal(decoded.rebalanceTimeoutMs, version >= 1 ? 60000 : -1);
      assert.equal(decoded.protocolType, 'consumer');
      assert.deepEqual(decoded.protocols, [{ name: 'range', metadata: Buffer.from([0, 1, 2]) }]);
      assert.equal(r.remaining, 0);
    }
    for (let version = 0; version <= 2; version++) {
      const r = await kafkajsRequest('findCoordinator', version, { groupId: 'g', coordinatorType: 1 });
      const decoded = decodeFindCoordinatorRequest(r, version);
      assert.equal(decoded.key, 'g');
      assert.equal(decoded.keyType, version >= 1 ? 1 : 0);
      assert.equal(r.remaining, 0);
    }
  });
});
