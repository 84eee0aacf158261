// Old clients' request versions over the wire, checked against what Kafka's broker answers them: records
// stored as v2 batches and read back by Fetch v0-v3 (Kafka's RecordsUtil.downConvert).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { decodeMessageSet } from '../../src/protocol/records/legacy-message.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, fetchBody } from '../helpers/wire-client.js';

describe('old clients against a Brook broker', () => {
  const suite = useBrokerWithClient({}, (suite) =>
    createTopic(suite.client, 'old-fetch', { numPartitions: 1 }),
  );

  async function produceBatch(topic: string, values: string[], compression = 0): Promise<void> {
    const response = await suite.client.call(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [
        {
          name: topic,
          partitionData: [
            {
              index: 0,
              records: buildBatch(
                values.map((value) => ({ value })),
                { compression },
              ),
            },
          ],
        },
      ],
    });
    assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
  }

  it('leaves out the records before the fetch offset of an uncompressed v2 batch given as magic 0 or 1', async () => {
    // Offsets 0-3 in one uncompressed batch, 4-6 in one gzip batch.
    await produceBatch('old-fetch', ['a', 'b', 'c', 'd']);
    await produceBatch('old-fetch', ['e', 'f', 'g'], 1);
    for (const version of [0, 1, 2, 3]) {
      const fromMiddle = await suite.client.call(ApiKey.FETCH, version, fetchBody('old-fetch', 0, 2));
      const data = fromMiddle.responses[0].partitions[0];
      assert.equal(data.errorCode, ErrorCode.NONE);
      // Uncompressed magic 0/1 messages are one per entry: Kafka drops those before the fetch offset. A
      // compressed wrapper is kept whole, as in Kafka, and the client skips its early messages.
      assert.deepEqual(
        decodeMessageSet(data.records).messages.map((m) => m.offset),
        [2, 3, 4, 5, 6],
        `fetch v${version} from offset 2`,
      );
      const fromGzipMiddle = await suite.client.call(ApiKey.FETCH, version, fetchBody('old-fetch', 0, 5));
      assert.deepEqual(
        decodeMessageSet(fromGzipMiddle.responses[0].partitions[0].records).messages.map((m) => m.offset),
        [4, 5, 6],
        `fetch v${version} from offset 5`,
      );
    }
  });
});
