// The client ids of a source connector's own offsets topic (KIP-618's `offsets.storage.topic`), as Kafka's Worker
// names the clients of the connector-specific offset store: a task reads it with `connector-consumer-<connector>-<n>`
// and creates it with `connector-adminclient-<connector>-<n>` (offsetStoreForRegularSourceTask, the task's producer
// writing), the herder reads it for `GET /connectors/<name>/offsets` with `connector-consumer-<connector>` and
// `connector-adminclient-<connector>` (offsetStoreForRegularSourceConnector). Seen on the wire: a proxy in front of
// the broker records the client id of every request.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

test("a connector's own offsets topic is read by clients named as Kafka's Worker names them", async (t) => {
  const proxy = await startBrokerBehindClientIdProxy({
    'num.partitions': 1,
    'group.initial.rebalance.delay.ms': 0,
  });
  const dir = mkdtempSync(join(tmpdir(), 'brook-offsets-ids-'));
  const input = join(dir, 'in.txt');
  writeFileSync(input, 'one\ntwo\n');
  const worker = await startDistributed(distributedWorkerProps(proxy.bootstrap, 'ids'), () => {}).catch(
    async (err) => {
      await proxy.stop();
      throw err;
    },
  );
  // One hook, in this order: the worker writes its last statuses before the broker goes.
  t.after(async () => {
    await worker.stop();
    await proxy.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const created = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'lines',
    config: {
      'connector.class': 'FileStreamSource',
      file: input,
      topic: 'lines-out',
      'offsets.storage.topic': 'lines-offsets',
      'offset.flush.interval.ms': '500',
    },
  });
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

  const fetchers = proxy.clientIds(ApiKey.FETCH);
  const all = proxy.clientIds();
  for (const id of ['connector-consumer-lines-0', 'connector-consumer-lines'])
    assert.ok(fetchers.has(id), `no Fetch from ${id}: ${[...fetchers].sort().join(', ')}`);
  for (const id of ['connector-adminclient-lines-0', 'connector-adminclient-lines'])
    assert.ok(all.has(id), `no request from ${id}: ${[...all].sort().join(', ')}`);
  assert.deepEqual(
    [...all].filter((id) => id.includes('lines-offsets')),
    [],
  );
});
