// The frame pool's metrics of one real broker process (brook.metrics.listener), and what they show: produce
// frames kept by the tail cache come back to the pool when their topic is deleted, and the next topic's appends
// reuse them instead of allocating new buffers (external memory, which V8 answers with full collections). The
// pool's own idle bound is set far below what the cache held, so without the cache's unused budget lent to the
// pool most of those frames would be dropped and allocated again.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';
import { type Samples, scrape, startMeteredBroker } from './scrape.js';

const KiB = 1024;
const BATCHES = 24;
const RECORD_BYTES = 60 * KiB;
const FP = 'brook_network_framepool';

describe('frame pool metrics of a single broker', () => {
  let broker: BrokerProcess;
  let port: number;
  let client: WireClient;

  before(async () => {
    ({ broker, metricsPort: port } = await startMeteredBroker({
      // Room for every produce frame below in the cache, and for two of them in the pool's own idle bound.
      'brook.log.tail.cache.bytes': 4 * 1024 * KiB,
      'brook.network.frame.pool.bytes': 160 * KiB,
    }));
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  const produceAll = async (topic: string): Promise<void> => {
    await createTopic(client, topic, { numPartitions: 1 });
    for (let i = 0; i < BATCHES; i++) {
      const records = buildBatch([{ value: Buffer.alloc(RECORD_BYTES, i) }]);
      const answer = await produceBatch(client, topic, records);
      assert.equal(answer.errorCode, ErrorCode.NONE);
    }
  };

  it('counts frames allocated and reused, and a deleted topic hands its cached frames to the next one', async () => {
    await produceAll('first');
    const afterFirst = await scrape(port);
    const allocated = afterFirst.value(`${FP}_allocated_total`);
    assert.ok(allocated >= BATCHES, `each produce frame is still cached, so each was new: ${allocated}`);
    assert.ok(afterFirst.value(`${FP}_idle_bytes`) <= 160 * KiB);

    const deleted = await client.call(ApiKey.DELETE_TOPICS, 4, {
      topics: [],
      topicNames: ['first'],
      timeoutMs: 10_000,
    });
    assert.equal(deleted.responses[0].errorCode, ErrorCode.NONE);
    // The log closes a little after the answer; its cache's frames then become idle, beyond the pool's own bound.
    const idle = await waitFor('the deleted topic frames idle', async () => {
      const s: Samples = await scrape(port);
      const bytes = s.value(`${FP}_idle_bytes`);
      return bytes >= BATCHES * RECORD_BYTES ? bytes : undefined;
    });
    assert.ok(idle > 160 * KiB);

    await produceAll('second');
    const afterSecond = await scrape(port);
    const fresh = afterSecond.value(`${FP}_allocated_total`) - allocated;
    assert.ok(fresh <= 2, `the second topic's frames came from the idle ones: ${fresh} allocated`);
    assert.ok(afterSecond.value(`${FP}_reused_total`) >= BATCHES - 2);
  });
});
