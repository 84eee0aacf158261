// The client ids of a source connector's own offsets topic (KIP-618's `offsets.storage.topic`), as Kafka's Worker
// names the clients of the connector-specific offset store: a task reads it with `connector-consumer-<connector>-<n>`
// and creates it with `connector-adminclient-<connector>-<n>` (offsetStoreForRegularSourceTask, the task's producer
// writing), the herder reads it for `GET /connectors/<name>/offsets` with `connector-consumer-<connector>` and
// `connector-adminclient-<connector>` (offsetStoreForRegularSourceConnector). Seen on the wire: a proxy in front of
// the broker records the client id of every request.
//
// Those clients are built as the task clients are (Worker.regularSourceOffsetsConsumerConfigs, adminConfigs): the
// worker's `consumer.` / `admin.` keys, then the connector's `consumer.override.` / `admin.override.` keys, over
// the default client id. Before the fix they got neither (a `client.id` set either way was not seen on the wire).
// Their consumer reads read_committed unless the settings say otherwise (regularSourceOffsetsConsumerConfigs'
// default, without exactly-once too): an aborted offset write is not an offset. Before, it was read uncommitted.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { Consumer, Producer } from '../../src/client/index.js';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

/**
 * Runs the FileStreamSource connector `lines` (two lines) with its own offsets topic on a distributed worker behind
 * a client id proxy, until the herder reads both offsets from that topic; answers the client ids of the Fetch
 * requests and of all requests.
 */
async function runWithOwnOffsetsTopic(
  t: TestContext,
  workerProps: Record<string, string>,
  /** Over the connector's config; a key set to undefined is left out. */
  connectorProps: Record<string, string | undefined>,
): Promise<{
  fetchers: Set<string>;
  all: Set<string>;
  worker: Awaited<ReturnType<typeof startDistributed>>;
  proxy: Awaited<ReturnType<typeof startBrokerBehindClientIdProxy>>;
}> {
  const proxy = await startBrokerBehindClientIdProxy({
    'num.partitions': 1,
    'group.initial.rebalance.delay.ms': 0,
  });
  const dir = mkdtempSync(join(tmpdir(), 'brook-offsets-ids-'));
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'one\ntwo\n');
  const worker = await startDistributed(
    distributedWorkerProps(proxy.bootstrap, 'ids', workerProps),
    () => {},
  ).catch(async (err) => {
    await proxy.stop();
    throw err;
  });
  // One hook, in this order: the worker writes its last statuses before the broker goes.
  t.after(async () => {
    await worker.stop();
    await proxy.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const config: Record<string, string | undefined> = {
    'connector.class': 'FileStreamSource',
    file: input,
    topic: 'lines-out',
    'offsets.storage.topic': 'lines-offsets',
    'offset.flush.interval.ms': '500',
    ...connectorProps,
  };
  for (const [key, value] of Object.entries(config)) if (value === undefined) delete config[key];
  const created = await rest(worker.restUrl, 'POST', '/connectors', { name: 'lines', config });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // The offsets of both lines reach the connector's topic; the herder reads them from it.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await rest(worker.restUrl, 'GET', '/connectors/lines/offsets');
    const offsets = (res.body as { offsets?: { offset: { position: number } }[] }).offsets ?? [];
    if (offsets.some((o) => o.offset.position === 8)) break;
    assert.ok(Date.now() < deadline, `offsets: ${JSON.stringify(res.body)}`);
    await sleep(300);
  }
  return { fetchers: proxy.clientIds(ApiKey.FETCH), all: proxy.clientIds(), worker, proxy };
}

test("a connector's own offsets topic is read by clients named as Kafka's Worker names them", async (t) => {
  const { fetchers, all } = await runWithOwnOffsetsTopic(t, {}, {});
  for (const id of ['connector-consumer-lines-0', 'connector-consumer-lines'])
    assert.ok(fetchers.has(id), `no Fetch from ${id}: ${[...fetchers].sort().join(', ')}`);
  for (const id of ['connector-adminclient-lines-0', 'connector-adminclient-lines'])
    assert.ok(all.has(id), `no request from ${id}: ${[...all].sort().join(', ')}`);
  assert.deepEqual(
    [...all].filter((id) => id.includes('lines-offsets')),
    [],
  );
});

test("the offsets topic's clients take the worker's prefixed keys and the connector's overrides", async (t) => {
  const { fetchers, all, worker, proxy } = await runWithOwnOffsetsTopic(
    t,
    { 'consumer.client.id': 'worker-offsets-reader' },
    { 'admin.override.client.id': 'lines-offsets-admin' },
  );
  assert.ok(fetchers.has('worker-offsets-reader'), `Fetch client ids: ${[...fetchers].sort().join(', ')}`);
  assert.ok(all.has('lines-offsets-admin'), `client ids: ${[...all].sort().join(', ')}`);
  assert.deepEqual(
    [...all].filter((id) => id.startsWith('connector-consumer-') || id.startsWith('connector-adminclient-')),
    [],
    'no client kept its default name',
  );
  // Stopped (no task, so no task store) and reconfigured, the connector's offsets are read by the herder with
  // clients of its new settings.
  assert.equal((await rest(worker.restUrl, 'PUT', '/connectors/lines/stop')).status, 204);
  const stopDeadline = Date.now() + 30_000;
  for (;;) {
    const status = await rest(worker.restUrl, 'GET', '/connectors/lines/status');
    const body = status.body as { connector?: { state: string }; tasks?: unknown[] };
    if (body.connector?.state === 'STOPPED' && body.tasks?.length === 0) break;
    assert.ok(Date.now() < stopDeadline, `status: ${JSON.stringify(body)}`);
    await sleep(200);
  }
  const connector = await rest(worker.restUrl, 'GET', '/connectors/lines/config');
  const config = {
    ...(connector.body as Record<string, string>),
    'admin.override.client.id': 'lines-admin-2',
  };
  const updated = await rest(worker.restUrl, 'PUT', '/connectors/lines/config', config);
  assert.equal(updated.status, 200, JSON.stringify(updated.body));
  const read = await rest(worker.restUrl, 'GET', '/connectors/lines/offsets');
  assert.equal(read.status, 200, JSON.stringify(read.body));
  const after = proxy.clientIds();
  assert.ok(after.has('lines-admin-2'), `client ids: ${[...after].sort().join(', ')}`);
});

test("a connector's own offsets topic is read read_committed, as Kafka's Worker reads it", async (t) => {
  const { worker, proxy } = await runWithOwnOffsetsTopic(t, {}, {});
  // The key the task wrote its offset under, and a transaction that writes another offset under it and aborts.
  const tp = { topic: 'lines-offsets', partition: 0 };
  const reader = new Consumer({ bootstrapServers: proxy.bootstrap });
  let key: Buffer | null = null;
  try {
    reader.assign([tp]);
    await reader.seekToBeginning([tp]);
    const deadline = Date.now() + 30_000;
    while (key === null && Date.now() < deadline) for (const r of await reader.poll(500)) key ??= r.key;
  } finally {
    await reader.close();
  }
  assert.ok(key !== null, 'the task wrote an offset');
  const aborting = new Producer({
    bootstrapServers: proxy.bootstrap,
    transactionalId: 'lines-offsets-aborted',
  });
  try {
    await aborting.initTransactions();
    aborting.beginTransaction();
    await aborting.send({ topic: 'lines-offsets', key, value: Buffer.from('{"position":999}') });
    await aborting.abortTransaction();
  } finally {
    await aborting.close();
  }
  const res = await rest(worker.restUrl, 'GET', '/connectors/lines/offsets');
  const offsets = (res.body as { offsets?: { offset: { position: number } }[] }).offsets ?? [];
  assert.deepEqual(
    offsets.map((o) => o.offset.position),
    [8],
    'the aborted write is not read',
  );
});

test("a connector naming the worker's offsets topic as its own gets a store of its own on it", async (t) => {
  // Kafka's Worker (offsetStoreForRegularSourceTask/Connector, sameOffsetTopicAsWorker): an offsets.storage.topic
  // that is the worker's offsets topic on the worker's cluster is read and written by the connector's clients alone
  // (withOnlyConnectorStore), so their settings apply and each offset is written once, not by the worker's clients.
  const { fetchers, all, proxy } = await runWithOwnOffsetsTopic(
    t,
    { 'consumer.client.id': 'worker-offsets-reader' },
    { 'offsets.storage.topic': 'ids-offsets' },
  );
  assert.ok(fetchers.has('worker-offsets-reader'), `Fetch client ids: ${[...fetchers].sort().join(', ')}`);
  for (const id of ['connector-adminclient-lines-0', 'connector-adminclient-lines'])
    assert.ok(all.has(id), `no request from ${id}: ${[...all].sort().join(', ')}`);
  const producers = proxy.clientIds(ApiKey.PRODUCE);
  assert.ok(
    producers.has('connector-producer-lines-0'),
    `Produce client ids: ${[...producers].sort().join(', ')}`,
  );
  assert.ok(
    !producers.has('ids-cluster-offsets'),
    `the worker's offsets producer wrote: ${[...producers].sort().join(', ')}`,
  );
});

test('an exactly-once task without offsets.storage.topic reads the worker topic with its own clients', async (t) => {
  // Kafka's Worker.offsetStoreForExactlyOnceSourceTask/Connector: under exactly-once, a connector that names no
  // offsets topic gets a connector-specific store on the worker's (withOnlyConnectorStore on the worker's cluster),
  // read by `connector-consumer-<name>[-<task>]` with the connector's consumer overrides; the worker's store is not
  // used. Before, the task and the herder read the worker's store, so only the worker's reader fetched.
  const { fetchers } = await runWithOwnOffsetsTopic(
    t,
    { 'exactly.once.source.support': 'enabled' },
    { 'offsets.storage.topic': undefined, 'consumer.override.client.id': 'lines-eos-offsets-reader' },
  );
  assert.ok(fetchers.has('lines-eos-offsets-reader'), `Fetch client ids: ${[...fetchers].sort().join(', ')}`);
});

const JAAS = (user: string) =>
  `org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${user}-secret";`;

/** Kafka's security keys for a SASL/PLAIN login as `user`, under `prefix`. */
function saslKeys(prefix: string, user: string): Record<string, string> {
  return {
    [`${prefix}security.protocol`]: 'SASL_PLAINTEXT',
    [`${prefix}sasl.mechanism`]: 'PLAIN',
    [`${prefix}sasl.jaas.config`]: JAAS(user),
  };
}

test("the offsets topic's consumer and producer do not take the worker's unprefixed security keys", {
  timeout: 180_000,
}, async (t) => {
  // Kafka's Worker: the connector-specific store's consumer (regularSourceOffsetsConsumerConfigs) and producer
  // (baseProducerConfigs) start from the worker's `consumer.` / `producer.` keys only, its admin (adminConfigs)
  // from the unprefixed keys, then `admin.`. Here the worker logs in as alice, its producers as bob, and it has no
  // `consumer.` keys: the offsets consumer does not log in (the proxy lets it read unauthenticated) until the
  // connector gives it `consumer.override.*` keys (carol).
  const proxy = await startBrokerBehindClientIdProxy(
    { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 },
    { sasl: true },
  );
  const dir = mkdtempSync(join(tmpdir(), 'brook-offsets-sasl-'));
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'one\ntwo\n');
  const worker = await startDistributed(
    distributedWorkerProps(proxy.bootstrap, 'sasl', {
      ...saslKeys('', 'alice'),
      ...saslKeys('producer.', 'bob'),
    }),
    () => {},
  ).catch(async (err) => {
    await proxy.stop();
    throw err;
  });
  t.after(async () => {
    await worker.stop();
    await proxy.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const config: Record<string, string> = {
    'connector.class': 'FileStreamSource',
    file: input,
    topic: 'lines-out',
    'offsets.storage.topic': 'lines-offsets',
    'offset.flush.interval.ms': '500',
  };
  const readOffsets = async (): Promise<void> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await rest(worker.restUrl, 'GET', '/connectors/lines/offsets');
      const offsets = (res.body as { offsets?: { offset: { position: number } }[] }).offsets ?? [];
      if (offsets.some((o) => o.offset.position === 8)) return;
      assert.ok(Date.now() < deadline, `offsets: ${JSON.stringify(res.body)}`);
      await sleep(300);
    }
  };
  const created = await rest(worker.restUrl, 'POST', '/connectors', { name: 'lines', config });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await readOffsets();
  const users = proxy.saslUsers();
  const ids = ['connector-consumer-lines-0', 'connector-producer-lines-0', 'connector-adminclient-lines-0'];
  assert.deepEqual(
    [...ids, 'connector-consumer-lines'].map((id) => users.get(id)),
    [undefined, 'bob', 'alice', undefined],
  );

  // With the connector's consumer.override.* keys its consumers log in as carol.
  const updated = await rest(worker.restUrl, 'PUT', '/connectors/lines/config', {
    ...config,
    ...saslKeys('consumer.override.', 'carol'),
  });
  assert.equal(updated.status, 200, JSON.stringify(updated.body));
  await readOffsets();
  assert.equal(proxy.saslUsers().get('connector-consumer-lines'), 'carol');
});
