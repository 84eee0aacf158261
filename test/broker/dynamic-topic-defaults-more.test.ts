// More topic defaults changed at runtime over the wire (see dynamic-topic-defaults.test.ts for the first nine):
// an IncrementalAlterConfigs on the cluster-default broker resource ('') or on this broker's id changes what an
// existing topic without an override of the key does, without a restart. Each observed through its behaviour, on
// the wire or in the broker's data directory: log.message.downconversion.enable (Fetch v3 refused),
// log.flush.interval.messages / log.flush.interval.ms (the recovery point checkpoint moves),
// log.segment.delete.delay.ms (deleted segments' .deleted files linger or go), log.preallocate (a new segment's
// .log preallocated, and trimmed at its roll once turned off again), log.index.interval.bytes /
// log.index.size.max.bytes (index entries per batch, the active index's preallocated size), log.roll.jitter.ms
// (a new segment rolls before segment.ms), log.cleaner.min.cleanable.ratio, log.cleaner.max.compaction.lag.ms and
// log.cleaner.min.compaction.lag.ms (the cleaner cleans or holds back, seen in cleaner-offset-checkpoint and the
// records left), log.cleaner.delete.retention.ms (how long a tombstone outlives its first cleaning). Each test
// removes its dynamic value again (a DELETE operation), so the next starts from the static defaults.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { readOffsetCheckpoint } from '../../src/storage/checkpoint-file.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import {
  alterConfigs,
  CLUSTER_DEFAULT,
  TOPIC_RESOURCE,
  withDynamicConfigs,
} from '../helpers/dynamic-configs.js';
import { createTopic, fetchBody, produceBatch, readPartition, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import { scrape } from '../metrics/scrape.js';

const THIS_BROKER = '0';
const DEFAULT_INDEX_BYTES = 10 * 1024 * 1024;

describe('more topic defaults changed on a running broker', () => {
  let broker: BrokerProcess;
  let client: WireClient;
  let metricsPort: number;

  before(async () => {
    metricsPort = await freePort();
    broker = await startBroker({
      overrides: {
        'broker.id': 0,
        'brook.metrics.listener': `http://127.0.0.1:${metricsPort}`,
        // Retention looks often and the recovery points are checkpointed often, so that a change shows soon.
        'log.retention.check.interval.ms': 300,
        'log.flush.offset.checkpoint.interval.ms': 200,
        'log.cleaner.backoff.ms': 100,
      },
    });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  const create = (name: string, configs: Record<string, string> = {}) =>
    createTopic(client, name, { numPartitions: 1, replicationFactor: 1, configs });

  const alter = (resourceName: string, configs: Record<string, string | null>, resourceType?: number) =>
    alterConfigs(client, resourceName, configs, resourceType);
  const withDynamic = (resourceName: string, configs: Record<string, string>, body: () => Promise<void>) =>
    withDynamicConfigs(client, resourceName, configs, body);

  async function logMetric(name: string, topic: string): Promise<number> {
    return (await scrape(metricsPort)).value(`kafka_log_log_${name}`, { topic, partition: 0 });
  }

  /** Appends one single-record batch; a null value is a tombstone. */
  async function put(topic: string, key: string, value: string | null, timestamp?: number): Promise<void> {
    const response = await produceBatch(client, topic, buildBatch([{ key, value, timestamp }]), 1);
    assert.equal(response.errorCode, ErrorCode.NONE);
  }

  let unique = 0;
  /** `count` single-record batches with values of `bytes` bytes, each under a key never used before. */
  async function fill(topic: string, count: number, bytes: number, timestamp?: number): Promise<void> {
    for (let i = 0; i < count; i++) await put(topic, `u${unique++}`, 'v'.repeat(bytes), timestamp);
  }

  /** Writes until the partition has `segments` segments (the roll is decided at an append). */
  async function fillUntilSegments(
    topic: string,
    segments: number,
    bytes: number,
    timestamp?: number,
  ): Promise<void> {
    await waitFor(
      `${topic} at ${segments} segments`,
      async () => {
        if ((await logMetric('numlogsegments', topic)) >= segments) return true;
        await fill(topic, 1, bytes, timestamp);
        return undefined;
      },
      60_000,
    );
  }

  /** The cleaner's checkpoint (first dirty offset) of `topic`-0; 0 while the cleaner has not cleaned it. */
  function cleanedTo(topic: string): number {
    const entries = readOffsetCheckpoint(join(broker.dataDir, 'cleaner-offset-checkpoint'));
    return entries.find((e) => e.topic === topic && e.partition === 0)?.offset ?? 0;
  }

  /** The records of `topic`-0 under `key`, as [offset, value] pairs (value null for a tombstone). */
  async function versions(topic: string, key: string): Promise<[number, string | null][]> {
    return (await readPartition(client, topic, 0))
      .filter((r) => r.key?.toString() === key)
      .map((r) => [r.offset, r.value === null ? null : r.value.toString()]);
  }

  /**
   * Makes a compacted topic from what `write` writes under cleanup.policy=delete, so that the cleaner's first
   * pass covers all of it (a pass while the data is still coming could leave a dirty part behind). Answers the
   * base offset of the active segment, where a pass that may clean everything leaves the checkpoint.
   */
  async function compactAfter(
    topic: string,
    configs: Record<string, string>,
    write: () => Promise<void>,
  ): Promise<number> {
    await create(topic, { 'segment.bytes': '1024', ...configs, 'cleanup.policy': 'delete' });
    await write();
    const activeBase = files(topic, '.log').at(-1)!.base;
    assert.ok(activeBase > 0);
    await alter(topic, { 'cleanup.policy': 'compact' }, TOPIC_RESOURCE);
    return activeBase;
  }

  /** As compactAfter, and waits for the cleaning up to the active segment; answers the checkpoint. */
  async function compactedAtOnce(
    topic: string,
    configs: Record<string, string>,
    write: () => Promise<void>,
  ): Promise<number> {
    const activeBase = await compactAfter(topic, configs, write);
    return waitFor(
      `${topic} cleaned up to its active segment`,
      async () => (cleanedTo(topic) === activeBase ? activeBase : undefined),
      30_000,
    );
  }

  /** A compacted topic with one value of `dup` and 40 unique keys, cleaned once; answers the checkpoint. */
  function compactedAndCleaned(topic: string, configs: Record<string, string> = {}, timestamp?: number) {
    return compactedAtOnce(topic, configs, async () => {
      await put(topic, 'dup', 'first', timestamp);
      await fill(topic, 40, 150, timestamp);
    });
  }

  const partitionDir = (topic: string) => join(broker.dataDir, `${topic}-0`);
  /** The partition's files with `suffix`, by base offset. */
  function files(topic: string, suffix: string): { base: number; size: number }[] {
    return readdirSync(partitionDir(topic))
      .filter((name) => name.endsWith(suffix) && /^\d{20}\./.test(name))
      .map((name) => ({
        base: Number(name.slice(0, 20)),
        size: statSync(join(partitionDir(topic), name)).size,
      }))
      .sort((a, b) => a.base - b.base);
  }

  /** The checkpointed recovery point of `topic`-0, or undefined while the checkpoint does not name it. */
  function recoveryPoint(topic: string): number | undefined {
    const entries = readOffsetCheckpoint(join(broker.dataDir, 'recovery-point-offset-checkpoint'));
    return entries.find((e) => e.topic === topic && e.partition === 0)?.offset;
  }

  /** Waits for a recovery point checkpoint written after now: one that names a topic created now. */
  async function nextCheckpoint(marker: string): Promise<void> {
    await create(marker);
    await waitFor(
      `a checkpoint naming ${marker}`,
      async () => recoveryPoint(marker) === 0 || undefined,
      30_000,
    );
  }

  it('log.message.downconversion.enable=false on the cluster default: Fetch v3 gets UNSUPPORTED_VERSION', async () => {
    await create('old-readers');
    await fill('old-readers', 2, 20);
    const fetchPartition = async (version: number) =>
      (await client.call(ApiKey.FETCH, version, fetchBody('old-readers', 0, 0))).responses[0].partitions[0];
    const converted = await fetchPartition(3);
    assert.equal(converted.errorCode, ErrorCode.NONE);
    assert.ok(converted.records.length > 0, 'records converted to magic 1');
    await withDynamic(CLUSTER_DEFAULT, { 'log.message.downconversion.enable': 'false' }, async () => {
      for (const version of [0, 1, 3]) {
        const refused = await fetchPartition(version);
        assert.equal(refused.errorCode, ErrorCode.UNSUPPORTED_VERSION, `Fetch v${version}`);
        assert.equal(refused.records?.length ?? 0, 0);
      }
      const current = await fetchPartition(4);
      assert.equal(current.errorCode, ErrorCode.NONE, 'v4 needs no conversion');
      assert.ok(current.records.length > 0);
    });
    assert.equal((await fetchPartition(3)).errorCode, ErrorCode.NONE, 'converted again');
  });

  it('log.flush.interval.messages on the broker id: an append flushes, the recovery point moves', async () => {
    await create('flush-count');
    await fill('flush-count', 3, 20);
    await nextCheckpoint('flush-count-marker');
    assert.equal(recoveryPoint('flush-count'), 0, 'nothing flushed under the default (never)');
    await withDynamic(THIS_BROKER, { 'log.flush.interval.messages': '1' }, async () => {
      await fill('flush-count', 1, 20);
      await waitFor(
        'the recovery point at the log end',
        async () => recoveryPoint('flush-count') === 4 || undefined,
      );
    });
  });

  it('log.flush.interval.ms on the cluster default: unflushed records are flushed by the scheduler', async () => {
    await create('flush-time');
    await fill('flush-time', 3, 20);
    await nextCheckpoint('flush-time-marker');
    assert.equal(recoveryPoint('flush-time'), 0, 'nothing flushed under the default (never)');
    await withDynamic(CLUSTER_DEFAULT, { 'log.flush.interval.ms': '100' }, async () => {
      // No append after the change: the periodic flush check finds the old unflushed records.
      await waitFor(
        'the recovery point at the log end',
        async () => recoveryPoint('flush-time') === 3 || undefined,
      );
    });
  });

  it('log.segment.delete.delay.ms on the broker id: deleted segments go after the new delay', async () => {
    const deletedFiles = (topic: string) =>
      readdirSync(partitionDir(topic)).filter((n) => n.endsWith('.deleted'));
    // Under the 60 s default the files of a segment retention deleted linger, renamed .deleted.
    await create('lingering', { 'segment.bytes': '1024', 'retention.bytes': '1024' });
    await fill('lingering', 12, 300);
    await waitFor('retention', async () =>
      (await logMetric('logstartoffset', 'lingering')) > 0 ? true : undefined,
    );
    await waitFor('.deleted files', async () => deletedFiles('lingering').length > 0 || undefined);
    await withDynamic(THIS_BROKER, { 'log.segment.delete.delay.ms': '200' }, async () => {
      await create('prompt', { 'segment.bytes': '1024', 'retention.bytes': '1024' });
      await fill('prompt', 12, 300);
      await waitFor('retention', async () =>
        (await logMetric('logstartoffset', 'prompt')) > 0 ? true : undefined,
      );
      const first = join(partitionDir('prompt'), `${'0'.padStart(20, '0')}.log`);
      await waitFor(
        'the first segment gone, no .deleted file left',
        async () =>
          !existsSync(first) && !existsSync(`${first}.deleted`) && deletedFiles('prompt').length === 0
            ? true
            : undefined,
        30_000,
      );
    });
    assert.ok(deletedFiles('lingering').length > 0, 'the older deletion still waits for its 60 s');
  });

  it('log.preallocate on the broker id: a new segment is preallocated; off again, it is trimmed at its roll', async () => {
    const segmentBytes = 4096;
    await create('prealloc', { 'segment.bytes': String(segmentBytes) });
    await fill('prealloc', 1, 50);
    const [plain] = files('prealloc', '.log');
    assert.ok(plain!.size < 200, `not preallocated under the default (${plain!.size} bytes)`);
    await withDynamic(THIS_BROKER, { 'log.preallocate': 'true' }, async () => {
      await fillUntilSegments('prealloc', 2, 300);
      const active = files('prealloc', '.log').at(-1)!;
      assert.equal(active.size, segmentBytes, 'the segment made after the change is preallocated');
    });
    // The preallocated segment rolls with preallocate off again: its file is cut to the bytes it holds.
    const preallocated = files('prealloc', '.log').at(-1)!.base;
    await fillUntilSegments('prealloc', 3, 300);
    const rolled = files('prealloc', '.log').find((f) => f.base === preallocated)!;
    assert.ok(rolled.size < segmentBytes && rolled.size > 0, `trimmed at the roll (${rolled.size} bytes)`);
    const newest = files('prealloc', '.log').at(-1)!;
    assert.ok(newest.size < segmentBytes, `not preallocated any more (${newest.size} bytes)`);
  });

  it('log.index.interval.bytes and log.index.size.max.bytes on the cluster default: index entries and size', async () => {
    // Batches of about 370 bytes in segments of at most 3000: under the 4096-byte interval a rolled segment has
    // no index entry, and the active segment's index is preallocated to the 10 MiB default.
    await create('indexed', { 'segment.bytes': '3000' });
    await fillUntilSegments('indexed', 2, 300);
    assert.equal(files('indexed', '.index')[0]!.size, 0, 'no entry under the 4096-byte interval');
    assert.equal(files('indexed', '.index').at(-1)!.size, DEFAULT_INDEX_BYTES);
    await withDynamic(
      CLUSTER_DEFAULT,
      { 'log.index.interval.bytes': '0', 'log.index.size.max.bytes': '4096' },
      async () => {
        const before = await logMetric('numlogsegments', 'indexed');
        await fillUntilSegments('indexed', before + 2, 300);
        const indexes = files('indexed', '.index');
        // The segment made and rolled after the change: an entry for every batch after its first.
        const rolled = indexes.at(-2)!;
        assert.ok(rolled.size >= 3 * 8, `an entry a batch (${rolled.size} bytes of entries)`);
        assert.equal(indexes.at(-1)!.size, 4096, 'the active index preallocated to the new size');
      },
    );
  });

  it('log.roll.jitter.ms on the broker id: a segment made after the change rolls before segment.ms', async () => {
    // The roll compares the incoming batch's timestamp with the segment's first one, so no clock is involved:
    // batches 3,599,999 ms apart stay in one segment of segment.ms 3,600,000 unless jitter (uniform in [0, 1 h))
    // takes more than 1 ms off it.
    const first = Date.now() - 2 * 3_600_000;
    const late = first + 3_599_999;
    await create('jittered', { 'segment.bytes': '1024', 'segment.ms': '3600000' });
    await put('jittered', 'a', 'x', first);
    await put('jittered', 'b', 'x', late);
    assert.equal(await logMetric('numlogsegments', 'jittered'), 1, 'no roll without jitter');
    await withDynamic(THIS_BROKER, { 'log.roll.jitter.ms': '3600000' }, async () => {
      // A size roll makes a segment under the new setting; its first batch carries the early timestamp.
      await fillUntilSegments('jittered', 2, 300, first);
      const segments = await logMetric('numlogsegments', 'jittered');
      await put('jittered', 'c', 'x', late);
      assert.equal(
        await logMetric('numlogsegments', 'jittered'),
        segments + 1,
        'rolled by the jittered segment.ms',
      );
    });
  });

  it('log.roll.jitter.ms above segment.ms: the jitter is bounded by segment.ms, as Kafka bounds it', async () => {
    // Unbounded, a jitter past segment.ms would make the time limit negative: every append would roll.
    const timestamp = Date.now();
    await create('wide-jitter', { 'segment.bytes': '1024', 'segment.ms': '3600000' });
    await withDynamic(THIS_BROKER, { 'log.roll.jitter.ms': String(1_000_000_000_000) }, async () => {
      await fillUntilSegments('wide-jitter', 2, 300, timestamp);
      const segments = await logMetric('numlogsegments', 'wide-jitter');
      for (let i = 0; i < 3; i++) await put('wide-jitter', `same-time-${i}`, 'x', timestamp);
      assert.equal(
        await logMetric('numlogsegments', 'wide-jitter'),
        segments,
        'no roll between equal timestamps',
      );
    });
  });

  it('log.cleaner.min.cleanable.ratio on the cluster default: a log dirty below 0.5 is cleaned at 0.01', async () => {
    const checkpoint = await compactedAndCleaned('ratio');
    // A little new data: two more values of one key, and filler to take them out of the active segment. About a
    // fifth of the cleanable bytes are dirty, under the 0.5 default.
    await put('ratio', 'dup', 'second');
    await put('ratio', 'dup', 'third');
    await fill('ratio', 6, 150);
    assert.equal((await versions('ratio', 'dup')).length, 3);
    await withDynamic(CLUSTER_DEFAULT, { 'log.cleaner.min.cleanable.ratio': '0.01' }, async () => {
      await waitFor(
        'the older values of dup cleaned away',
        async () => ((await versions('ratio', 'dup')).length === 1 ? true : undefined),
        30_000,
      );
      // The checkpoint is written after the cleaned segments are swapped in.
      await waitFor('the checkpoint moved', async () => cleanedTo('ratio') > checkpoint || undefined);
      assert.deepEqual(
        (await versions('ratio', 'dup')).map(([, v]) => v),
        ['third'],
      );
    });
  });

  it('log.cleaner.max.compaction.lag.ms on the cluster default: old dirty segments are cleaned whatever the ratio', async () => {
    const old = Date.now() - 2 * 3_600_000;
    const checkpoint = await compactedAndCleaned('lagged', {}, old);
    // Then min.cleanable.dirty.ratio 1 on the topic: no dirty share exceeds it (Kafka cleans only above the ratio),
    // so only the lag can make it clean again.
    await alter('lagged', { 'min.cleanable.dirty.ratio': '1' }, TOPIC_RESOURCE);
    await put('lagged', 'dup', 'second', old);
    await put('lagged', 'dup', 'third', old);
    await fill('lagged', 6, 150, old);
    assert.equal(cleanedTo('lagged'), checkpoint);
    assert.equal((await versions('lagged', 'dup')).length, 3);
    await withDynamic(CLUSTER_DEFAULT, { 'log.cleaner.max.compaction.lag.ms': '3600000' }, async () => {
      await waitFor(
        'the dirty segments older than an hour cleaned',
        async () => ((await versions('lagged', 'dup')).length === 1 ? true : undefined),
        30_000,
      );
      await waitFor('the checkpoint moved', async () => cleanedTo('lagged') > checkpoint || undefined);
    });
  });

  it('log.cleaner.min.compaction.lag.ms on the cluster default: records younger than it are not cleaned', async () => {
    const old = Date.now() - 2 * 3_600_000;
    let youngFrom = 0;
    await withDynamic(CLUSTER_DEFAULT, { 'log.cleaner.min.compaction.lag.ms': '3600000' }, async () => {
      youngFrom = 15;
      await compactAfter('young', {}, async () => {
        // Three old values of five keys, then two young ones, then young filler to end the active segment.
        for (let round = 0; round < 3; round++) {
          for (let k = 0; k < 5; k++) await put('young', `d${k}`, `old-${round}`.padEnd(150, 'x'), old);
        }
        for (let round = 0; round < 2; round++) {
          for (let k = 0; k < 5; k++) await put('young', `d${k}`, `young-${round}`.padEnd(150, 'x'));
        }
        await fill('young', 8, 150);
      });
      // The cleaning stops at the first segment holding a young record: the young duplicates stay.
      const checkpoint = await waitFor(
        'the old segments cleaned',
        async () => cleanedTo('young') || undefined,
        30_000,
      );
      assert.ok(checkpoint <= youngFrom, `cleaned only below the young records (checkpoint ${checkpoint})`);
      const d0 = await versions('young', 'd0');
      assert.deepEqual(
        d0.filter(([o]) => o >= youngFrom).map(([, v]) => v?.slice(0, 7)),
        ['young-0', 'young-1'],
      );
      assert.ok(
        d0.filter(([o]) => o < youngFrom).length <= 1,
        `the old values compacted ${JSON.stringify(d0)}`,
      );
    });
    // The lag removed again: the young duplicates are cleaned too.
    await waitFor(
      'the young duplicates cleaned',
      async () => ((await versions('young', 'd0')).length === 1 ? true : undefined),
      30_000,
    );
    await waitFor(
      'the checkpoint past the young records',
      async () => cleanedTo('young') > youngFrom || undefined,
    );
  });

  it('log.cleaner.delete.retention.ms on the broker id: a tombstone outlives its first cleaning only that long', async () => {
    const writeTombstone = async (topic: string) => {
      await create(topic, { 'cleanup.policy': 'compact', 'segment.bytes': '1024' });
      await put(topic, 'gone', 'value');
      await put(topic, 'gone', null);
      await fill(topic, 8, 150);
    };
    // Under the one-day default the first cleaning removes the value and keeps the tombstone.
    await writeTombstone('tomb-kept');
    await waitFor('tomb-kept cleaned', async () => (cleanedTo('tomb-kept') > 1 ? true : undefined), 30_000);
    assert.deepEqual(await versions('tomb-kept', 'gone'), [[1, null]]);
    await withDynamic(THIS_BROKER, { 'log.cleaner.delete.retention.ms': '300' }, async () => {
      await writeTombstone('tomb-gone');
      // As in Kafka, a passed delete horizon alone brings no cleaning: the log must be dirty again, so one key is
      // written over and over until a later pass (past the 300 ms horizon) drops the tombstone.
      await waitFor(
        'the tombstone removed by a later cleaning',
        async () => {
          if ((await versions('tomb-gone', 'gone')).length === 0) return true;
          await put('tomb-gone', 'churn', 'v'.repeat(150));
          return undefined;
        },
        30_000,
      );
    });
    assert.deepEqual(await versions('tomb-kept', 'gone'), [[1, null]], 'stamped with a day at its cleaning');
  });
});
