// The error-code table: complete from -1 to 129, Kafka's names and numbers, retriable flags, messages.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, errorByCode, errorName, isRetriable, KAFKA_ERRORS } from '../../src/protocol/errors.js';

describe('Kafka error codes', () => {
  it('cover every code from -1 to 129 exactly once, in order', () => {
    assert.deepEqual(
      KAFKA_ERRORS.map((e) => e.code),
      Array.from({ length: 131 }, (_, i) => i - 1),
    );
    assert.equal(new Set(KAFKA_ERRORS.map((e) => e.name)).size, KAFKA_ERRORS.length);
  });

  it('name the codes as Kafka does', () => {
    assert.equal(ErrorCode.UNKNOWN_SERVER_ERROR, -1);
    assert.equal(ErrorCode.NONE, 0);
    assert.equal(ErrorCode.OFFSET_OUT_OF_RANGE, 1);
    assert.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 3);
    assert.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER, 6);
    assert.equal(ErrorCode.UNSUPPORTED_VERSION, 35);
    assert.equal(ErrorCode.PRODUCER_FENCED, 90);
    assert.equal(ErrorCode.UNKNOWN_TOPIC_ID, 100);
    assert.equal(ErrorCode.REBOOTSTRAP_REQUIRED, 129);
    assert.equal(errorName(25), 'UNKNOWN_MEMBER_ID');
  });

  it('mark transient conditions retriable and permanent ones not', () => {
    for (const code of [
      ErrorCode.NOT_LEADER_OR_FOLLOWER,
      ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
      ErrorCode.NOT_ENOUGH_REPLICAS,
    ]) {
      assert.equal(isRetriable(code), true, errorName(code));
    }
    for (const code of [
      ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      ErrorCode.INVALID_REQUEST,
      ErrorCode.UNKNOWN_SERVER_ERROR,
    ]) {
      assert.equal(isRetriable(code), false, errorName(code));
    }
  });

  it('give every code a message and answer unknown codes without throwing', () => {
    for (const e of KAFKA_ERRORS) assert.ok(e.message.length >= 9 && e.message.endsWith('.'), e.name);
    assert.equal(errorByCode(4000), undefined);
    assert.equal(isRetriable(4000), false);
    assert.equal(errorName(4000), 'UNKNOWN_ERROR_CODE_4000');
    assert.equal(errorByCode(3)?.name, 'UNKNOWN_TOPIC_OR_PARTITION');
  });
});
