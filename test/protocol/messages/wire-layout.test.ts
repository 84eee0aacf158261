// Byte layouts written out by hand from Kafka's protocol guide, so the generated codecs are checked against
// the documented wire format and not only against themselves.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeRequestHeader } from '../../../src/protocol/headers.js';
import { decodeProduceRequest, encodeProduceRequest } from '../../../src/protocol/messages/00-produce.js';
import { decodeFetchResponse, encodeFetchResponse } from '../../../src/protocol/messages/01-fetch.js';
import { decodeMetadataRequest, encodeMetadataRequest } from '../../../src/protocol/messages/03-metadata.js';
import {
  decodeApiVersionsRequest,
  encodeApiVersionsResponse,
} from '../../../src/protocol/messages/18-api-versions.js';
import { Reader, Writer } from '../../../src/protocol/primitives/index.js';

function hex(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ''), 'hex');
}

function ascii(text: string): string {
  return Buffer.from(text).toString('hex');
}

describe('documented wire layouts', () => {
  it('ApiVersions v3 request: header v2, then compact client software name and version, then tags', () => {
    const frame = hex(`
      0012 0003 0000002a 0004 ${ascii('kcat')} 00
      05 ${ascii('kcat')} 06 ${ascii('2.0.2')} 00`);
    const r = new Reader(frame);
    const { header, headerVersion } = decodeRequestHeader(r);
    assert.equal(headerVersion, 2);
    assert.deepEqual(header, {
      requestApiKey: 18,
      requestApiVersion: 3,
      correlationId: 42,
      clientId: 'kcat',
    });
    assert.deepEqual(decodeApiVersionsRequest(r, 3), {
      clientSoftwareName: 'kcat',
      clientSoftwareVersion: '2.0.2',
    });
    assert.equal(r.remaining, 0);
  });

  it('ApiVersions v3 response: compact array of keys with per-element tags, then a tagged epoch', () => {
    const w = new Writer();
    encodeApiVersionsResponse(w, 3, {
      errorCode: 0,
      apiKeys: [
        { apiKey: 0, minVersion: 0, maxVersion: 11 },
        { apiKey: 18, minVersion: 0, maxVersion: 4 },
      ],
      throttleTimeMs: 0,
      supportedFeatures: [],
      finalizedFeaturesEpoch: 5n,
      finalizedFeatures: [],
      zkMigrationReady: false,
    });
    assert.deepEqual(
      w.toBuffer(),
      hex(`0000 03 0000 0000 000b 00 0012 0000 0004 00 00000000
           01 01 08 0000000000000005`),
    );
  });

  it('Metadata v1 request: a nullable topic array (-1 asks for all topics)', () => {
    const some = new Writer();
    encodeMetadataRequest(some, 1, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'foo' }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.deepEqual(some.toBuffer(), hex(`00000001 0003 ${ascii('foo')}`));
    const all = decodeMetadataRequest(new Reader(hex('ffffffff')), 1);
    assert.equal(all.topics, null);
  });

  it('Produce v3 request: nullable transactional id, acks, timeout, topics, partitions and raw records', () => {
    const records = Buffer.from('0011223344', 'hex');
    const bytes = hex(`ffff ffff 00007530
      00000001 0003 ${ascii('foo')}
        00000001 00000002 00000005 0011223344`);
    const decoded = decodeProduceRequest(new Reader(bytes), 3);
    assert.deepEqual(decoded, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 30000,
      topicData: [{ name: 'foo', partitionData: [{ index: 2, records }] }],
    });
    const w = new Writer();
    encodeProduceRequest(w, 3, decoded);
    assert.deepEqual(w.toBuffer(), bytes);
  });

  it('Produce v9 request: the flexible layout with compact lengths and tag sections', () => {
    const bytes = hex(`00 0001 000003e8
      02 04 ${ascii('foo')}
        02 00000000 04 aabbcc 00
      00
      00`);
    const decoded = decodeProduceRequest(new Reader(bytes), 9);
    assert.equal(decoded.transactionalId, null);
    assert.equal(decoded.acks, 1);
    assert.deepEqual(decoded.topicData[0]!.partitionData[0]!.records, hex('aabbcc'));
  });

  it('ignore bytes after a request body, as Kafka does', () => {
    const r = new Reader(hex('00000001 0003 666f6f beef'));
    assert.equal(decodeMetadataRequest(r, 1).topics!.length, 1);
    assert.equal(r.remaining, 2);
  });

  it('Fetch responses carry large record batches by reference, without copying them', () => {
    const batch = Buffer.alloc(64 * 1024, 7);
    const w = new Writer();
    encodeFetchResponse(w, 11, {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [
        {
          topic: 'foo',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
          partitions: [
            {
              partitionIndex: 0,
              errorCode: 0,
              highWatermark: 10n,
              lastStableOffset: 10n,
              logStartOffset: 0n,
              divergingEpoch: { epoch: -1, endOffset: -1n },
              currentLeader: { leaderId: -1, leaderEpoch: -1 },
              snapshotId: { endOffset: -1n, epoch: -1 },
              abortedTransactions: null,
              preferredReadReplica: -1,
              records: batch,
            },
          ],
        },
      ],
      nodeEndpoints: [],
    });
    assert.ok(
      w.chunksOut().some((chunk) => chunk === batch),
      'the batch is one of the output chunks',
    );
    const decoded = decodeFetchResponse(new Reader(w.toBuffer()), 11);
    assert.deepEqual(decoded.responses[0]!.partitions[0]!.records, batch);
  });
});
