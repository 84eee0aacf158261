// Admin.listOffsets against a leader whose ListOffsets stops below v7 (no MAX_TIMESTAMP, KIP-734): as Kafka 3.9's
// ListOffsetsHandler.handleUnsupportedVersionException, only the max-timestamp partitions fail with
// UNSUPPORTED_VERSION; the others are asked at the version the leader speaks. The in-process broker's interceptor
// caps the ListOffsets version its ApiVersions answer advertises.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ListOffsetsRequest } from '../../src/protocol/messages/02-list-offsets.js';
import type { ApiVersionsResponse } from '../../src/protocol/messages/18-api-versions.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'offsets-old-leader';
/** The last ListOffsets version without MAX_TIMESTAMP. */
const VERSION_BEFORE_MAX_TIMESTAMP = 6;

it('a leader below ListOffsets v7 fails only the max-timestamp partitions; the others get their offsets', async () => {
  const broker = await startInProcessBroker();
  const wire = await WireClient.connect(broker.host, broker.port);
  const admin = new Admin({ bootstrapServers: `127.0.0.1:${broker.port}`, defaultApiTimeoutMs: 5_000 });
  const producer = new Producer({ bootstrapServers: `127.0.0.1:${broker.port}` });
  /** The ListOffsets requests the broker saw: version, and the timestamps asked per partition. */
  const seen: { version: number; timestamps: string[] }[] = [];
  try {
    await createTopic(wire, TOPIC, { numPartitions: 2, replicationFactor: 1 });
    for (const partition of [0, 1]) await producer.send({ topic: TOPIC, partition, value: Buffer.from('x') });
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.LIST_OFFSETS) {
        const body = request.body as ListOffsetsRequest;
        seen.push({
          version: request.apiVersion,
          timestamps: body.topics.flatMap((t) =>
            t.partitions.map((p) => `${p.partitionIndex}:${p.timestamp}`),
          ),
        });
        return undefined;
      }
      if (request.apiKey !== ApiKey.API_VERSIONS) return undefined;
      return request.handle().then((answer) => {
        const response = answer as ApiVersionsResponse;
        return {
          ...response,
          apiKeys: response.apiKeys.map((k) =>
            k.apiKey === ApiKey.LIST_OFFSETS ? { ...k, maxVersion: VERSION_BEFORE_MAX_TIMESTAMP } : k,
          ),
        };
      });
    });
    const results = await admin.listOffsets(
      [
        { topic: TOPIC, partition: 0, spec: 'max-timestamp' },
        { topic: TOPIC, partition: 1, spec: 'latest' },
      ],
      { perPartition: true },
    );
    assert.equal(
      results[0]!.error?.code,
      ErrorCode.UNSUPPORTED_VERSION,
      'max-timestamp needs ListOffsets v7',
    );
    assert.equal(results[1]!.error, null);
    assert.equal(results[1]!.offset, 1, 'the latest offset of partition 1');
    assert.ok(seen.length > 0, 'partition 1 was asked');
    for (const s of seen) {
      assert.ok(s.version <= VERSION_BEFORE_MAX_TIMESTAMP, `asked at v${s.version}`);
      assert.deepEqual(s.timestamps, ['1:-1'], 'max-timestamp never went to a leader that cannot answer it');
    }
  } finally {
    broker.interception.clear();
    await producer.close();
    await admin.close();
    wire.close();
    await broker.stop();
  }
});
