// The isolation level each internal store's consumer reads with, as Kafka 3.9 sets it: every store consumer starts
// from the worker config's originals (an unprefixed `isolation.level` included), and only two are forced to
// read_committed, both under `exactly.once.source.support=enabled` alone (DistributedConfig.exactlyOnceSourceEnabled):
// the offsets topic's (KafkaOffsetBackingStore.configure) and the config topic's (KafkaConfigBackingStore). The status
// topic's is never forced (KafkaStatusBackingStore.configure). Seen on the wire: a proxy in front of the broker
// records the isolation level of every Fetch by client id (`<group.id>-configs`, `-offsets`, `-statuses`).
//
// Before the fix Brook forced read_uncommitted on every store consumer but those two, whatever the worker said, and
// read the offsets topic read_committed under `preparing` as well.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';
import { distributedWorkerProps } from '../helpers/connect-worker.js';

const READ_UNCOMMITTED = 0;
const READ_COMMITTED = 1;

type Proxy = Awaited<ReturnType<typeof startBrokerBehindClientIdProxy>>;

/** Starts a worker of group `<prefix>-cluster` with `overrides`, stops it, and answers each store's Fetch levels. */
async function storeFetchLevels(
  proxy: Proxy,
  prefix: string,
  overrides: Record<string, string>,
): Promise<Record<'configs' | 'offsets' | 'statuses', number[]>> {
  const worker = await startDistributed(distributedWorkerProps(proxy.bootstrap, prefix, overrides), () => {});
  await worker.stop();
  // startDistributed resolves after each store was read to its end, so each consumer has fetched by now.
  const levels = (store: string) => [...proxy.fetchIsolationLevels(`${prefix}-cluster-${store}`)];
  return { configs: levels('configs'), offsets: levels('offsets'), statuses: levels('statuses') };
}

test("the store consumers take the worker's isolation.level; only exactly-once forces read_committed, on offsets and configs", async (t) => {
  const proxy = await startBrokerBehindClientIdProxy({
    'num.partitions': 1,
    'group.initial.rebalance.delay.ms': 0,
  });
  t.after(() => proxy.stop());

  assert.deepEqual(
    await storeFetchLevels(proxy, 'iso-default', {}),
    { configs: [READ_UNCOMMITTED], offsets: [READ_UNCOMMITTED], statuses: [READ_UNCOMMITTED] },
    'without exactly-once and without isolation.level: the consumer default everywhere',
  );
  assert.deepEqual(
    await storeFetchLevels(proxy, 'iso-worker', { 'isolation.level': 'read_committed' }),
    { configs: [READ_COMMITTED], offsets: [READ_COMMITTED], statuses: [READ_COMMITTED] },
    "the worker's unprefixed isolation.level reaches every store consumer",
  );
  assert.deepEqual(
    await storeFetchLevels(proxy, 'iso-preparing', { 'exactly.once.source.support': 'preparing' }),
    { configs: [READ_UNCOMMITTED], offsets: [READ_UNCOMMITTED], statuses: [READ_UNCOMMITTED] },
    'preparing forces nothing (exactlyOnceSourceEnabled() is false)',
  );
  assert.deepEqual(
    await storeFetchLevels(proxy, 'iso-enabled', {
      'exactly.once.source.support': 'enabled',
      'isolation.level': 'read_uncommitted',
    }),
    { configs: [READ_COMMITTED], offsets: [READ_COMMITTED], statuses: [READ_UNCOMMITTED] },
    'enabled forces read_committed on the offsets and config consumers over the worker, not on the status one',
  );
});
