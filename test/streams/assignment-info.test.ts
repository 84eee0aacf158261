// Kafka's binary AssignmentInfo (the "stream" assignment's user data): version 11 bytes written field by field here
// from Kafka's AssignmentInfo.encode layout and compared with Brook's encoder (active tasks one per partition in
// topic, partition order; standbys with their partitions; the topic dictionary; hosts; errCode; nextRebalanceMs,
// Long.MAX_VALUE for none); version 7 read (task ids without the named-topology field); Java's modified UTF-8;
// bytes Brook cannot read give null; Brook's earlier JSON assignments are still read.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodeAssignmentInfoBytes,
  encodeAssignmentInfo,
} from '../../src/streams/runtime/assignment-info.js';
import { decodeAssignmentInfo, encodeInfo } from '../../src/streams/runtime/streams-assignor.js';

const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const i64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
/** Java's writeUTF for ASCII: uint16 length, then the bytes. */
const utf = (s: string) =>
  Buffer.concat([Buffer.from([s.length >> 8, s.length & 0xff]), Buffer.from(s, 'latin1')]);
const task = (st: number, p: number) => Buffer.concat([i32(st), i32(p), i32(0)]);

const partitions: Record<string, { topic: string; partition: number }[]> = {
  '0_1': [
    { topic: 'b-in', partition: 1 },
    { topic: 'a-in', partition: 1 },
  ],
  '1_0': [{ topic: 'app-rep-repartition', partition: 0 }],
  '0_2': [
    { topic: 'a-in', partition: 2 },
    { topic: 'b-in', partition: 2 },
  ],
};

describe("Kafka's AssignmentInfo bytes", () => {
  it('version 11: the encoder writes the layout field by field, and reads it back', () => {
    const info = {
      version: 11,
      activeTasks: ['0_1', '1_0'],
      standbyTasks: ['0_2'],
      partitionsByHost: {
        'h1:9': [
          ['a-in', 1],
          ['b-in', 1],
        ] as [string, number][],
      },
      standbyPartitionsByHost: { 'h2:8': [['a-in', 2]] as [string, number][] },
      errCode: 0,
      nextRebalanceMs: 1_700_000_000_000,
    };
    const got = encodeAssignmentInfo(info, (t) => partitions[t]!);
    const expected = Buffer.concat([
      i32(11),
      i32(11),
      // One task id per assigned partition, sorted by topic then partition: a-in-1, app-rep-repartition-0, b-in-1.
      i32(3),
      task(0, 1),
      task(1, 0),
      task(0, 1),
      i32(1),
      task(0, 2),
      i32(2),
      utf('a-in'),
      i32(2),
      utf('b-in'),
      i32(2),
      // Topic dictionary, in first-seen order over the active hosts then the standby hosts.
      i32(2),
      i32(0),
      utf('a-in'),
      i32(1),
      utf('b-in'),
      i32(1),
      utf('h1'),
      i32(9),
      i32(2),
      i32(0),
      i32(1),
      i32(1),
      i32(1),
      i32(1),
      utf('h2'),
      i32(8),
      i32(1),
      i32(0),
      i32(2),
      i32(0), // errCode
      i64(1_700_000_000_000n),
    ]);
    assert.equal(got.toString('hex'), expected.toString('hex'));
    assert.deepEqual(decodeAssignmentInfo(got), { ...info, version: 11, commonlySupportedVersion: 11 });
    const none = encodeAssignmentInfo({ ...info, nextRebalanceMs: 0 }, (t) => partitions[t]!);
    assert.equal(
      none.readBigInt64BE(none.length - 8),
      9223372036854775807n,
      'no probing rebalance: Long.MAX_VALUE',
    );
    assert.equal(decodeAssignmentInfo(none)!.nextRebalanceMs, 0);
  });

  it('reads version 7 (task ids without the named topology), a shutdown, and modified UTF-8 hosts', () => {
    const v7 = Buffer.concat([
      i32(7),
      i32(7),
      i32(2),
      i32(0),
      i32(3),
      i32(0),
      i32(3),
      i32(0),
      i32(0),
      i32(0),
      i32(0),
      i32(2), // errCode: SHUTDOWN_REQUESTED
      i64(9223372036854775807n),
    ]);
    assert.deepEqual(decodeAssignmentInfo(v7), {
      version: 7,
      commonlySupportedVersion: 7,
      activeTasks: ['0_3'],
      standbyTasks: [],
      partitionsByHost: {},
      standbyPartitionsByHost: {},
      errCode: 2,
      nextRebalanceMs: 0,
    });
    const host = encodeAssignmentInfo(
      {
        version: 11,
        activeTasks: [],
        standbyTasks: [],
        partitionsByHost: { 'hôte\u0000x:7': [] },
        standbyPartitionsByHost: {},
        errCode: 0,
      },
      () => [],
    );
    // "hôte\0x": h, ô as two bytes, t, e, NUL as two bytes (c0 80), x.
    assert.ok(host.includes(Buffer.from([0, 8, 0x68, 0xc3, 0xb4, 0x74, 0x65, 0xc0, 0x80, 0x78])));
    assert.deepEqual(Object.keys(decodeAssignmentInfo(host)!.partitionsByHost), ['hôte\u0000x:7']);
  });

  it('bytes it cannot read give null; the earlier JSON is still read', () => {
    const good = encodeAssignmentInfo(
      {
        version: 11,
        activeTasks: ['0_1'],
        standbyTasks: [],
        partitionsByHost: {},
        standbyPartitionsByHost: {},
        errCode: 0,
      },
      (t) => partitions[t]!,
    );
    assert.notEqual(decodeAssignmentInfoBytes(good), null);
    const newer = Buffer.from(good);
    newer.writeInt32BE(12, 0);
    assert.equal(decodeAssignmentInfoBytes(newer), null);
    const older = Buffer.from(good);
    older.writeInt32BE(0, 0);
    assert.equal(decodeAssignmentInfoBytes(older), null);
    assert.equal(decodeAssignmentInfoBytes(good.subarray(0, good.length - 3)), null);
    assert.equal(decodeAssignmentInfoBytes(Buffer.concat([good, Buffer.from([1])])), null);
    const named = Buffer.from(good);
    named.writeInt32BE(3, 8 + 4 + 8); // the first active task's named-topology length
    assert.equal(decodeAssignmentInfoBytes(named), null);
    const json = {
      version: 1,
      activeTasks: ['0_1'],
      standbyTasks: [],
      partitionsByHost: { 'h:1': [['t', 1]] as [string, number][] },
      standbyPartitionsByHost: {},
      errCode: 0,
    };
    assert.deepEqual(decodeAssignmentInfo(encodeInfo(json)), json);
    assert.equal(decodeAssignmentInfo(null), null);
  });
});
