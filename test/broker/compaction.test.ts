// Log compaction through the wire: a broker process with a fast cleaner, a topic with cleanup.policy=compact,
// keyed records and tombstones produced over Produce, and Fetch from offset 0 once the cleaner has run.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { writeOffsetCheckpoint } from '../../src/storage/checkpoint-file.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { alterConfigs, TOPIC_RESOURCE } from '../helpers/dynamic-configs.js';
import { createCommitTopic, offsetCommitBody } from '../helpers/offset-commits.js';
import { createTopic, produceBatch, readPartition, WireClient } from '../helpers/wire-client.js';

describe('log compaction over the wire', () => {
  let broker: BrokerProcess;
  let client: WireClient;

  const create = (name: string, configs: Record<string, string>) =>
    createTopic(client, name, { numPartitions: 1, replicationFactor: 1, configs });
  const produce = (topic: string, records: Buffer) => produceBatch(client, topic, records);

  before(async () => {
    broker = await startBroker({ overrides: { 'log.cleaner.backoff.ms': 100 } });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('refuses records without a key on a compacted topic with INVALID_RECORD', async () => {
    await create('keys-required', { 'cleanup.policy': 'compact' });
    const keyless = await produce(
      'keys-required',
      buildBatch([{ key: 'k', value: 'a' }, { value: 'no key' }]),
    );
    assert.equal(keyless.errorCode, ErrorCode.INVALID_RECORD);
    const keyed = await produce('keys-required', buildBatch([{ key: 'k', value: 'a' }]));
    assert.equal(keyed.errorCode, ErrorCode.NONE);
    await create('keys-optional', {});
    const plain = await produce('keys-optional', buildBatch([{ value: 'no key' }]));
    assert.equal(plain.errorCode, ErrorCode.NONE, 'only compacted topics need keys');
  });

  it('the cleaner leaves the latest value of each key at its original offset, and removes deleted keys', async () => {
    await create('table', {
      'cleanup.policy': 'compact',
      'segment.bytes': '1024',
      'min.cleanable.dirty.ratio': '0.01',
      'delete.retention.ms': '0',
    });
    const latest = new Map<string, { offset: number; value: string | null }>();
    for (let round = 0; round < 5; round++) {
      for (let k = 0; k < 20; k++) {
        const value = `round-${round}-`.padEnd(120, 'x');
        const response = await produce('table', buildBatch([{ key: `key-${k}`, value }]));
        assert.equal(response.errorCode, ErrorCode.NONE);
        latest.set(`key-${k}`, { offset: Number(response.baseOffset), value });
      }
    }
    for (let k = 0; k < 5; k++) {
      const response = await produce('table', buildBatch([{ key: `key-${k}`, value: null }]));
      latest.set(`key-${k}`, { offset: Number(response.baseOffset), value: null });
    }
    // Unique keys after the data, so that all of it leaves the active segment (which is never cleaned).
    for (let i = 0; i < 30; i++) {
      const value = 'filler'.padEnd(120, 'y');
      const response = await produce('table', buildBatch([{ key: `filler-${i}`, value }]));
      latest.set(`filler-${i}`, { offset: Number(response.baseOffset), value });
    }
    const expected = [...latest]
      .filter(([, v]) => v.value !== null)
      .map(([key, v]) => ({ offset: v.offset, key, value: v.value }))
      .sort((a, b) => a.offset - b.offset);
    const read = async () =>
      (await readPartition(client, 'table', 0)).map((r) => ({
        offset: r.offset,
        key: r.key?.toString() ?? null,
        value: r.value?.toString() ?? null,
      }));
    const deadline = Date.now() + 30_000;
    let got = await read();
    const settled = () =>
      got.filter((r) => !r.key?.startsWith('filler') && r.offset < expected.at(-1)!.offset);
    while (Date.now() < deadline) {
      // Done when the non-filler part holds exactly the latest non-deleted records.
      const expectedData = expected.filter((r) => !r.key.startsWith('filler'));
      if (JSON.stringify(settled()) === JSON.stringify(expectedData)) break;
      // A tombstone goes in a pass after the one that stamped its delete horizon, and, as in Kafka, a log is picked
      // for dirty data only: keep writing one key after the rest, so that passes keep coming.
      await produce('table', buildBatch([{ key: 'nudge', value: 'nudge'.padEnd(120, 'z') }]));
      await new Promise((r) => setTimeout(r, 200));
      got = await read();
    }
    const expectedData = expected.filter((r) => !r.key.startsWith('filler'));
    assert.deepEqual(settled(), expectedData, 'latest value per key, original offsets, deleted keys gone');
    const fillers = got.filter((r) => r.key?.startsWith('filler'));
    assert.deepEqual(
      fillers,
      expected.filter((r) => r.key.startsWith('filler')),
    );
    assert.ok(got.length < 100, `${got.length} records left of 155 produced`);
  });

  it('max.compaction.lag.ms rolls the active segment, so an overwritten value goes within the lag', async () => {
    // segment.ms stays at its 7-day default: only the lag can roll (Kafka's LogConfig.maxSegmentMs).
    await create('lagged', { 'cleanup.policy': 'compact', 'max.compaction.lag.ms': '1000' });
    const now = Date.now();
    const records = [
      { key: 'k', value: 'first', timestamp: now - 20_000 },
      { key: 'k', value: 'second', timestamp: now - 10_000 },
      { key: 'other', value: 'later', timestamp: now },
    ];
    for (const record of records) {
      const response = await produce('lagged', buildBatch([record]));
      assert.equal(response.errorCode, ErrorCode.NONE);
    }
    const values = async () => (await readPartition(client, 'lagged', 0)).map((r) => r.value?.toString());
    const deadline = Date.now() + 10_000;
    let got = await values();
    while (got.includes('first') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      got = await values();
    }
    assert.deepEqual(got, ['second', 'later'], 'the overwritten value is compacted away');
  });

  it('min.compaction.lag.ms ages records without timestamps by their segment file, as Kafka does', async () => {
    // Kafka's LogCleanerManager.cleanableOffsets compares a segment's largestTimestamp with the lag: its largest
    // record timestamp, or its .log file's last modification when no record has one (timestamp -1, as a v0
    // client's records and a producer's that sends none). Before the fix such segments counted as older than any
    // lag: the overwritten value was cleaned away at once.
    await create('lag-no-timestamps', {
      'cleanup.policy': 'compact',
      'segment.bytes': '1024',
      'min.cleanable.dirty.ratio': '0.01',
      'min.compaction.lag.ms': '3600000',
    });
    const produceUntimestamped = async (key: string, value: string) => {
      const response = await produce('lag-no-timestamps', buildBatch([{ key, value, timestamp: -1 }]));
      assert.equal(response.errorCode, ErrorCode.NONE);
    };
    await produceUntimestamped('k', 'first'.padEnd(300, 'x'));
    await produceUntimestamped('k', 'second'.padEnd(300, 'x'));
    // Unique keys after them, so that both leave the active segment (which is never cleaned).
    for (let i = 0; i < 8; i++) await produceUntimestamped(`filler-${i}`, 'filler'.padEnd(300, 'y'));
    const timestamps = (await readPartition(client, 'lag-no-timestamps', 0)).map((r) => r.timestamp);
    assert.ok(
      timestamps.every((t) => t === -1),
      'stored without timestamps',
    );
    // The cleaner looks every 100 ms: 20 looks at dirty segments written just now.
    await new Promise((r) => setTimeout(r, 2000));
    const values = (await readPartition(client, 'lag-no-timestamps', 0)).map((r) =>
      r.value?.toString().replace(/[xy]+$/, ''),
    );
    assert.deepEqual(values.slice(0, 2), ['first', 'second'], 'the overwritten value stays within the lag');
  });

  it('removes an expired tombstone only with the next pass the log gets for its dirty share', async () => {
    // Kafka 3.9's LogCleanerManager.grabFilthiestCompactedLog picks a log for its dirty ratio or its
    // max.compaction.lag.ms only; a delete horizon that has passed is no reason on its own. So a tombstone that a
    // pass stamped stays while the log takes no writes, and goes with the pass that new dirty data brings.
    await create('quiet-tombstone', {
      'cleanup.policy': 'compact',
      'segment.bytes': '1024',
      'min.cleanable.dirty.ratio': '0.01',
      'delete.retention.ms': '0',
    });
    const value = 'v'.padEnd(300, 'x');
    // k=v at 0 and its tombstone at 1 fill the first segment: each larger batch after them rolls a segment.
    const large = (tag: string) => tag.padEnd(700, 'x');
    for (const records of [
      [{ key: 'k', value }],
      [{ key: 'k', value: null }],
      [{ key: 'other', value: large('w') }],
    ]) {
      const response = await produce('quiet-tombstone', buildBatch(records));
      assert.equal(response.errorCode, ErrorCode.NONE);
    }
    const keys = async () =>
      (await readPartition(client, 'quiet-tombstone', 0)).map((r) => ({
        offset: Number(r.offset),
        key: r.key?.toString(),
        tombstone: r.value === null,
      }));
    // The first pass removes k=v and stamps the tombstone's delete horizon (now, with delete.retention.ms=0).
    let deadline = Date.now() + 10_000;
    while ((await keys()).length === 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const afterFirst = [
      { offset: 1, key: 'k', tombstone: true },
      { offset: 2, key: 'other', tombstone: false },
    ];
    assert.deepEqual(await keys(), afterFirst);
    // The cleaner looks every 100 ms: 20 looks at a log with nothing dirty and an expired tombstone.
    await new Promise((r) => setTimeout(r, 2000));
    assert.deepEqual(await keys(), afterFirst, 'a passed delete horizon alone brings no pass');
    // New data rolls the segment at 2: dirty bytes again, a pass, and the tombstone goes with it.
    const response = await produce('quiet-tombstone', buildBatch([{ key: 'other', value: large('y') }]));
    assert.equal(response.errorCode, ErrorCode.NONE);
    deadline = Date.now() + 10_000;
    while ((await keys()).some((r) => r.tombstone) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await keys(), [
      { offset: 2, key: 'other', tombstone: false },
      { offset: 3, key: 'other', tombstone: false },
    ]);
  });

  it('min.cleanable.dirty.ratio=1.0 never cleans by ratio: the dirty share must exceed it, as in Kafka', async () => {
    // Never cleaned, every cleanable byte is dirty: the ratio is exactly 1.0. Kafka's LogCleanerManager cleans a
    // log whose ratio is strictly greater than min.cleanable.dirty.ratio, so 1.0 turns ratio cleaning off.
    await create('ratio-one', {
      'cleanup.policy': 'compact',
      'segment.bytes': '1024',
      'min.cleanable.dirty.ratio': '1.0',
    });
    for (let round = 0; round < 10; round++) {
      for (let k = 0; k < 3; k++) {
        const value = `round-${round}-`.padEnd(120, 'x');
        const response = await produce('ratio-one', buildBatch([{ key: `key-${k}`, value }]));
        assert.equal(response.errorCode, ErrorCode.NONE);
      }
    }
    const count = async () => (await readPartition(client, 'ratio-one', 0)).length;
    // The cleaner looks every 100 ms: 20 looks at a log of rolled, fully dirty segments.
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(await count(), 30, 'nothing cleaned at ratio 1.0');
    // Just below it the same log is cleaned: the cleaner was running all along.
    await alterConfigs(client, 'ratio-one', { 'min.cleanable.dirty.ratio': '0.99' }, TOPIC_RESOURCE);
    const deadline = Date.now() + 10_000;
    let left = await count();
    while (left === 30 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      left = await count();
    }
    assert.ok(left < 30, `${left} records left of 30 once the ratio is 0.99`);
  });
  it('max.compaction.lag.ms does not count records with timestamp 0, as Kafka does', async () => {
    // Kafka's LogCleanerManager.maxCompactionDelay keeps only first batch timestamps above 0: a segment of records
    // stamped 0 is not "older than the lag" and, with min.cleanable.dirty.ratio=1.0, is not cleaned. Before the fix
    // Brook took 0 for a time 56 years ago and cleaned such a log at once.
    await create('lag-timestamp-zero', {
      'cleanup.policy': 'compact',
      'segment.bytes': '1024',
      'min.cleanable.dirty.ratio': '1.0',
      'max.compaction.lag.ms': '86400000',
    });
    for (const [key, value] of [
      ['k', 'first'],
      ['k', 'second'],
      ['a', 'x'],
      ['b', 'x'],
      ['c', 'x'],
      ['d', 'x'],
    ]) {
      const record = { key, value: value!.padEnd(300, '.'), timestamp: 0 };
      const response = await produce('lag-timestamp-zero', buildBatch([record]));
      assert.equal(response.errorCode, ErrorCode.NONE);
    }
    // The cleaner looks every 100 ms: 20 looks at rolled dirty segments.
    await new Promise((r) => setTimeout(r, 2000));
    const values = (await readPartition(client, 'lag-timestamp-zero', 0)).map(
      (r) => r.value?.toString().split('.')[0],
    );
    assert.deepEqual(values.slice(0, 2), ['first', 'second'], 'nothing cleaned');
  });
});

describe('__consumer_offsets is compacted', () => {
  let broker: BrokerProcess | undefined;
  let dataDir = '';
  const overrides = {
    'log.cleaner.backoff.ms': 100,
    'offsets.topic.num.partitions': 1,
    'offsets.topic.segment.bytes': 4096,
  };
  after(async () => {
    await broker?.stop();
    if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
  });

  const commit = (offset: number) => offsetCommitBody('compacted-group', (partition) => offset + partition);
  const fetchOffsets = async (client: WireClient): Promise<bigint[]> => {
    const fetched = await client.call(ApiKey.OFFSET_FETCH, 8, {
      groupId: '',
      topics: [],
      groups: [
        {
          groupId: 'compacted-group',
          memberId: null,
          memberEpoch: -1,
          topics: [{ name: 't', partitionIndexes: [0, 1, 2, 3] }],
        },
      ],
      requireStable: true,
    });
    return fetched.groups[0].topics[0].partitions.map((p: { committedOffset: bigint }) => p.committedOffset);
  };

  it('keeps the last commit of each partition through cleanings and a restart', async () => {
    broker = await startBroker({ overrides, keepDataDir: true });
    dataDir = broker.dataDir;
    let client = await WireClient.connect(broker.host, broker.port);
    await createCommitTopic(client);
    await client.call(ApiKey.FIND_COORDINATOR, 4, {
      key: '',
      keyType: 0,
      coordinatorKeys: ['compacted-group'],
    });
    for (let i = 0; ; i++) {
      const r = await client.call(ApiKey.OFFSET_COMMIT, 8, commit(0));
      if (r.topics[0].partitions[0].errorCode === 0) break;
      assert.ok(i < 100, `coordinator never ready: ${r.topics[0].partitions[0].errorCode}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const count = 1000;
    for (let i = 1; i <= count; i++) {
      const r = await client.call(ApiKey.OFFSET_COMMIT, 8, commit(i * 10));
      assert.equal(r.topics[0].partitions[0].errorCode, 0);
    }
    const logDir = join(dataDir, '__consumer_offsets-0');
    // Sizes of the .log files; a segment the cleaner replaces may be renamed between the listing and the stat.
    const logBytes = () => {
      let total = 0;
      for (const name of readdirSync(logDir).filter((n) => n.endsWith('.log'))) {
        try {
          total += statSync(join(logDir, name)).size;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
      return total;
    };
    const written = logBytes();
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && logBytes() > written / 2) await new Promise((r) => setTimeout(r, 100));
    assert.ok(logBytes() <= written / 2, `__consumer_offsets-0 holds ${logBytes()} of ${written} bytes`);
    const checkpoint = readFileSync(join(dataDir, 'cleaner-offset-checkpoint'), 'utf8');
    assert.match(checkpoint, /^__consumer_offsets 0 [1-9][0-9]*$/m);
    const expected = [0, 1, 2, 3].map((p) => BigInt(count * 10 + p));
    assert.deepEqual(await fetchOffsets(client), expected);
    client.close();
    await broker.stop();
    broker = await startBroker({ overrides, dataDir, keepDataDir: true });
    client = await WireClient.connect(broker.host, broker.port);
    let got: bigint[] = [];
    for (let i = 0; i < 100; i++) {
      got = await fetchOffsets(client).catch(() => []);
      if (JSON.stringify(got.map(String)) === JSON.stringify(expected.map(String))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(got, expected, 'the coordinator loads the compacted log after a restart');
    client.close();
  });
});

describe('a cleaner checkpoint the log no longer holds', () => {
  let broker: BrokerProcess | undefined;
  let dataDir = '';
  const overrides = { 'log.cleaner.backoff.ms': 100 };
  after(async () => {
    await broker?.stop();
    if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
  });

  it('is reset to the log start with a warning in the broker log, as Kafka does', async () => {
    // Kafka's LogCleanerManager.cleanableOffsets warns when a checkpointed first dirty offset lies past the log end
    // (a damaged tail was cut): the whole log is cleaned again from its start.
    broker = await startBroker({ overrides, keepDataDir: true });
    dataDir = broker.dataDir;
    let client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, 'reset-table', {
      numPartitions: 1,
      replicationFactor: 1,
      configs: { 'cleanup.policy': 'compact' },
    });
    for (let i = 0; i < 3; i++) {
      const response = await produceBatch(client, 'reset-table', buildBatch([{ key: 'k', value: `v${i}` }]));
      assert.equal(response.errorCode, ErrorCode.NONE);
    }
    client.close();
    await broker.stop();
    broker = undefined;
    writeOffsetCheckpoint(join(dataDir, 'cleaner-offset-checkpoint'), [
      { topic: 'reset-table', partition: 0, offset: 1000 },
    ]);
    broker = await startBroker({ overrides, dataDir, keepDataDir: true });
    const deadline = Date.now() + 10_000;
    const warning = () =>
      broker!
        .log()
        .split('\n')
        .find((l) => l.includes('Resetting first dirty offset'));
    while (warning() === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.match(
      warning() ?? broker.log(),
      /WARN .*reset-table-0 to log start offset 0: .*1000 is past the log end offset 3/,
    );
    client = await WireClient.connect(broker.host, broker.port);
    assert.equal((await readPartition(client, 'reset-table', 0)).length, 3, 'no record lost to the reset');
    client.close();
  });
});
