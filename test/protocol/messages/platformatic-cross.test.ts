// Cross-checks the flexible versions (compact encodings and tagged fields) against another implementation
// nobody here wrote: @platformatic/kafka's hand-written per-version request writers and response parsers.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  apiVersionsV4,
  createTopicsV7,
  fetchV16,
  fetchV17,
  findCoordinatorV6,
  joinGroupV9,
  metadataV12,
  offsetCommitV9,
  Reader as PlatformaticReader,
  type Writer as PlatformaticWriter,
  produceV9,
} from '@platformatic/kafka';
import { decodeProduceRequest } from '../../../src/protocol/messages/00-produce.js';
import { decodeFetchRequest, encodeFetchResponse } from '../../../src/protocol/messages/01-fetch.js';
import { decodeMetadataRequest, encodeMetadataResponse } from '../../../src/protocol/messages/03-metadata.js';
import { decodeOffsetCommitRequest } from '../../../src/protocol/messages/08-offset-commit.js';
import { decodeFindCoordinatorRequest } from '../../../src/protocol/messages/10-find-coordinator.js';
import { decodeJoinGroupRequest } from '../../../src/protocol/messages/11-join-group.js';
import {
  decodeApiVersionsRequest,
  encodeApiVersionsResponse,
} from '../../../src/protocol/messages/18-api-versions.js';
import { decodeCreateTopicsRequest } from '../../../src/protocol/messages/19-create-topics.js';
import { Reader, Writer } from '../../../src/protocol/primitives/index.js';

/** A reader over what a @platformatic/kafka request writer produced. */
function ours(writer: PlatformaticWriter): Reader {
  return new Reader(writer.buffer);
}

function theirs(write: (w: Writer) => void): PlatformaticReader {
  const w = new Writer();
  write(w);
  return PlatformaticReader.from(w.toBuffer());
}

/** Kafka's UUID text (base64url) as the dashed hex form @platformatic/kafka uses. */
function dashed(uuid: string): string {
  const hex = Buffer.from(uuid, 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const TOPIC_ID = Buffer.from('0123456789abcdef0123456789abcdef', 'hex').toString('base64url');

describe('generated codecs against @platformatic/kafka (flexible versions)', () => {
  it('ApiVersions v4: read its request, and write a response with tagged fields it reads back', () => {
    const r = ours(apiVersionsV4.createRequest('brook-test', '1.2.3'));
    assert.deepEqual(decodeApiVersionsRequest(r, 4), {
      clientSoftwareName: 'brook-test',
      clientSoftwareVersion: '1.2.3',
    });
    assert.equal(r.remaining, 0);
    const response = apiVersionsV4.parseResponse(
      0,
      18,
      4,
      theirs((w) =>
        encodeApiVersionsResponse(w, 4, {
          errorCode: 0,
          apiKeys: [{ apiKey: 1, minVersion: 4, maxVersion: 17 }],
          throttleTimeMs: 9,
          supportedFeatures: [{ name: 'metadata.version', minVersion: 1, maxVersion: 20 }],
          finalizedFeaturesEpoch: 3n,
          finalizedFeatures: [],
          zkMigrationReady: true,
        }),
      ),
    );
    assert.equal(response.errorCode, 0);
    assert.deepEqual(
      response.apiKeys.map((k) => [k.apiKey, k.minVersion, k.maxVersion]),
      [[1, 4, 17]],
    );
    assert.equal(response.throttleTimeMs, 9);
  });

  it('Metadata v12: read its request and write a response it reads back', () => {
    const r = ours(metadataV12.createRequest(['orders', 'pay'], true, false));
    const request = decodeMetadataRequest(r, 12);
    assert.deepEqual(
      request.topics!.map((t) => t.name),
      ['orders', 'pay'],
    );
    assert.equal(request.allowAutoTopicCreation, true);
    assert.equal(r.remaining, 0);
    const response = metadataV12.parseResponse(
      0,
      3,
      12,
      theirs((w) =>
        encodeMetadataResponse(w, 12, {
          throttleTimeMs: 0,
          brokers: [{ nodeId: 1, host: 'h1', port: 9092, rack: null }],
          clusterId: 'c',
          controllerId: 1,
          topics: [
            {
              errorCode: 0,
              name: 'orders',
              topicId: TOPIC_ID,
              isInternal: false,
              partitions: [
                {
                  errorCode: 0,
                  partitionIndex: 0,
                  leaderId: 1,
                  leaderEpoch: 6,
                  replicaNodes: [1],
                  isrNodes: [1],
                  offlineReplicas: [],
                },
              ],
              topicAuthorizedOperations: 8,
            },
          ],
          clusterAuthorizedOperations: -2147483648,
        }),
      ),
    );
    assert.deepEqual(response.brokers, [{ nodeId: 1, host: 'h1', port: 9092, rack: null }]);
    assert.equal(response.topics[0]!.name, 'orders');
    assert.equal(response.topics[0]!.topicId, dashed(TOPIC_ID));
    assert.equal(response.topics[0]!.partitions[0]!.leaderEpoch, 6);
    assert.equal(response.topics[0]!.topicAuthorizedOperations, 8);
  });

  it('Fetch v17: read its request; Fetch v16: write a response it reads back', () => {
    const r = ours(
      fetchV17.createRequest(
        500,
        1,
        1048576,
        0,
        7,
        2,
        [
          {
            topicId: dashed(TOPIC_ID),
            partitions: [
              {
                partition: 4,
                currentLeaderEpoch: 3,
                fetchOffset: 100n,
                lastFetchedEpoch: 2,
                partitionMaxBytes: 4096,
              },
            ],
          },
        ],
        [],
        'rack-1',
      ),
    );
    const request = decodeFetchRequest(r, 17);
    assert.equal(request.maxWaitMs, 500);
    assert.equal(request.sessionId, 7);
    assert.equal(request.sessionEpoch, 2);
    assert.equal(request.rackId, 'rack-1');
    assert.equal(request.topics[0]!.topicId, TOPIC_ID);
    assert.deepEqual(request.topics[0]!.partitions[0]!, {
      partition: 4,
      currentLeaderEpoch: 3,
      fetchOffset: 100n,
      lastFetchedEpoch: 2,
      logStartOffset: -1n,
      partitionMaxBytes: 4096,
      replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA',
    });
    assert.equal(r.remaining, 0);

    const response = fetchV16.parseResponse(
      0,
      1,
      16,
      theirs((w) =>
        encodeFetchResponse(w, 16, {
          throttleTimeMs: 0,
          errorCode: 0,
          sessionId: 7,
          responses: [
            {
              topic: '',
              topicId: TOPIC_ID,
              partitions: [
                {
                  partitionIndex: 4,
                  errorCode: 0,
                  highWatermark: 120n,
                  lastStableOffset: 110n,
                  logStartOffset: 0n,
                  divergingEpoch: { epoch: 2, endOffset: 90n },
                  currentLeader: { leaderId: 1, leaderEpoch: 3 },
                  snapshotId: { endOffset: -1n, epoch: -1 },
                  abortedTransactions: null,
                  preferredReadReplica: -1,
                  records: null,
                },
              ],
            },
          ],
          nodeEndpoints: [{ nodeId: 1, host: 'h1', port: 9092, rack: null }],
        }),
      ),
    );
    assert.equal(response.sessionId, 7);
    const partition = response.responses[0]!.partitions[0]!;
    assert.equal(response.responses[0]!.topicId, dashed(TOPIC_ID));
    assert.equal(partition.partitionIndex, 4);
    assert.equal(partition.highWatermark, 120n);
    assert.equal(partition.lastStableOffset, 110n);
  });

  it('Produce v9: read its request with the record batch it built', () => {
    const r = ours(
      produceV9.createRequest(-1, 1500, [
        { topic: 'orders', partition: 2, key: Buffer.from('k'), value: Buffer.from('v') },
      ]),
    );
    const request = decodeProduceRequest(r, 9);
    assert.equal(request.acks, -1);
    assert.equal(request.timeoutMs, 1500);
    const partition = request.topicData[0]!.partitionData[0]!;
    assert.equal(request.topicData[0]!.name, 'orders');
    assert.equal(partition.index, 2);
    assert.equal(partition.records![16], 2, 'magic byte of a v2 batch');
    assert.equal(r.remaining, 0);
  });

  it('JoinGroup v9, FindCoordinator v6, OffsetCommit v9 and CreateTopics v7: read their requests', () => {
    let r = ours(
      joinGroupV9.createRequest('g', 30000, 60000, 'm-1', 'static-1', 'consumer', [
        { name: 'cooperative-sticky', metadata: Buffer.from([9]) },
      ]),
    );
    const join = decodeJoinGroupRequest(r, 9);
    assert.equal(join.groupInstanceId, 'static-1');
    assert.equal(join.memberId, 'm-1');
    assert.deepEqual(join.protocols, [{ name: 'cooperative-sticky', metadata: Buffer.from([9]) }]);
    assert.equal(r.remaining, 0);

    r = ours(findCoordinatorV6.createRequest(1, ['tx-a', 'tx-b']));
    const find = decodeFindCoordinatorRequest(r, 6);
    assert.equal(find.keyType, 1);
    assert.deepEqual(find.coordinatorKeys, ['tx-a', 'tx-b']);
    assert.equal(r.remaining, 0);

    r = ours(
      offsetCommitV9.createRequest('g', 4, 'm-1', null, [
        {
          name: 'orders',
          partitions: [
            { partitionIndex: 1, committedOffset: 77n, committedLeaderEpoch: 2, committedMetadata: 'x' },
          ],
        },
      ]),
    );
    const commit = decodeOffsetCommitRequest(r, 9);
    assert.equal(commit.generationIdOrMemberEpoch, 4);
    assert.deepEqual(commit.topics[0]!.partitions[0], {
      partitionIndex: 1,
      committedOffset: 77n,
      committedLeaderEpoch: 2,
      commitTimestamp: -1n,
      committedMetadata: 'x',
    });
    assert.equal(r.remaining, 0);

    r = ours(
      createTopicsV7.createRequest(
        [
          {
            name: 'new',
            numPartitions: 3,
            replicationFactor: 1,
            assignments: [],
            configs: [{ name: 'cleanup.policy', value: 'compact' }],
          },
        ],
        5000,
        false,
      ),
    );
    const create = decodeCreateTopicsRequest(r, 7);
    assert.equal(create.timeoutMs, 5000);
    assert.equal(create.topics[0]!.numPartitions, 3);
    assert.deepEqual(create.topics[0]!.configs, [{ name: 'cleanup.policy', value: 'compact' }]);
    assert.equal(r.remaining, 0);
  });
});
