// Kafka's binary SubscriptionInfo (the "stream" subscription's user data): version 11 bytes written field by field
// here from Kafka's SubscriptionInfoData schema and compared with Brook's encoder; versions 1, 2, 6, 7 and 10 read;
// the task sums' meaning (LATEST_OFFSET for previous actives, UNKNOWN_OFFSET_SUM); bytes that are not a
// subscription Brook can read give null; Brook's earlier JSON subscriptions are still read.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeSubscriptionInfo, encodeInfo } from '../../src/streams/runtime/streams-assignor.js';
import {
  decodeSubscriptionInfoBytes,
  encodeSubscriptionInfo,
} from '../../src/streams/runtime/subscription-info.js';

const PID = '0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';

/** Big-endian field writers, as Kafka's generated (non-flexible) messages lay them out. */
const i8 = (n: number) => Buffer.from([n & 0xff]);
const i16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const i64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
};
const bytes = (s: string) => Buffer.concat([i32(Buffer.byteLength(s)), Buffer.from(s)]);
const uuid = Buffer.from(PID.replaceAll('-', ''), 'hex');

describe("Kafka's SubscriptionInfo bytes", () => {
  it('version 11: the encoder writes the schema field by field', () => {
    const got = encodeSubscriptionInfo(
      {
        version: 11,
        processId: PID,
        userEndpoint: 'host:9',
        prevTasks: ['1_0'],
        standbyTasks: ['0_2', '0_1'],
        taskOffsetSums: { '0_1': 500, '1_0': 77, '2_3': 9 },
        errorCode: 2,
        clientTags: { zone: 'z1' },
      },
      5,
    );
    const task = (g: number, p: number, sum: number) => Buffer.concat([i32(g), i32(p), i64(sum), i16(-1)]);
    const expected = Buffer.concat([
      i32(11), // version
      i32(11), // latestSupportedVersion
      uuid,
      bytes('host:9'),
      i32(4),
      task(0, 1, 500), // a standby with its sum
      task(0, 2, -3), // a standby whose sum is unknown
      task(1, 0, -2), // the previous active task: LATEST_OFFSET, its sum not sent
      task(2, 3, 9), // state left on disk
      i8(5), // uniqueField
      i32(2), // errorCode
      i32(1),
      bytes('zone'),
      bytes('z1'),
    ]);
    assert.equal(got.toString('hex'), expected.toString('hex'));
    assert.deepEqual(decodeSubscriptionInfo(got), {
      version: 11,
      latestSupportedVersion: 11,
      processId: PID,
      userEndpoint: 'host:9',
      prevTasks: ['1_0'],
      standbyTasks: ['0_1', '0_2', '2_3'],
      taskOffsetSums: { '0_1': 500, '2_3': 9 },
      errorCode: 2,
      clientTags: { zone: 'z1' },
    });
  });

  it('reads versions 1, 2, 6 (task lists), 7 (sums per topic group) and 10 (flat sums)', () => {
    const taskIds = (ids: [number, number][]) =>
      Buffer.concat([i32(ids.length), ...ids.map(([g, p]) => Buffer.concat([i32(g), i32(p)]))]);
    const v1 = Buffer.concat([i32(1), uuid, taskIds([[0, 1]]), taskIds([[0, 2]])]);
    const v2 = Buffer.concat([i32(2), uuid, taskIds([[0, 1]]), taskIds([]), bytes('h:1')]);
    const v6 = Buffer.concat([i32(6), i32(6), uuid, taskIds([[1, 1]]), taskIds([[0, 0]]), bytes('')]);
    const v7 = Buffer.concat([
      i32(7),
      i32(7),
      uuid,
      bytes('h:2'),
      i32(2),
      i32(0),
      i32(2),
      i32(0),
      i64(-2),
      i32(3),
      i64(40),
      i32(1),
      i32(1),
      i32(5),
      i64(-3),
    ]);
    const v10 = Buffer.concat([
      i32(10),
      i32(10),
      uuid,
      bytes(''),
      i32(1),
      i32(0),
      i32(4),
      i64(12),
      i16(-1),
      i8(1),
      i32(0),
    ]);
    const read = (b: Buffer) => {
      const s = decodeSubscriptionInfo(b);
      assert.ok(s !== null);
      return [s.version, s.userEndpoint, s.prevTasks, s.standbyTasks, s.taskOffsetSums, s.errorCode];
    };
    assert.equal(decodeSubscriptionInfo(v1)!.processId, PID);
    assert.deepEqual(read(v1), [1, '', ['0_1'], ['0_2'], {}, 0]);
    assert.deepEqual(read(v2), [2, 'h:1', ['0_1'], [], {}, 0]);
    assert.deepEqual(read(v6), [6, '', ['1_1'], ['0_0'], {}, 0]);
    assert.deepEqual(read(v7), [7, 'h:2', ['0_0'], ['0_3', '1_5'], { '0_3': 40 }, 0]);
    assert.deepEqual(read(v10), [10, '', [], ['0_4'], { '0_4': 12 }, 0]);
  });

  it('bytes it cannot read give null: a newer version, truncation, trailing bytes, a named topology', () => {
    const good = encodeSubscriptionInfo({
      version: 11,
      processId: PID,
      userEndpoint: '',
      prevTasks: ['0_0'],
      standbyTasks: [],
      taskOffsetSums: {},
      errorCode: 0,
    });
    assert.notEqual(decodeSubscriptionInfoBytes(good), null);
    const newer = Buffer.from(good);
    newer.writeInt32BE(12, 0);
    assert.equal(decodeSubscriptionInfoBytes(newer), null);
    assert.equal(decodeSubscriptionInfoBytes(good.subarray(0, good.length - 1)), null);
    assert.equal(decodeSubscriptionInfoBytes(Buffer.concat([good, i8(0)])), null);
    const named = Buffer.concat([
      i32(10),
      i32(10),
      uuid,
      bytes(''),
      i32(1),
      i32(0),
      i32(0),
      i64(-2),
      i16(3),
      Buffer.from('top'),
      i8(0),
      i32(0),
    ]);
    assert.equal(decodeSubscriptionInfoBytes(named), null);
    assert.equal(decodeSubscriptionInfo(Buffer.from([0, 1, 2])), null);
    assert.throws(
      () => encodeSubscriptionInfo({ ...decodeSubscriptionInfoBytes(good)!, processId: 'p1' }),
      /UUID/,
    );
  });

  it("Brook's earlier JSON subscriptions are still read (rolling upgrades)", () => {
    const json = {
      version: 1,
      processId: 'p1',
      userEndpoint: 'localhost:1',
      prevTasks: ['0_1'],
      standbyTasks: ['0_0'],
      taskOffsetSums: { '0_0': 12 },
      errorCode: 0,
      clientTags: { zone: 'z1' },
    };
    assert.deepEqual(decodeSubscriptionInfo(encodeInfo(json)), json);
  });
});
