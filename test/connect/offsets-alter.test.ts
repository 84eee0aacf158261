// KIP-875's PATCH and DELETE /connectors/{name}/offsets ask the connector first, as Kafka's
// Worker.modifyConnectorOffsets does: its alterOffsets() (on a new instance, with the connector's config) sees the
// offsets about to be written (a reset: every stored partition with a null offset) and may refuse them by
// throwing, with nothing written; its answer picks the response's message (Kafka's completeModifyOffsetsCallback):
// true "The offsets for this connector have been altered successfully", false (the default) the "Connect
// framework-managed offsets" message that warns about offsets kept elsewhere. Kafka's FileStreamSourceConnector
// refuses an offset without a non-negative integer "position". Before, Brook never called the connector: it wrote
// any offsets and always answered the first message.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Admin } from '../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { type ConnectWorker, pluginDirWith, rest, startConnectWorker } from '../helpers/connect-worker.js';

let broker: BrokerProcess;
let worker: ConnectWorker;
let dir: string;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-offsets-alter-'));
  const plugins = pluginDirWith(dir, 'offsets-connectors');
  worker = await startConnectWorker(dir, {
    'bootstrap.servers': broker.bootstrap,
    'offset.storage.file.filename': join(dir, 'connect.offsets'),
    'plugin.path': plugins,
  });
});

after(async () => {
  await worker?.stop();
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const ALTERED = 'The offsets for this connector have been altered successfully';
const RESET = 'The offsets for this connector have been reset successfully';
const MANAGED_ALTERED =
  'The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses.';
const MANAGED_RESET =
  'The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses.';

/** Creates a connector and stops it (offsets can only be changed then). */
async function createStopped(name: string, config: Record<string, string>): Promise<void> {
  const created = await rest(worker.url, 'POST', '/connectors', { name, config });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal((await rest(worker.url, 'PUT', `/connectors/${name}/stop`)).status, 204);
}

function message(status: number, text: string) {
  return status >= 400
    ? { status, body: { error_code: status, message: text } }
    : { status, body: { message: text } };
}

/** The consumer groups of the cluster with that id (none once deleted). */
async function groupsNamed(groupId: string): Promise<string[]> {
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    return (await admin.listGroups()).map((g) => g.groupId).filter((g) => g === groupId);
  } finally {
    await admin.close();
  }
}

/** What the connector's alterOffsets() was handed, one call a line. */
function alterCalls(log: string): unknown[] {
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

test("FileStreamSource's alterOffsets refuses an offset without a non-negative integer position (500)", async () => {
  const file = join(dir, 'fs-in.txt');
  writeFileSync(file, '');
  await createStopped('fs-src', { 'connector.class': 'FileStreamSource', file, topic: 'fs-src-out' });
  const patch = (offset: unknown) =>
    rest(worker.url, 'PATCH', '/connectors/fs-src/offsets', {
      offsets: [{ partition: { filename: file }, offset }],
    });
  assert.deepEqual(
    await patch({ pos: 3 }),
    message(500, "Offset objects should either be null or contain the key 'position'"),
  );
  assert.deepEqual(
    await patch({ position: 'three' }),
    message(500, "The value for the 'position' key in the offset is expected to be a Long value"),
  );
  assert.deepEqual(
    await patch({ position: -1 }),
    message(500, "The value for the 'position' key in the offset should be a non-negative value"),
  );
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/fs-src/offsets')).body, { offsets: [] });
  assert.deepEqual(await patch({ position: 3 }), message(200, ALTERED));
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/fs-src/offsets')).body, {
    offsets: [{ partition: { filename: file }, offset: { position: 3 } }],
  });
  assert.deepEqual(await rest(worker.url, 'DELETE', '/connectors/fs-src/offsets'), message(200, RESET));
  assert.equal((await rest(worker.url, 'DELETE', '/connectors/fs-src')).status, 204);
});

test('a source without alterOffsets: the framework-managed messages; refusals write nothing', async () => {
  const log = join(dir, 'source-calls.txt');
  writeFileSync(log, '');
  const config = { 'connector.class': 'com.example.OffsetsSourceConnector', 'alter.offsets.log': log };
  await createStopped('plain-src', config);
  const offsets = [{ partition: { shard: 'a' }, offset: { seq: 7 } }];
  assert.deepEqual(
    await rest(worker.url, 'PATCH', '/connectors/plain-src/offsets', { offsets }),
    message(200, MANAGED_ALTERED),
  );
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/plain-src/offsets')).body, { offsets });
  assert.deepEqual(
    await rest(worker.url, 'DELETE', '/connectors/plain-src/offsets'),
    message(200, MANAGED_RESET),
  );
  // The connector saw the offsets to write, then the reset's partitions with null offsets.
  assert.deepEqual(alterCalls(log), [offsets, [{ partition: { shard: 'a' }, offset: null }]]);

  await createStopped('refusing-src', { ...config, 'alter.offsets': 'connect-error' });
  assert.deepEqual(
    await rest(worker.url, 'PATCH', '/connectors/refusing-src/offsets', { offsets }),
    message(500, 'these offsets are not for this connector'),
  );
  await createStopped('broken-src', { ...config, 'alter.offsets': 'type-error' });
  assert.deepEqual(
    await rest(worker.url, 'PATCH', '/connectors/broken-src/offsets', { offsets }),
    message(500, 'Failed to modify offsets for source connector broken-src'),
  );
  for (const name of ['refusing-src', 'broken-src']) {
    assert.deepEqual((await rest(worker.url, 'GET', `/connectors/${name}/offsets`)).body, { offsets: [] });
  }
  for (const name of ['plain-src', 'refusing-src', 'broken-src'])
    assert.equal((await rest(worker.url, 'DELETE', `/connectors/${name}`)).status, 204);
});

test('a sink: alterOffsets sees topic partitions and offsets; answers and refusals as a source', async () => {
  const topic = 'alter-sink-in';
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
  const log = join(dir, 'sink-calls.txt');
  writeFileSync(log, '');
  const config = {
    'connector.class': 'com.example.OffsetsSinkConnector',
    topics: topic,
    'alter.offsets.log': log,
  };
  await createStopped('plain-sink', config);
  const partition = { kafka_topic: topic, kafka_partition: 0 };
  assert.deepEqual(
    await rest(worker.url, 'PATCH', '/connectors/plain-sink/offsets', {
      offsets: [{ partition, offset: { kafka_offset: 3 } }],
    }),
    message(200, MANAGED_ALTERED),
  );
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/plain-sink/offsets')).body, {
    offsets: [{ partition, offset: { kafka_offset: 3 } }],
  });
  assert.deepEqual(
    await rest(worker.url, 'DELETE', '/connectors/plain-sink/offsets'),
    message(200, MANAGED_RESET),
  );
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/plain-sink/offsets')).body, { offsets: [] });
  // As Kafka's resetSinkConnectorOffsets, a reset deletes the connector's consumer group, and a second reset of a
  // group that is gone is no error.
  assert.deepEqual(await groupsNamed('connect-plain-sink'), []);
  assert.deepEqual(
    await rest(worker.url, 'DELETE', '/connectors/plain-sink/offsets'),
    message(200, MANAGED_RESET),
  );
  // The connector saw the offsets to write, the reset's partitions with null offsets, then none (no group left).
  assert.deepEqual(alterCalls(log), [
    [{ topic, partition: 0, offset: 3 }],
    [{ topic, partition: 0, offset: null }],
    [],
  ]);

  await createStopped('refusing-sink', { ...config, 'alter.offsets': 'connect-error' });
  assert.deepEqual(
    await rest(worker.url, 'PATCH', '/connectors/refusing-sink/offsets', {
      offsets: [{ partition, offset: { kafka_offset: 1 } }],
    }),
    message(500, 'these offsets are not for this connector'),
  );
  assert.deepEqual((await rest(worker.url, 'GET', '/connectors/refusing-sink/offsets')).body, {
    offsets: [],
  });

  // FileStreamSink's alterOffsets answers true: Kafka's first message.
  await createStopped('file-sink', {
    'connector.class': 'FileStreamSink',
    topics: topic,
    file: join(dir, 'fs.txt'),
  });
  assert.deepEqual(
    await rest(worker.url, 'PATCH', '/connectors/file-sink/offsets', {
      offsets: [{ partition, offset: { kafka_offset: 1 } }],
    }),
    message(200, ALTERED),
  );
  for (const name of ['plain-sink', 'refusing-sink', 'file-sink'])
    assert.equal((await rest(worker.url, 'DELETE', `/connectors/${name}`)).status, 204);
});

test("the Mirror connectors' alterOffsets check Kafka's partition and offset forms and answer true", async () => {
  const clusters = {
    'source.cluster.alias': 'A',
    'target.cluster.alias': 'B',
    'source.cluster.bootstrap.servers': broker.bootstrap,
    'target.cluster.bootstrap.servers': broker.bootstrap,
  };
  await createStopped('mm-heartbeat', { 'connector.class': 'MirrorHeartbeatConnector', ...clusters });
  const beat = { sourceClusterAlias: 'A', targetClusterAlias: 'B' };
  const heartbeat = (offset: unknown) =>
    rest(worker.url, 'PATCH', '/connectors/mm-heartbeat/offsets', { offsets: [{ partition: beat, offset }] });
  const refused = await heartbeat({ offset: 1 });
  assert.equal(refused.status, 500, JSON.stringify(refused.body));
  assert.match(
    (refused.body as { message: string }).message,
    /^Source offset \{offset=1\} for source partition \{.*\} has an invalid value 1 for the 'offset' key; the only accepted value is 0$/,
  );
  assert.deepEqual(await heartbeat({ offset: 0 }), message(200, ALTERED));

  await createStopped('mm-source', {
    'connector.class': 'MirrorSourceConnector',
    topics: 'mm-in',
    ...clusters,
  });
  const source = (partition: unknown, offset: unknown) =>
    rest(worker.url, 'PATCH', '/connectors/mm-source/offsets', { offsets: [{ partition, offset }] });
  assert.deepEqual(
    await source({ cluster: 'A', topic: 'mm-in' }, { offset: 5 }),
    message(
      500,
      "Source partition {cluster=A, topic=mm-in} is missing the 'partition' key, which is required",
    ),
  );
  const negative = await source({ cluster: 'A', topic: 'mm-in', partition: 0 }, { offset: -5 });
  assert.match(
    (negative.body as { message: string }).message,
    /has an invalid value -5 for the 'offset' key, which cannot be negative$/,
  );
  assert.deepEqual(
    await source({ cluster: 'A', topic: 'mm-in', partition: 0 }, { offset: 5 }),
    message(200, ALTERED),
  );
  // A null offset is taken whatever its partition: stray offsets can be removed.
  assert.deepEqual(await source({ stray: true }, null), message(200, ALTERED));
  for (const name of ['mm-heartbeat', 'mm-source'])
    assert.equal((await rest(worker.url, 'DELETE', `/connectors/${name}`)).status, 204);
});
