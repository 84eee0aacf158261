// ListOffsets' negative timestamps are specials, each from the version that brought it (Kafka 3.9's KafkaApis,
// KAFKA-17331): latest (-1) and earliest (-2) from v1, max timestamp (-3, KIP-734) from v7, earliest local (-4,
// KIP-405) from v8, latest tiered (-5, KIP-1005) from v9. Any other negative timestamp, or a special sent with an
// older version, is answered UNSUPPORTED_VERSION for its partition; a partition named twice in one request is
// answered INVALID_REQUEST at each place (from v1). Both are checked before the partition is looked up. v0 (the
// older API) takes -1 and -2 only.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, produceBatch } from '../helpers/wire-client.js';

const TOPIC = 'specials';
const BASE_MS = 1_700_000_000_000;

interface Answer {
  readonly errorCode: number;
  readonly offset: bigint;
  readonly timestamp: bigint;
}

describe('ListOffsets special timestamps by version', () => {
  const suite = useBrokerWithClient({}, async ({ client }) => {
    await createTopic(client, TOPIC, { numPartitions: 2 });
    const records = [0, 10, 5].map((s, i) => ({ value: `v${i}`, timestamp: BASE_MS + s * 1000 }));
    assert.equal((await produceBatch(client, TOPIC, buildBatch(records))).errorCode, ErrorCode.NONE);
  });

  /** ListOffsets of `version` for the given partitions (index and timestamp) of TOPIC. */
  const list = async (version: number, partitions: [number, number][]): Promise<Answer[]> => {
    const response = await suite.client.call(ApiKey.LIST_OFFSETS, version, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: TOPIC,
          partitions: partitions.map(([partitionIndex, timestamp]) => ({
            partitionIndex,
            currentLeaderEpoch: -1,
            timestamp: BigInt(timestamp),
            maxNumOffsets: 1,
          })),
        },
      ],
      timeoutMs: 1000,
    });
    return response.topics[0].partitions.map((p: Answer) => ({
      errorCode: p.errorCode,
      offset: p.offset,
      timestamp: p.timestamp,
    }));
  };
  const one = async (version: number, timestamp: number): Promise<Answer> =>
    (await list(version, [[0, timestamp]]))[0]!;
  const unsupported = { errorCode: ErrorCode.UNSUPPORTED_VERSION, offset: -1n, timestamp: -1n };

  it('answers each special from the version that brought it, UNSUPPORTED_VERSION before', async () => {
    assert.deepEqual(await one(1, -1), { errorCode: ErrorCode.NONE, offset: 3n, timestamp: -1n });
    assert.deepEqual(await one(1, -2), { errorCode: ErrorCode.NONE, offset: 0n, timestamp: -1n });
    assert.deepEqual(await one(6, -3), unsupported, 'max timestamp before v7');
    assert.deepEqual(await one(7, -3), {
      errorCode: ErrorCode.NONE,
      offset: 1n,
      timestamp: BigInt(BASE_MS + 10_000),
    });
    assert.deepEqual(await one(7, -4), unsupported, 'earliest local before v8');
    assert.deepEqual(await one(8, -4), { errorCode: ErrorCode.NONE, offset: 0n, timestamp: -1n });
    assert.deepEqual(await one(8, -5), unsupported, 'latest tiered before v9');
    // No tiered storage: nothing was uploaded, so no offset (Kafka's UnifiedLog answers -1).
    assert.deepEqual(await one(9, -5), { errorCode: ErrorCode.NONE, offset: -1n, timestamp: -1n });
  });

  it('answers any other negative timestamp UNSUPPORTED_VERSION', async () => {
    assert.deepEqual(await one(10, -6), unsupported);
    assert.deepEqual(await one(10, -100), unsupported);
    // A timestamp lookup still works next to it in the same request.
    assert.deepEqual(
      await list(10, [
        [0, -7],
        [1, BASE_MS],
      ]),
      [unsupported, { errorCode: ErrorCode.NONE, offset: -1n, timestamp: -1n }],
    );
  });

  it('v0 takes latest and earliest only, as Kafka handleListOffsetRequestV0 does', async () => {
    const v0 = async (timestamp: number): Promise<[number, bigint[]]> => {
      const response = await suite.client.call(ApiKey.LIST_OFFSETS, 0, {
        replicaId: -1,
        topics: [
          {
            name: TOPIC,
            partitions: [
              { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp), maxNumOffsets: 1 },
            ],
          },
        ],
      });
      const p = response.topics[0].partitions[0];
      return [p.errorCode, p.oldStyleOffsets];
    };
    assert.deepEqual(await v0(-1), [ErrorCode.NONE, [3n]]);
    assert.deepEqual(await v0(-2), [ErrorCode.NONE, [0n]]);
    assert.deepEqual(await v0(-3), [ErrorCode.UNSUPPORTED_VERSION, []]);
  });

  it('answers INVALID_REQUEST for a partition named twice, and the others as usual', async () => {
    const invalid = { errorCode: ErrorCode.INVALID_REQUEST, offset: -1n, timestamp: -1n };
    assert.deepEqual(
      await list(7, [
        [0, -1],
        [1, -1],
        [0, -2],
      ]),
      [invalid, { errorCode: ErrorCode.NONE, offset: 0n, timestamp: -1n }, invalid],
    );
  });
});
