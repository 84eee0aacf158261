// Which of a source broker's num.replica.fetchers fetchers follows a partition: Kafka's
// AbstractFetcherManager.getFetcherId, abs(31 * topic.hashCode() + partition) % fetchers, with Java's String
// hashCode and int arithmetic (32-bit, wrapping), so that a partition lands on the fetcher of the same number as
// on a Kafka broker. Kafka's Utils.abs maps Integer.MIN_VALUE to 0.

import assert from 'node:assert/strict';

/** Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, in 32-bit int arithmetic. */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs: the absolute value of a 32-bit int, with Integer.MIN_VALUE (which has none) mapped to 0. */
function javaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}

export function fetcherIdOf(topic: string, partition: number, fetchers: number): number {
  assert(Number.isInteger(fetchers) && fetchers >= 1, `fetchers per broker must be at least 1: ${fetchers}`);
  return javaAbs((Math.imul(31, javaStringHash(topic)) + partition) | 0) % fetchers;
}
