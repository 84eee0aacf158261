// Compaction below the last stable offset, through the wire: a broker process with a fast cleaner, a compacted
// topic of small segments, and an open transaction whose first record lies inside an older (rolled) segment, so
// the last stable offset is in the middle of that segment. Kafka's cleaner (LogCleanerManager.cleanableOffsets,
// then LogToClean's calculateCleanableBytes) stops at the base offset of the segment that holds the first
// uncleanable offset: only the segments wholly below it are cleaned, and only their keys enter the offset map
// (Cleaner.buildOffsetMap over [first dirty, that base)). So a consumer sees the keys of those segments compacted,
// and every record from that segment on as it was produced, the open transaction's included. The data of a
// transaction aborted meanwhile goes from the cleaned segments even though its ABORT marker lies past the cut
// (Kafka's collectAbortedTransactions finds it through the later segments' transaction indexes). A crash and
// restart keeps all of this: the open transaction still holds the last stable offset.

import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { callCoordinator, transactionCompleted } from '../helpers/txn-session.js';
import {
  consumerFetchBody,
  createTopic,
  fetchPartition,
  readPartition,
  WireClient,
} from '../helpers/wire-client.js';

const TOPIC = 'open-txn-table';
/** A record batch of about 300 bytes: three fill a 1024-byte segment, a fourth rolls it. */
const pad = (value: string) => value.padEnd(230, '.');

interface Transaction {
  readonly tid: string;
  readonly producerId: bigint;
  readonly producerEpoch: number;
  sequence: number;
}

describe('compaction with an open transaction inside an older segment', () => {
  const brokerOptions = {
    overrides: { 'log.cleaner.backoff.ms': 100, 'transaction.state.log.replication.factor': 1 },
    keepDataDir: true,
  };
  let broker: BrokerProcess;
  let client: WireClient;

  before(async () => {
    broker = await startBroker(brokerOptions);
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, {
      numPartitions: 1,
      replicationFactor: 1,
      configs: { 'cleanup.policy': 'compact', 'segment.bytes': '1024', 'min.cleanable.dirty.ratio': '0.01' },
    });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
    if (broker) rmSync(broker.dataDir, { recursive: true, force: true });
  });

  async function begin(tid: string, topic = TOPIC): Promise<Transaction> {
    const init = await callCoordinator(
      () => [broker],
      1,
      tid,
      ApiKey.INIT_PRODUCER_ID,
      4,
      { transactionalId: tid, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 },
      (r) => r.errorCode,
      60_000,
    );
    assert.equal(init.errorCode, ErrorCode.NONE);
    const added = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
      transactions: [],
      v3AndBelowTransactionalId: tid,
      v3AndBelowProducerId: init.producerId,
      v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [{ name: topic, partitions: [0] }],
    });
    assert.equal(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.NONE);
    return { tid, producerId: init.producerId, producerEpoch: init.producerEpoch, sequence: 0 };
  }

  /** Produces one record (to TOPIC unless told), in `txn` when given; answers its offset. */
  async function produce(
    key: string,
    value: string,
    options: { txn?: Transaction; topic?: string; timestamp?: number } = {},
  ): Promise<number> {
    const { txn, topic = TOPIC, timestamp } = options;
    const record = { key, value: pad(value), timestamp };
    const records = txn
      ? buildBatch([record], {
          producerId: Number(txn.producerId),
          producerEpoch: txn.producerEpoch,
          baseSequence: txn.sequence++,
          transactional: true,
        })
      : buildBatch([record]);
    const r = await client.call(ApiKey.PRODUCE, 9, {
      transactionalId: txn?.tid ?? null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });
    const p = r.responses[0].partitionResponses[0];
    assert.equal(p.errorCode, ErrorCode.NONE);
    return Number(p.baseOffset);
  }

  async function abort(txn: Transaction): Promise<void> {
    const ended = await callCoordinator(
      () => [broker],
      1,
      txn.tid,
      ApiKey.END_TXN,
      3,
      {
        transactionalId: txn.tid,
        producerId: txn.producerId,
        producerEpoch: txn.producerEpoch,
        committed: false,
      },
      (r) => r.errorCode,
      60_000,
    );
    assert.equal(ended.errorCode, ErrorCode.NONE);
    await transactionCompleted(() => [broker], txn.tid, false);
  }

  async function lastStableOffset(): Promise<number> {
    const fetched = await client.call(
      ApiKey.FETCH,
      12,
      consumerFetchBody([{ topic: TOPIC, partitions: [fetchPartition(0, 0)] }]),
    );
    return Number(fetched.responses[0].partitions[0].lastStableOffset);
  }

  /** `offset key=value` of every data record a read_uncommitted consumer gets from offset 0. */
  async function records(topic = TOPIC): Promise<string[]> {
    return (await readPartition(client, topic, 0))
      .filter((r) => r.key !== null && /^[kf]/.test(r.key.toString()))
      .map((r) => `${r.offset} ${r.key}=${r.value?.toString().replace(/\.+$/, '')}`);
  }

  /** Base offsets of the partition's segment files. */
  const segmentBases = () =>
    readdirSync(join(broker.dataDir, `${TOPIC}-0`))
      .filter((name) => name.endsWith('.log'))
      .map((name) => Number(name.slice(0, 20)))
      .sort((a, b) => a - b);

  async function until(what: string, done: (got: string[]) => boolean, topic = TOPIC): Promise<string[]> {
    const deadline = Date.now() + 20_000;
    // A broker just restarted may answer a fetch with an error for a moment: that is no answer yet.
    const read = () => records(topic).catch(() => []);
    let got = await read();
    while (!done(got) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      got = await read();
    }
    assert.ok(done(got), `${what}: ${JSON.stringify(got)}`);
    return got;
  }

  it('cleans only below the segment holding the last stable offset, and keeps the open transaction', async () => {
    const aborted = await begin('lso-aborted');
    const produced: string[] = [];
    const plain = async (key: string, value: string) => {
      produced.push(`${await produce(key, value)} ${key}=${value}`);
    };
    assert.equal(await produce('k9', 'aborted', { txn: aborted }), 0);
    await plain('k0', 'v1');
    await plain('k1', 'v1');
    await plain('k2', 'v1');
    await plain('k0', 'v2');
    await plain('k1', 'v2');
    await plain('k2', 'v2');
    const open = await begin('lso-open');
    assert.equal(await produce('k1', 'open', { txn: open }), 7);
    // Its ABORT marker (offset 8) lies past the first uncleanable offset, in the segment the open transaction holds.
    await abort(aborted);
    for (let round = 3; round <= 4; round++) {
      for (const key of ['k0', 'k1', 'k2']) await plain(key, `v${round}`);
    }
    const bases = segmentBases();
    assert.deepEqual(
      bases.slice(0, 3),
      [0, 3, 6],
      'three batches a segment; the open transaction is inside the third',
    );
    assert.ok(bases.length >= 5, `later segments rolled too: ${bases}`);

    assert.equal(
      await lastStableOffset(),
      7,
      'the open transaction holds the last stable offset inside segment 6',
    );

    // Segments 0 and 3 are cleaned against their own keys: k0 and k1 of round 1 (and the aborted record) go, k2 of
    // round 1 stays, being the latest of its key below 6. From 6 on nothing is touched, although every key there
    // is written again later.
    const fromSix = produced.filter((r) => Number(r.split(' ')[0]) >= 6);
    const expected = ['3 k2=v1', '4 k0=v2', '5 k1=v2', fromSix[0]!, '7 k1=open', ...fromSix.slice(1)];
    await until('segments below 6 compacted', (got) => !got.some((r) => r.startsWith('1 ')));
    // More looks of the cleaner (every 100 ms) must not remove anything at or after the segment of the LSO.
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(await records(), expected);

    // A crash does not let go of the open transaction: producer state rebuilt from the files holds the last stable
    // offset where it was, and the cleaner, running again, still stops below segment 6.
    await broker.kill();
    client.close();
    broker = await startBroker({ ...brokerOptions, dataDir: broker.dataDir });
    client = await WireClient.connect(broker.host, broker.port);
    await until('the partition is served again', (got) => got.length === expected.length);
    assert.equal(await lastStableOffset(), 7, 'the open transaction still holds the last stable offset');
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(await records(), expected, 'nothing at or after segment 6 removed after the restart');

    // Once the open transaction is aborted too, the last stable offset reaches the log end: the next cleaning goes
    // up to the active segment and removes the aborted record (its marker is below the cut now).
    await abort(open);
    const fillers: string[] = [];
    for (let i = 0; i < 4; i++) fillers.push(`${await produce(`f${i}`, 'filler')} f${i}=filler`);
    const latest = produced.slice(-3);
    // The aborted record and the older values may go in different passes (the cut moves as the fillers roll
    // segments): wait for both.
    await until(
      'everything below the active segment compacted',
      (got) => !got.some((r) => r.includes('=open') || /k[0-2]=v[1-3]$/.test(r)),
    );
    const got = await records();
    for (const record of latest) assert.ok(got.includes(record), `${record} kept: ${JSON.stringify(got)}`);
    assert.ok(
      got.every((r) => !/k[0-2]=v[1-3]$/.test(r)),
      `only the latest value of each key left: ${JSON.stringify(got)}`,
    );
  });

  it('max.compaction.lag.ms looks at the dirty segments past the cut too, as Kafka does', async () => {
    // Kafka's LogCleanerManager.maxCompactionDelay takes the first batch timestamp of every dirty inactive segment,
    // those from the segment of the first uncleanable offset on included, and a log whose oldest is past the lag is
    // cleaned (below the cut) whatever its dirty ratio. Before the fix Brook looked below the cut only, so segments
    // of old records after an open transaction did not make it clean what it could.
    const topic = 'open-txn-lagged';
    await createTopic(client, topic, {
      numPartitions: 1,
      replicationFactor: 1,
      configs: {
        'cleanup.policy': 'compact',
        'segment.bytes': '1024',
        'min.cleanable.dirty.ratio': '1.0',
        'max.compaction.lag.ms': '86400000',
      },
    });
    for (const [key, value] of [
      ['k0', 'v1'],
      ['k0', 'v2'],
      ['k1', 'v1'],
      ['k1', 'v2'],
      ['k2', 'v1'],
      ['k2', 'v2'],
    ]) {
      await produce(key!, value!, { topic });
    }
    const open = await begin('lagged-open', topic);
    assert.equal(
      await produce('k3', 'open', { topic, txn: open }),
      6,
      'the open transaction starts segment 6',
    );
    const twoDaysAgo = Date.now() - 2 * 86_400_000;
    for (let i = 0; i < 6; i++) await produce(`old-${i}`, 'old', { topic, timestamp: twoDaysAgo });
    // A pass swaps its segment groups one at a time (a 1024-byte segment is a group): wait for the last one too.
    const got = await until(
      'segments below 6 cleaned by max.compaction.lag.ms',
      (r) => !r.includes('0 k0=v1') && !r.includes('4 k2=v1'),
      topic,
    );
    assert.deepEqual(got.slice(0, 4), ['1 k0=v2', '3 k1=v2', '5 k2=v2', '6 k3=open']);
  });
});
