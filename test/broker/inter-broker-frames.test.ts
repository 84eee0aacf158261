// Inter-broker reads into pooled frames, against a real broker process: a large Fetch answer read through
// InterBrokerConnection lands in a frame of the given FramePool (poisoning idle memory), stays intact while the
// caller holds it (requestHeld), becomes reusable once given back (releaseFrame) and is taken again by the next
// answer; an answer of an ordinary request() leaves the pool, since its decoded body may keep views of it. This is
// what a follower's fetcher relies on (RemoteLeaderEndPoint releases an answer's frame when the next fetch starts).
// The same over TLS: the decrypted bytes are read into the connection's own buffers and the pool's frames as well
// (a TLS follower used to take a fresh buffer per read). And an answer of several partitions above 1 MiB, as a
// follower of sixteen busy partitions gets (about 2 MB each), is pooled too: such answers used to be fresh
// buffers every time, most of a follower's replicated bytes passing through new external memory.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InterBrokerConnection } from '../../src/broker/cluster/inter-broker-connection.js';
import { FramePool } from '../../src/common/frame-pool.js';
import type { FetchResponse } from '../../src/protocol/messages/01-fetch.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { isBatchCrcValid } from '../../src/protocol/records/batch-crc.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import type { InterBrokerSecurity } from '../../src/security/inter-broker.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopic, fetchBody, produceBatch, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const TOPIC = 'frames';
/** A topic whose fetch answer over all partitions is larger than 1 MiB. */
const LARGE_TOPIC = 'frames-large';
const LARGE_PARTITIONS = 3;
const LARGE_BATCH_RECORDS = 10;
const LARGE_VALUE_BYTES = 40_000;
const BATCHES = 3;
const RECORDS_PER_BATCH = 8;
const VALUE_BYTES = 8000;
const POISON = 0xa5;

/** The partition's records in one answer, checked: every batch whole and its CRC valid. */
function recordsOf(response: FetchResponse): Buffer {
  const data = response.responses[0]!.partitions[0]!;
  assert.equal(data.errorCode, 0);
  const records = data.records ?? Buffer.alloc(0);
  let batches = 0;
  for (let pos = 0; pos + 12 <= records.length; pos += 12 + records.readInt32BE(pos + 8)) {
    assert.ok(isBatchCrcValid(records, pos), `batch at ${pos} fails its CRC`);
    batches++;
  }
  assert.equal(batches, BATCHES);
  return records;
}

/** Holds, releases and reuses frames of fetch answers read over `security` from the broker's `port`. */
async function holdsAndReuses(port: number, security?: InterBrokerSecurity): Promise<void> {
  const pool = new FramePool(4 * 1024 * 1024, true);
  const connection = new InterBrokerConnection('127.0.0.1', port, 'frames-test', security, pool);
  try {
    const first = await connection.requestHeld<FetchResponse>(
      ApiKey.FETCH,
      12,
      fetchBody(TOPIC, 0, 0),
      10_000,
    );
    assert.ok(connection.readsIntoOwnBuffers, "reads land in buffers of the connection, not Node's");
    const records = recordsOf(first.response);
    assert.ok(records.length > BATCHES * RECORDS_PER_BATCH * VALUE_BYTES);
    assert.equal(records.buffer, first.frame.buffer, 'the records are a view of the held frame');
    assert.equal(pool.stats.allocated, 1, 'the answer was read into a pooled frame');
    const copy = Buffer.from(records);

    // Held: a second answer cannot take the first one's memory.
    const second = await connection.requestHeld<FetchResponse>(
      ApiKey.FETCH,
      12,
      fetchBody(TOPIC, 0, 0),
      10_000,
    );
    assert.notEqual(second.frame.buffer, first.frame.buffer);
    assert.deepEqual(records, copy, 'a held frame keeps its bytes');
    assert.deepEqual(recordsOf(second.response), copy);

    // Released: poisoned (BROOK_DEBUG_POISON_FRAMES's check) and handed to the next answer.
    connection.releaseFrame(first.frame);
    assert.equal(pool.stats.recycled, 1);
    assert.ok(records.every((b) => b === POISON));
    connection.releaseFrame(second.frame);
    const third = await connection.requestHeld<FetchResponse>(
      ApiKey.FETCH,
      12,
      fetchBody(TOPIC, 0, 0),
      10_000,
    );
    assert.equal(pool.stats.reused, 1, 'the next answer took an idle frame');
    assert.deepEqual(recordsOf(third.response), copy);
    connection.releaseFrame(third.frame);

    // An ordinary request's answer is not the caller's to release: its frame leaves the pool.
    const dropped = pool.stats.dropped;
    const plain = await connection.request<FetchResponse>(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, 0), 10_000);
    assert.equal(pool.stats.dropped, dropped + 1);
    assert.deepEqual(recordsOf(plain), copy);
  } finally {
    connection.close();
  }
}

describe('inter-broker reads into pooled frames', () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-frames-'));
  let certs: DevCertFiles;
  let broker: BrokerProcess | undefined;
  let sslPort = 0;

  before(async () => {
    certs = writeDevCertificates({ dir });
    const plainPort = await freePort();
    sslPort = await freePort();
    broker = await startBroker({
      port: plainPort,
      overrides: {
        listeners: `PLAINTEXT://127.0.0.1:${plainPort},SSL://127.0.0.1:${sslPort}`,
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL',
        'inter.broker.listener.name': 'PLAINTEXT',
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.location': certs.brokerKeystorePem,
        'ssl.truststore.type': 'PEM',
        'ssl.truststore.location': certs.caCert,
      },
    });
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(client, TOPIC);
      for (let b = 0; b < BATCHES; b++) {
        const records = Array.from({ length: RECORDS_PER_BATCH }, (_, r) => ({
          value: Buffer.alloc(VALUE_BYTES, (b * RECORDS_PER_BATCH + r) % 200),
        }));
        const answer = await produceBatch(client, TOPIC, buildBatch(records), 1);
        assert.equal(answer.errorCode, 0);
      }
      await createTopic(client, LARGE_TOPIC, { numPartitions: LARGE_PARTITIONS });
      for (let p = 0; p < LARGE_PARTITIONS; p++) {
        for (let b = 0; b < 2; b++) {
          const records = Array.from({ length: LARGE_BATCH_RECORDS }, (_, r) => ({
            value: Buffer.alloc(LARGE_VALUE_BYTES, (p * 31 + b * 7 + r) % 200),
          }));
          const answer = await produceBatch(client, LARGE_TOPIC, buildBatch(records), 1, p);
          assert.equal(answer.errorCode, 0);
        }
      }
    } finally {
      client.close();
    }
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds a fetch answer until it is released, then reuses its memory', { timeout: 60_000 }, async () => {
    assert.ok(broker);
    await holdsAndReuses(broker.port);
  });

  it('pools an answer of several partitions above 1 MiB as well', { timeout: 60_000 }, async () => {
    assert.ok(broker);
    const pool = new FramePool(16 * 1024 * 1024, true);
    const connection = new InterBrokerConnection('127.0.0.1', broker.port, 'frames-test', undefined, pool);
    const one = fetchBody(LARGE_TOPIC, 0, 0);
    const body = {
      ...one,
      maxBytes: 10 * 1024 * 1024,
      topics: [
        {
          ...one.topics[0]!,
          partitions: Array.from({ length: LARGE_PARTITIONS }, (_, p) => ({
            ...one.topics[0]!.partitions[0]!,
            partition: p,
          })),
        },
      ],
    };
    try {
      const first = await connection.requestHeld<FetchResponse>(ApiKey.FETCH, 12, body, 10_000);
      const partitions = first.response.responses[0]!.partitions;
      assert.equal(partitions.length, LARGE_PARTITIONS);
      const bytes = partitions.reduce((sum, p) => sum + (p.records?.length ?? 0), 0);
      const expected = LARGE_PARTITIONS * 2 * LARGE_BATCH_RECORDS * LARGE_VALUE_BYTES;
      assert.ok(bytes > expected, `the answer carries every batch (${bytes} bytes)`);
      assert.ok(first.frame.length > 1024 * 1024, `a frame of ${first.frame.length} bytes`);
      assert.ok(pool.isPooled(first.frame), 'the large answer was read into a pooled frame');
      assert.equal(pool.stats.allocated, 1);
      connection.releaseFrame(first.frame);
      assert.equal(pool.stats.recycled, 1, 'given back, it is kept for the next answer');
      const second = await connection.requestHeld<FetchResponse>(ApiKey.FETCH, 12, body, 10_000);
      assert.equal(second.frame.buffer, first.frame.buffer, 'the next answer took the same memory');
      assert.equal(pool.stats.reused, 1);
      connection.releaseFrame(second.frame);
    } finally {
      connection.close();
    }
  });

  it('does the same over TLS', { timeout: 60_000 }, async () => {
    await holdsAndReuses(sslPort, {
      tls: { ca: readFileSync(certs.caCert), servername: 'localhost' },
      sasl: null,
    });
  });
});
