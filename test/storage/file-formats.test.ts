// Each on-disk format against bytes written out by hand from Kafka's documented layouts.

import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { toLeaderEpoch, toOffset } from '../../src/common/ids.js';
import { StorageFormatError } from '../../src/storage/atomic-file.js';
import {
  decodeOffsetCheckpoint,
  readEpochCheckpoint,
  readOffsetCheckpoint,
  writeEpochCheckpoint,
  writeOffsetCheckpoint,
} from '../../src/storage/checkpoint-file.js';
import {
  deleteDirName,
  isDeleteDirName,
  offsetFileStem,
  parseOffsetFileName,
  parsePartitionDirName,
} from '../../src/storage/file-names.js';
import {
  decodeMetaProperties,
  readMetaProperties,
  writeMetaProperties,
} from '../../src/storage/meta-properties.js';
import { OffsetIndex } from '../../src/storage/offset-index.js';
import {
  base64UrlToUuid,
  readPartitionMetadata,
  uuidToBase64Url,
  writePartitionMetadata,
} from '../../src/storage/partition-metadata.js';
import { decodeSnapshot, encodeSnapshot } from '../../src/storage/producer-snapshot.js';
import { TimeIndex } from '../../src/storage/time-index.js';
import { type AbortedTxn, TxnIndex } from '../../src/storage/txn-index.js';
import { tempDir } from './tmp-dir.js';

test('segment files are named by the 20-digit base offset', () => {
  assert.equal(offsetFileStem(0), '00000000000000000000');
  assert.equal(offsetFileStem(368769), '00000000000000368769');
  assert.deepEqual(parseOffsetFileName('00000000000000368769.timeindex'), {
    offset: 368769,
    suffix: '.timeindex',
  });
  assert.deepEqual(parseOffsetFileName('00000000000000000042.log.deleted'), {
    offset: 42,
    suffix: '.log.deleted',
  });
  assert.equal(parseOffsetFileName('0000000000000000004x.log'), null);
  assert.equal(parseOffsetFileName('leader-epoch-checkpoint'), null);
});

test('partition directories parse with dashes in topic names and delete names are recognised', () => {
  assert.deepEqual(parsePartitionDirName('my-topic-12'), { topic: 'my-topic', partition: 12 });
  assert.equal(parsePartitionDirName('topic-'), null);
  assert.equal(parsePartitionDirName('topic-x'), null);
  const name = deleteDirName({ topic: 'orders', partition: 3 });
  assert.match(name, /^orders-3\.[0-9a-f]{32}-delete$/);
  assert.ok(isDeleteDirName(name));
  assert.ok(!isDeleteDirName('orders-3'));
});

test('offset checkpoints are version, count, then "topic partition offset" lines', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'recovery-point-offset-checkpoint');
  writeOffsetCheckpoint(path, [
    { topic: 'orders', partition: 0, offset: 1200 },
    { topic: 'my-topic', partition: 11, offset: 7 },
  ]);
  assert.equal(readFileSync(path, 'utf8'), '0\n2\norders 0 1200\nmy-topic 11 7\n');
  assert.deepEqual(readOffsetCheckpoint(path), [
    { topic: 'orders', partition: 0, offset: 1200 },
    { topic: 'my-topic', partition: 11, offset: 7 },
  ]);
  assert.deepEqual(readOffsetCheckpoint(join(dir, 'missing')), []);
  assert.ok(!statSync(dir).isFile());
});

test('damaged checkpoints raise StorageFormatError', () => {
  for (const text of [
    '',
    '1\n0\n',
    '0\n2\na 0 1\n',
    '0\n1\na 0\n',
    '0\n1\na x 1\n',
    '0\n1\na 0 99999999999999999\n',
  ]) {
    assert.throws(() => decodeOffsetCheckpoint('p', text), StorageFormatError, JSON.stringify(text));
  }
});

test('leader-epoch-checkpoint holds "epoch startOffset" lines', (t) => {
  const path = join(tempDir(t), 'leader-epoch-checkpoint');
  writeEpochCheckpoint(path, [
    { epoch: toLeaderEpoch(0), startOffset: toOffset(0) },
    { epoch: toLeaderEpoch(3), startOffset: toOffset(150) },
  ]);
  assert.equal(readFileSync(path, 'utf8'), '0\n2\n0 0\n3 150\n');
  assert.deepEqual(readEpochCheckpoint(path), [
    { epoch: toLeaderEpoch(0), startOffset: toOffset(0) },
    { epoch: toLeaderEpoch(3), startOffset: toOffset(150) },
  ]);
});

test('partition.metadata holds version 0 and a base64url topic id', (t) => {
  const path = join(tempDir(t), 'partition.metadata');
  const uuid = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');
  const id = uuidToBase64Url(uuid);
  assert.equal(id, 'ASNFZ4mrze8BI0VniavN7w');
  writePartitionMetadata(path, id);
  assert.equal(readFileSync(path, 'utf8'), 'version: 0\ntopic_id: ASNFZ4mrze8BI0VniavN7w\n');
  assert.equal(readPartitionMetadata(path), id);
  assert.deepEqual(base64UrlToUuid(id), uuid);
  writeFileSync(path, 'version: 1\ntopic_id: ASNFZ4mrze8BI0VniavN7w\n');
  assert.throws(() => readPartitionMetadata(path), StorageFormatError);
});

test('meta.properties is Java properties with version, broker.id and cluster.id', (t) => {
  const path = join(tempDir(t), 'meta.properties');
  writeMetaProperties(path, { version: 0, brokerId: 7, clusterId: 'LU5pYnMjQhqbm-9I8gvQOw' });
  const text = readFileSync(path, 'utf8');
  assert.match(text, /^#\n#.*\nversion=0\nbroker\.id=7\ncluster\.id=LU5pYnMjQhqbm-9I8gvQOw\n$/);
  assert.deepEqual(readMetaProperties(path), {
    version: 0,
    brokerId: 7,
    clusterId: 'LU5pYnMjQhqbm-9I8gvQOw',
  });
  assert.deepEqual(decodeMetaProperties('p', '# c\n! c\nbroker.id : 3\ncluster.id=x\nversion=0\n'), {
    version: 0,
    brokerId: 3,
    clusterId: 'x',
  });
  assert.throws(() => decodeMetaProperties('p', 'version=0\ncluster.id=x\n'), StorageFormatError);
});

test('.index entries are relative offset int32 then position int32, preallocated and trimmed', (t) => {
  const path = join(tempDir(t), '00000000000000001000.index');
  const index = OffsetIndex.create(path, 1000, 1024);
  assert.equal(statSync(path).size, 1024, 'preallocated to segment.index.bytes');
  index.append(1005, 4200);
  index.append(1010, 8400);
  index.file.trimToValidSize();
  index.file.close();
  assert.deepEqual(
    readFileSync(path),
    Buffer.from([0, 0, 0, 5, 0, 0, 0x10, 0x68, 0, 0, 0, 10, 0, 0, 0x20, 0xd0]),
  );
  const reopened = OffsetIndex.open(path, 1000, 1024, 10_000)!;
  assert.deepEqual(reopened.lookup(1007), { offset: 1005, position: 4200, slot: 0 });
  assert.deepEqual(reopened.lookup(5000), { offset: 1010, position: 8400, slot: 1 });
  assert.equal(reopened.lookup(1004), null);
  reopened.file.close();
  assert.equal(OffsetIndex.open(path, 1000, 1024, 8000), null, 'a position beyond the log is refused');
  writeFileSync(path, Buffer.alloc(13));
  assert.equal(OffsetIndex.open(path, 1000, 1024, 10_000), null, 'a partial entry is refused');
});

test('.timeindex entries are timestamp int64 then relative offset int32', (t) => {
  const path = join(tempDir(t), '00000000000000000100.timeindex');
  const index = TimeIndex.create(path, 100, 120);
  index.maybeAppend(0x1_0000_0002, 103);
  index.maybeAppend(0x1_0000_0002, 104); // not larger: skipped
  index.maybeAppend(0x1_0000_0009, 109);
  index.file.trimToValidSize();
  index.file.close();
  const expected = Buffer.from([
    ...[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3],
    ...[0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 9],
  ]);
  assert.deepEqual(readFileSync(path), expected);
  const reopened = TimeIndex.open(path, 100, 120)!;
  assert.deepEqual(reopened.lookup(0x1_0000_0005), { timestamp: 0x1_0000_0002, offset: 103 });
  assert.deepEqual(reopened.lastEntry, { timestamp: 0x1_0000_0009, offset: 109 });
  assert.equal(reopened.lookup(5), null);
  reopened.file.close();
});

test('.txnindex entries are version int16, producerId, firstOffset, lastOffset, lastStableOffset int64', (t) => {
  const path = join(tempDir(t), '00000000000000000000.txnindex');
  const index = new TxnIndex(path);
  index.append({ producerId: 9, firstOffset: 3, lastOffset: 17, lastStableOffset: 18 });
  index.close();
  const int64 = (n: number) => [0, 0, 0, 0, 0, 0, 0, n];
  assert.deepEqual(
    readFileSync(path),
    Buffer.from([0, 0, ...int64(9), ...int64(3), ...int64(17), ...int64(18)]),
  );
  const loaded = new TxnIndex(path);
  loaded.load(100);
  assert.deepEqual(loaded.entries, [{ producerId: 9, firstOffset: 3, lastOffset: 17, lastStableOffset: 18 }]);
  const out: AbortedTxn[] = [];
  assert.equal(loaded.collect(0, 10, out), true, 'LSO 18 reaches the upper bound 10');
  assert.equal(out.length, 1);
  loaded.close();
  const beyond = new TxnIndex(path);
  beyond.load(17);
  assert.equal(beyond.entries.length, 0, 'entries at or past the segment end are dropped');
  beyond.close();
});

test('.snapshot is version 1, CRC32C of the rest, then 46-byte producer entries', () => {
  const bytes = encodeSnapshot([
    {
      producerId: 1,
      epoch: 2,
      lastSequence: 3,
      lastOffset: 4,
      offsetDelta: 5,
      timestamp: 6,
      coordinatorEpoch: 7,
      currentTxnFirstOffset: -1,
    },
  ]);
  const body = Buffer.from([
    ...[0, 0, 0, 1], // count
    ...[0, 0, 0, 0, 0, 0, 0, 1], // producerId
    ...[0, 2], // epoch
    ...[0, 0, 0, 3], // lastSequence
    ...[0, 0, 0, 0, 0, 0, 0, 4], // lastOffset
    ...[0, 0, 0, 5], // offsetDelta
    ...[0, 0, 0, 0, 0, 0, 0, 6], // timestamp
    ...[0, 0, 0, 7], // coordinatorEpoch
    ...[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], // currentTxnFirstOffset
  ]);
  assert.equal(bytes.length, 6 + body.length);
  assert.deepEqual(bytes.subarray(0, 2), Buffer.from([0, 1]));
  assert.deepEqual(bytes.subarray(6), body);
  assert.equal(decodeSnapshot('s', bytes)[0]!.currentTxnFirstOffset, -1);
  const damaged = Buffer.from(bytes);
  damaged[20] = damaged[20]! ^ 1;
  assert.throws(() => decodeSnapshot('s', damaged), StorageFormatError);
  assert.throws(() => decodeSnapshot('s', bytes.subarray(0, 30)), StorageFormatError);
});
