// Produce frames reused by the broker (brook.network.frame.pool.bytes) against a real broker process: large
// produce requests pipelined on one connection while a tail consumer fetches on another, with a tail cache small
// enough that frames are evicted and reused all the time. The test helpers start brokers with
// BROOK_DEBUG_POISON_FRAMES=1, so a frame reused while the log, the tail cache or a fetch response still used
// it would put 0xa5 bytes into the log or onto the wire: every record must read back exactly as produced, from
// the tail consumer and from a read of the whole log afterwards.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, fetchBody, readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'reuse';
const REQUESTS = 120;
const RECORDS_PER_BATCH = 10;
const VALUE_BYTES = 9000;

/** A value no other record has, so a misplaced or poisoned byte cannot go unnoticed. */
function value(request: number, record: number): Buffer {
  const v = Buffer.allocUnsafe(VALUE_BYTES);
  for (let at = 0; at + 4 <= v.length; at += 4)
    v.writeUInt32BE((request * 1_000_003 + record * 7919 + at) >>> 0, at);
  return v;
}

describe('produce frame reuse', () => {
  const suite = useBrokerWithClient({ overrides: { 'brook.log.tail.cache.bytes': 600 * 1024 } }, (s) =>
    createTopic(s.client, TOPIC),
  );

  it('never lets a reused frame change what the log holds or what a fetch sends', {
    timeout: 60_000,
  }, async () => {
    const { broker, client } = suite;
    const tail = await WireClient.connect(broker.host, broker.port);
    const seen: Buffer[] = [];
    let producing = true;
    const consumer = (async () => {
      let offset = 0;
      while (producing || offset < REQUESTS * RECORDS_PER_BATCH) {
        const response = await tail.call(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, offset, 50, 1));
        const data = response.responses[0].partitions[0];
        assert.equal(data.errorCode, 0);
        const bytes: Buffer = data.records ?? Buffer.alloc(0);
        for (let pos = 0; pos + 12 <= bytes.length; pos += 12 + bytes.readInt32BE(pos + 8)) {
          if (pos + 12 + bytes.readInt32BE(pos + 8) > bytes.length) break;
          for (const r of readRecords(bytes, pos)) if (r.offset >= offset) seen[r.offset] = r.value!;
          offset = batchHeader.lastOffset(bytes, pos) + 1;
        }
      }
    })();
    try {
      // Pipelined, so that frames are gathered while earlier ones are still cached or being sent.
      let inFlight = 0;
      for (let i = 0; i < REQUESTS; i++) {
        const records = Array.from({ length: RECORDS_PER_BATCH }, (_, r) => ({ value: value(i, r) }));
        client.send(ApiKey.PRODUCE, 9, {
          transactionalId: null,
          acks: 1,
          timeoutMs: 5000,
          topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatch(records) }] }],
        });
        if (++inFlight >= 8) {
          const answer = await client.receive();
          inFlight--;
          assert.equal(answer.responses[0].partitionResponses[0].errorCode, 0);
        }
      }
      for (; inFlight > 0; inFlight--) {
        const answer = await client.receive();
        assert.equal(answer.responses[0].partitionResponses[0].errorCode, 0);
      }
    } finally {
      producing = false;
    }
    await consumer;
    tail.close();
    const expected = (offset: number) =>
      value(Math.floor(offset / RECORDS_PER_BATCH), offset % RECORDS_PER_BATCH);
    assert.equal(seen.length, REQUESTS * RECORDS_PER_BATCH);
    for (let o = 0; o < seen.length; o++)
      assert.ok(seen[o]?.equals(expected(o)), `tail fetch of offset ${o}`);
    const all = await readPartition(client, TOPIC, 0);
    assert.equal(all.length, REQUESTS * RECORDS_PER_BATCH);
    for (const r of all) assert.ok(r.value!.equals(expected(r.offset)), `log read of offset ${r.offset}`);
  });
});
