// Internal-topic records written out by hand from the layout Kafka stores in __consumer_offsets and
// __transaction_state: an int16 schema version, then the fields in order.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  groupMetadataKeySchema,
  offsetCommitKeySchema,
  offsetCommitValueSchema,
  transactionLogValueSchema,
} from '../../../src/protocol/internal/index.js';
import { decodeVersioned, encodeVersioned } from '../../../src/protocol/messages/codec-support.js';
import { DecodeError } from '../../../src/protocol/primitives/index.js';

function hex(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ''), 'hex');
}

function ascii(text: string): string {
  return Buffer.from(text).toString('hex');
}

describe('internal-topic record layouts', () => {
  it('an offset commit key v1: group, topic, partition', () => {
    const key = { group: 'g1', topic: 'orders', partition: 3 };
    const bytes = hex(`0001 0002 ${ascii('g1')} 0006 ${ascii('orders')} 00000003`);
    assert.deepEqual(encodeVersioned(offsetCommitKeySchema, 1, key), bytes);
    assert.deepEqual(decodeVersioned(offsetCommitKeySchema, bytes, 'reject'), { version: 1, value: key });
  });

  it('an offset commit value v3: offset, leader epoch, metadata, commit timestamp', () => {
    const value = {
      offset: 42n,
      leaderEpoch: 5,
      metadata: '',
      commitTimestamp: 1700000000000n,
      expireTimestamp: -1n,
    };
    const bytes = hex('0003 000000000000002a 00000005 0000 0000018bcfe56800');
    assert.deepEqual(encodeVersioned(offsetCommitValueSchema, 3, value), bytes);
    assert.deepEqual(decodeVersioned(offsetCommitValueSchema, bytes, 'reject').value, value);
  });

  it('an offset commit value v1 carries an expire timestamp and no leader epoch', () => {
    const bytes = hex('0001 0000000000000007 0001 6d 0000000000000001 0000000000000002');
    assert.deepEqual(decodeVersioned(offsetCommitValueSchema, bytes, 'reject').value, {
      offset: 7n,
      leaderEpoch: -1,
      metadata: 'm',
      commitTimestamp: 1n,
      expireTimestamp: 2n,
    });
  });

  it('a group metadata key v2 is the group id alone', () => {
    assert.deepEqual(
      encodeVersioned(groupMetadataKeySchema, 2, { group: 'g' }),
      hex(`0002 0001 ${ascii('g')}`),
    );
  });

  it('a transaction log value v1 is flexible and carries its producer ids as tagged fields', () => {
    const value = {
      producerId: 9n,
      previousProducerId: 8n,
      nextProducerId: -1n,
      producerEpoch: 1,
      transactionTimeoutMs: 60000,
      transactionStatus: 2,
      transactionPartitions: [{ topic: 't', partitionIds: [0] }],
      transactionLastUpdateTimestampMs: 3n,
      transactionStartTimestampMs: 2n,
      clientTransactionVersion: 0,
    };
    const bytes = hex(`0001 0000000000000009 0001 0000ea60 02
      02 02 74 02 00000000 00
      0000000000000003 0000000000000002
      01 00 08 0000000000000008`);
    assert.deepEqual(encodeVersioned(transactionLogValueSchema, 1, value), bytes);
    assert.deepEqual(decodeVersioned(transactionLogValueSchema, bytes, 'reject').value, value);
  });

  it('reject a record version the schema does not know, and trailing bytes when strict', () => {
    assert.throws(
      () => decodeVersioned(groupMetadataKeySchema, hex(`0003 0001 ${ascii('g')}`), 'reject'),
      (e: unknown) => e instanceof DecodeError && e.kind === 'unsupported-version',
    );
    assert.throws(
      () => decodeVersioned(groupMetadataKeySchema, hex(`0002 0001 ${ascii('g')} 00`), 'reject'),
      (e: unknown) => e instanceof DecodeError && e.kind === 'trailing-bytes',
    );
  });
});
