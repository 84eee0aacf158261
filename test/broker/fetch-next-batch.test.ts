// A consumer catching up fetches each time from where its last fetch's bytes were cut (storage/log-segment.ts,
// nextBatch): through a real broker process with no tail cache and an index entry for every batch, a chain of
// fetches that each cut a batch reads the log from the front of a segment whose older index entries are not in
// memory, and answers every record in order; the broker's read system calls per fetch (/proc/PID/io syscr, its
// threads together) show the offset lookup served without the index file's reads.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { STORAGE_LIMITS } from '../../src/storage/log-config.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopic, fetchValuesAt, produceBatch, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'next-batch';
/**
 * Batches enough for the offset index (8-byte entries, one per batch here) to keep only its newest in memory (its
 * warm part holds one to two times indexWarmBytes): the first thousand or so are read from the index file.
 */
const BATCHES = 3 * (STORAGE_LIMITS.indexWarmBytes / 8);
const VALUE_BYTES = 900;
/** Room for one batch and part of the next: every fetch cuts the batch after the one it returns. */
const PARTITION_MAX_BYTES = 1500;
const FETCHES = 300;

const recordValue = (i: number): string => `${i}:`.padEnd(VALUE_BYTES, 'v');

function readSyscalls(pid: number): number {
  const match = /^syscr:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  assert.ok(match, `no syscr in /proc/${pid}/io`);
  return Number(match[1]);
}

describe('a consumer catching up from where its last fetch was cut', () => {
  let broker: BrokerProcess;
  let client: WireClient;

  before(async () => {
    broker = await startBroker({ overrides: { 'brook.log.tail.cache.bytes': 0 } });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1, configs: { 'index.interval.bytes': '1' } });
    for (let i = 0; i < BATCHES; i++) {
      const answer = await produceBatch(client, TOPIC, buildBatch([{ value: recordValue(i) }]), 1);
      assert.equal(answer.errorCode, ErrorCode.NONE);
    }
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('answers every record in order, with no index file reads per fetch', async () => {
    const fetchAt = (offset: number) => fetchValuesAt(client, TOPIC, offset, PARTITION_MAX_BYTES);
    // The first fetch finds its batch through the index; every later one starts where the one before was cut.
    let { next } = await fetchAt(0);
    const before = readSyscalls(broker.pid);
    const values: string[] = [];
    for (let i = 0; i < FETCHES; i++) {
      const answer = await fetchAt(next);
      values.push(...answer.values);
      next = answer.next;
    }
    const perFetch = (readSyscalls(broker.pid) - before) / FETCHES;
    assert.deepEqual(
      values,
      Array.from({ length: FETCHES }, (_, i) => recordValue(i + 1)),
    );
    // A fetch reads its request from the socket and its bytes from the segment (2 to 3 here); a lookup through the
    // index adds its reads of the index file and of the batch header it points to (3 to 4 a fetch where the index is warm, more where it is cold).
    assert.ok(perFetch < 4, `${perFetch.toFixed(2)} read system calls per fetch`);
  });
});
