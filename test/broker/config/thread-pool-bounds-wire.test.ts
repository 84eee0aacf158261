// Kafka 3.9 resizes its thread pools on a dynamic change, and refuses a new size below half or above double the
// current one: DynamicThreadPool for num.io.threads, num.recovery.threads.per.data.dir, background.threads and
// num.replica.fetchers, each listener's acceptor for num.network.threads (a listener's own value over the
// broker's). Brook has no such pools (one event loop) but answers the change as Kafka does, INVALID_REQUEST with
// Kafka's text, so that a tool's change refused by Kafka is not accepted here.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import { BROKER_RESOURCE, CLUSTER_DEFAULT, incrementalAlter } from '../../helpers/dynamic-configs.js';

/** Each pool key with Kafka's default (the current size), a size too small, too large, and one accepted. */
const POOLS: readonly [
  name: string,
  current: number,
  tooSmall: number | null,
  tooLarge: number,
  fits: number,
][] = [
  ['num.io.threads', 8, 3, 17, 16],
  ['num.recovery.threads.per.data.dir', 1, null, 3, 2],
  ['background.threads', 10, 4, 21, 5],
  ['num.network.threads', 3, null, 7, 6],
];

describe('thread pool sizes change dynamically within the bounds Kafka 3.9 sets', () => {
  const suite = useBrokerWithClient();
  const incremental = (resourceName: string, configs: Record<string, string | null>) =>
    incrementalAlter(suite.client, BROKER_RESOURCE, resourceName, configs);
  const refused = (name: string, value: number, rule: string): [number, string] => [
    ErrorCode.INVALID_REQUEST,
    `Dynamic thread count update validation failed for ${name}=${value}, ${rule}`,
  ];

  test('a size below half or above double the current one is refused, per broker and at the default', async () => {
    for (const [name, current, tooSmall, tooLarge, fits] of POOLS) {
      const above = `value should not be greater than double the current value ${current}`;
      assert.deepEqual(await incremental('0', { [name]: String(tooLarge) }), refused(name, tooLarge, above));
      assert.deepEqual(
        await incremental(CLUSTER_DEFAULT, { [name]: String(tooLarge) }),
        refused(name, tooLarge, above),
      );
      if (tooSmall !== null) {
        const below = `value should be at least half the current value ${current}`;
        assert.deepEqual(
          await incremental('0', { [name]: String(tooSmall) }),
          refused(name, tooSmall, below),
        );
      }
      assert.deepEqual(await incremental('0', { [name]: String(fits) }), [ErrorCode.NONE, null], name);
      assert.deepEqual(await incremental('0', { [name]: null }), [ErrorCode.NONE, null], name);
    }
  });

  test('log cleaner threads halve with integer division, as LogCleaner checks them', async () => {
    for (const threads of ['2', '3', '1']) {
      assert.deepEqual(
        await incremental('0', { 'log.cleaner.threads': threads }),
        [ErrorCode.NONE, null],
        threads,
      );
    }
    assert.deepEqual(await incremental('0', { 'log.cleaner.threads': '3' }), [
      ErrorCode.INVALID_REQUEST,
      'Log cleaner threads cannot be increased to more than double the current value 1',
    ]);
    assert.deepEqual(await incremental('0', { 'log.cleaner.threads': null }), [ErrorCode.NONE, null]);
  });

  test("a listener's network threads are bounded by that listener's current count", async () => {
    const key = 'listener.name.plaintext.num.network.threads';
    assert.deepEqual(
      await incremental('0', { [key]: '7' }),
      refused('num.network.threads', 7, 'value should not be greater than double the current value 3'),
    );
    assert.deepEqual(await incremental('0', { [key]: '6' }), [ErrorCode.NONE, null]);
    // From 6, the listener may go to 12, though the broker-wide value is still 3.
    assert.deepEqual(await incremental('0', { [key]: '12' }), [ErrorCode.NONE, null]);
    assert.deepEqual(
      await incremental('0', { [key]: '5' }),
      refused('num.network.threads', 5, 'value should be at least half the current value 12'),
    );
    assert.deepEqual(
      await incremental('0', { [key]: null }),
      refused('num.network.threads', 3, 'value should be at least half the current value 12'),
    );
  });
});
