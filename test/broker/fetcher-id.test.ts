// Kafka's getFetcherId over Java's String.hashCode: values a JVM gives, the 32-bit wrap, and Utils.abs of
// Integer.MIN_VALUE ("polygenelubricants".hashCode() is Integer.MIN_VALUE, and so is 31 times it).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fetcherIdOf, javaStringHash } from '../../src/broker/cluster/fetcher-id.js';

test("Java's String.hashCode, wrapping at 32 bits", () => {
  assert.equal(javaStringHash(''), 0);
  assert.equal(javaStringHash('hello'), 99162322);
  assert.equal(javaStringHash('Aa'), javaStringHash('BB'));
  assert.equal(javaStringHash('polygenelubricants'), -2147483648);
});

test("a partition's fetcher is abs(31 * hash(topic) + partition) % fetchers", () => {
  // 31 * 99162322 = 3074031982 wraps to -1220935314.
  assert.equal(fetcherIdOf('hello', 0, 7), 1220935314 % 7);
  assert.equal(fetcherIdOf('hello', 5, 7), 1220935309 % 7);
  // Integer.MIN_VALUE has no absolute value: Kafka's Utils.abs makes it 0.
  assert.equal(fetcherIdOf('polygenelubricants', 0, 3), 0);
  assert.equal(fetcherIdOf('polygenelubricants', 1, 2), 2147483647 % 2);
  for (let p = 0; p < 20; p++) assert.equal(fetcherIdOf('any', p, 1), 0);
  assert.throws(() => fetcherIdOf('t', 0, 0));
});
