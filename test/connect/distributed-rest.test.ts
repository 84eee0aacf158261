// The REST API of a distributed Connect cluster of two in-process workers against a broker process: changes sent
// to the worker that does not lead are forwarded to the leader (and refused with Kafka's 409 when they arrive
// already forwarded), validation errors come back from the leader, restarts with includeTasks (KIP-745) and of
// one task reach the worker that runs it, stop (KIP-875) leaves no tasks, offsets of a stopped source are read
// and reset from the offset topic (the source then reads its file again), active topics (KIP-558) are shared
// and reset through the status topic, and a delete applies on both workers. Internal requests (the sessioned
// protocol) are signed with the session key the leader writes to the config topic: unsigned, wrongly signed and
// unknown-algorithm requests get Kafka's 400/403, one signed with the key read from the topic goes through.
// A worker with exactly.once.source.support disabled refuses exactly.once.support=required with Kafka's message.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Consumer, Producer } from '../../src/client/index.js';
import {
  type DistributedWorker,
  startDistributed,
} from '../../src/connect/runtime/distributed/distributed.js';
import { CONNECT_LOGGERS } from '../../src/connect/runtime/loggers.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { distributedWorkerProps, rest } from '../helpers/connect-worker.js';
import { eventually, sleep } from '../helpers/wait.js';

let broker: BrokerProcess;
let dir: string;
const workers: DistributedWorker[] = [];

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-rest-'));
});

after(async () => {
  for (const w of workers) await w.stop().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function start(): Promise<DistributedWorker> {
  return startDistributed(
    distributedWorkerProps(broker.bootstrap, 'rest', {
      'offset.storage.partitions': '2',
      'status.storage.partitions': '2',
      'offset.flush.interval.ms': '200',
    }),
    () => {},
  );
}

/** Records in a topic (the sum of its partitions' end offsets). */
async function topicCount(topic: string, partitions = 1): Promise<number> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap });
  try {
    const ends = await consumer.endOffsets(
      [...Array(partitions).keys()].map((partition) => ({ topic, partition })),
    );
    return ends.reduce((n, e) => n + e.offset, 0);
  } finally {
    await consumer.close();
  }
}

interface Status {
  connector: { state: string; worker_id: string };
  tasks: { id: number; state: string; worker_id: string }[];
}

async function statusOf(url: string, name: string): Promise<Status | null> {
  const r = await rest(url, 'GET', `/connectors/${name}/status`);
  return r.status === 200 ? (r.body as Status) : null;
}

async function running(url: string, name: string, tasks: number): Promise<boolean> {
  const s = await statusOf(url, name);
  return (
    s?.connector.state === 'RUNNING' &&
    s.tasks.length === tasks &&
    s.tasks.every((t) => t.state === 'RUNNING')
  );
}

test('a two-worker cluster forwards changes to its leader and restarts, stops and resets where the work runs', async () => {
  workers.push(...(await Promise.all([start(), start()])));
  const [w1, w2] = workers as [DistributedWorker, DistributedWorker];
  await eventually(
    async () => w1.herder.leaderUrl() !== null && w1.herder.leaderUrl() === w2.herder.leaderUrl(),
    30_000,
    'one leader',
  );
  const leaderUrl = w1.herder.leaderUrl()!;
  const [leader, follower] = leaderUrl.includes(w1.workerId) ? [w1, w2] : [w2, w1];
  assert.equal(leaderUrl, `http://${leader.workerId}/`);

  const input = join(dir, 'in.txt');
  writeFileSync(input, 'a\nb\nc\n');
  const created = await rest(follower.restUrl, 'POST', '/connectors', {
    name: 'src',
    config: { 'connector.class': 'FileStreamSource', file: input, topic: 'rest-lines', 'tasks.max': '1' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.deepEqual((created.body as { name: string }).name, 'src');

  // Already forwarded once and still not at the leader: Kafka's 409.
  const twice = await rest(follower.restUrl, 'POST', '/connectors?forward=false', {
    name: 'other',
    config: { 'connector.class': 'FileStreamSource', topic: 't' },
  });
  assert.deepEqual(twice, {
    status: 409,
    body: {
      error_code: 409,
      message: 'Cannot complete request because of a conflicting operation (e.g. worker rebalance)',
    },
  });
  // Validation happens at the leader and its 400 comes back through the follower.
  const invalid = await rest(follower.restUrl, 'PUT', '/connectors/bad/config', {
    'connector.class': 'FileStreamSource',
    'tasks.max': 'many',
  });
  assert.equal(invalid.status, 400);
  assert.match((invalid.body as { message: string }).message, /Connector configuration is invalid/);

  await eventually(() => running(follower.restUrl, 'src', 1), 30_000, 'src running');
  await eventually(async () => (await topicCount('rest-lines')) === 3, 30_000, 'three lines in the topic');

  // KIP-558: the topics the connector used, known to both workers through the status topic, and reset.
  for (const w of [w1, w2]) {
    await eventually(
      async () =>
        JSON.stringify((await rest(w.restUrl, 'GET', '/connectors/src/topics')).body) ===
        JSON.stringify({ src: { topics: ['rest-lines'] } }),
      30_000,
      'active topics on both workers',
    );
  }
  assert.equal((await rest(follower.restUrl, 'PUT', '/connectors/src/topics/reset')).status, 202);
  for (const w of [w1, w2]) {
    await eventually(
      async () =>
        JSON.stringify((await rest(w.restUrl, 'GET', '/connectors/src/topics')).body) ===
        JSON.stringify({ src: { topics: [] } }),
      30_000,
      'active topics reset on both workers',
    );
  }

  // KIP-745 restart through the follower: the plan first, then the work restarts where it runs.
  const statusesBefore = await topicCount('rest-status', 2);
  const plan = await rest(
    follower.restUrl,
    'POST',
    '/connectors/src/restart?includeTasks=true&onlyFailed=false',
  );
  assert.equal(plan.status, 202, JSON.stringify(plan.body));
  const p = plan.body as Status;
  assert.equal(p.connector.state, 'RESTARTING');
  assert.deepEqual(
    p.tasks.map((t) => t.state),
    ['RESTARTING'],
  );
  // Restarted: the connector wrote RUNNING again, the task UNASSIGNED and RUNNING.
  await eventually(
    async () =>
      (await topicCount('rest-status', 2)) >= statusesBefore + 3 && (await running(leader.restUrl, 'src', 1)),
    30_000,
    'src restarted and running',
  );
  // One task restarted through the worker that does not run it: forwarded to its owner.
  const owner = (await statusOf(leader.restUrl, 'src'))!.tasks[0]!.worker_id;
  const notOwner = owner === w1.workerId ? w2 : w1;
  const statusesBeforeTask = await topicCount('rest-status', 2);
  assert.equal((await rest(notOwner.restUrl, 'POST', '/connectors/src/tasks/0/restart')).status, 204);
  await eventually(
    async () =>
      (await topicCount('rest-status', 2)) >= statusesBeforeTask + 2 &&
      (await running(notOwner.restUrl, 'src', 1)),
    30_000,
    'the task restarted and running',
  );
  // The source resumed from its offsets: nothing was produced twice.
  await sleep(500);
  assert.equal(await topicCount('rest-lines'), 3);

  // KIP-875 stop: no tasks, then offsets from the offset topic, reset, and a resume that reads the file again.
  assert.equal((await rest(follower.restUrl, 'PUT', '/connectors/src/stop')).status, 204);
  await eventually(
    async () => {
      const s = await statusOf(leader.restUrl, 'src');
      return s?.connector.state === 'STOPPED' && s.tasks.length === 0;
    },
    30_000,
    'src stopped',
  );
  const offsets = await rest(follower.restUrl, 'GET', '/connectors/src/offsets');
  assert.deepEqual(offsets.body, { offsets: [{ partition: { filename: input }, offset: { position: 6 } }] });
  const reset = await rest(follower.restUrl, 'DELETE', '/connectors/src/offsets');
  assert.deepEqual(reset, {
    status: 200,
    body: { message: 'The offsets for this connector have been reset successfully' },
  });
  assert.deepEqual((await rest(leader.restUrl, 'GET', '/connectors/src/offsets')).body, { offsets: [] });
  assert.equal((await rest(follower.restUrl, 'PUT', '/connectors/src/resume')).status, 202);
  await eventually(() => running(follower.restUrl, 'src', 1), 30_000, 'src running after resume');
  await eventually(async () => (await topicCount('rest-lines')) === 6, 30_000, 'the file read again');

  // Delete through the follower: gone on both workers, statuses too.
  assert.equal((await rest(follower.restUrl, 'DELETE', '/connectors/src')).status, 204);
  for (const w of [w1, w2]) {
    await eventually(
      async () => (await rest(w.restUrl, 'GET', '/connectors/src')).status === 404,
      30_000,
      'src gone',
    );
    assert.deepEqual((await rest(w.restUrl, 'GET', '/connectors')).body, []);
  }
});

test('the expanded connector list leaves out a connector without a status instead of failing (as Kafka)', async () => {
  const [w1, w2] = workers as [DistributedWorker, DistributedWorker];
  const sink = (name: string) => ({
    name,
    config: { 'connector.class': 'FileStreamSink', topics: 'rest-expand', file: join(dir, `${name}.txt`) },
  });
  assert.equal((await rest(w1.restUrl, 'POST', '/connectors', sink('shown'))).status, 201);
  assert.equal((await rest(w1.restUrl, 'POST', '/connectors', sink('unseen'))).status, 201);
  await eventually(
    async () => (await running(w1.restUrl, 'shown', 1)) && (await running(w1.restUrl, 'unseen', 1)),
    30_000,
    'both running',
  );
  // A connector whose status is not (or no longer) in the status topic, as between its creation and the first
  // status its worker writes: here its status record is removed with a tombstone.
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  try {
    await producer.send({ topic: 'rest-status', key: Buffer.from('status-connector-unseen'), value: null });
  } finally {
    await producer.close();
  }
  for (const w of [w1, w2]) {
    await eventually(
      async () => (await rest(w.restUrl, 'GET', '/connectors/unseen/status')).status === 404,
      30_000,
      'the status gone',
    );
    // Kafka's listConnectors skips a connector whose status or info is not found; the rest are listed.
    const listed = await rest(w.restUrl, 'GET', '/connectors?expand=status&expand=info');
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const body = listed.body as Record<string, { status: { connector: { state: string } }; info: unknown }>;
    assert.deepEqual(Object.keys(body), ['shown']);
    assert.equal(body.shown!.status.connector.state, 'RUNNING');
    assert.equal((body.shown!.info as { name: string }).name, 'shown');
  }
  for (const name of ['shown', 'unseen'])
    assert.equal((await rest(w1.restUrl, 'DELETE', `/connectors/${name}`)).status, 204);
  // Kafka's AbstractHerder words the 404s of a missing connector per operation, on any worker.
  for (const w of [w1, w2]) {
    for (const verb of ['pause', 'resume'])
      assert.deepEqual(await rest(w.restUrl, 'PUT', `/connectors/unseen/${verb}`), {
        status: 404,
        body: { error_code: 404, message: 'Unknown connector unseen' },
      });
  }
});

test("offsets change only for a STOPPED connector with no tasks (Kafka's modifyConnectorOffsetsChecks)", async () => {
  const [w1] = workers as [DistributedWorker, DistributedWorker];
  const input = join(dir, 'half-stopped.txt');
  writeFileSync(input, 'a\n');
  const create = await rest(w1.restUrl, 'POST', '/connectors', {
    name: 'half-stopped',
    config: { 'connector.class': 'FileStreamSource', file: input, topic: 'rest-half', 'tasks.max': '1' },
  });
  assert.equal(create.status, 201, JSON.stringify(create.body));
  await eventually(() => running(w1.restUrl, 'half-stopped', 1), 30_000, 'the connector running');
  // A STOPPED target state written while the connector still has task configs (as an older worker's stop, or a
  // stop whose empty task configs were not written): Kafka still refuses to change its offsets.
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  try {
    await producer.send({
      topic: 'rest-configs',
      key: Buffer.from('target-state-half-stopped'),
      value: Buffer.from(JSON.stringify({ state: 'PAUSED', 'state.v2': 'STOPPED' })),
    });
  } finally {
    await producer.close();
  }
  await eventually(
    async () => (await statusOf(w1.restUrl, 'half-stopped'))?.connector.state === 'STOPPED',
    30_000,
    'the connector stopped',
  );
  const refused = await rest(w1.restUrl, 'DELETE', '/connectors/half-stopped/offsets');
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.match((refused.body as { message: string }).message, /must be in the STOPPED state/);
  // A stop through the REST API writes no task configs first: then the offsets may be reset.
  assert.equal((await rest(w1.restUrl, 'PUT', '/connectors/half-stopped/stop')).status, 204);
  const reset = await rest(w1.restUrl, 'DELETE', '/connectors/half-stopped/offsets');
  assert.equal(reset.status, 200, JSON.stringify(reset.body));
  assert.equal((await rest(w1.restUrl, 'DELETE', '/connectors/half-stopped')).status, 204);
});

test('internal requests are signed with the session key the leader keeps in the config topic (sessioned)', async () => {
  const [w1, w2] = workers as [DistributedWorker, DistributedWorker];
  const leaderUrl = w1.herder.leaderUrl()!;
  const [leader, follower] = leaderUrl.includes(w1.workerId) ? [w1, w2] : [w2, w1];

  // Kafka's session-key record: a base64 key, its algorithm and creation time.
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap });
  let session: { key: string; algorithm: string; 'creation-timestamp': number } | undefined;
  try {
    const tp = { topic: 'rest-configs', partition: 0 };
    consumer.assign([tp]);
    await consumer.seekToBeginning([tp]);
    const [end] = await consumer.endOffsets([tp]);
    while ((await consumer.position(tp)) < end!.offset)
      for (const r of await consumer.poll(500))
        if (r.key?.toString() === 'session-key') session = JSON.parse(r.value!.toString());
  } finally {
    await consumer.close();
  }
  assert.ok(session !== undefined, 'a session-key record');
  assert.equal(session.algorithm, 'HmacSHA256');
  assert.equal(Buffer.from(session.key, 'base64').length, 32);
  assert.ok(Math.abs(session['creation-timestamp'] - Date.now()) < 600_000);

  // A source the follower may run: its task configs reach the leader signed.
  const input = join(dir, 'signed.txt');
  writeFileSync(input, 'x\n');
  const created = await rest(follower.restUrl, 'POST', '/connectors', {
    name: 'signed',
    config: { 'connector.class': 'FileStreamSource', file: input, topic: 'rest-signed', 'tasks.max': '1' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await eventually(() => running(leader.restUrl, 'signed', 1), 30_000, 'signed running');

  const internal = async (headers: Record<string, string>, body: string, to = leader.restUrl) => {
    const res = await fetch(`${to}/connectors/signed/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as { message?: string } | null };
  };
  const tasks = JSON.stringify([
    { 'task.class': 'x', file: input, topic: 'rest-signed', 'batch.size': '2000' },
  ]);
  const unsigned = await internal({}, tasks);
  assert.deepEqual(unsigned, {
    status: 400,
    body: { error_code: 400, message: 'Internal request missing required signature' },
  });
  const wrong = await internal(
    { 'X-Connect-Authorization': 'AAAA', 'X-Connect-Request-Signature-Algorithm': 'HmacSHA256' },
    tasks,
  );
  assert.deepEqual(wrong, {
    status: 403,
    body: { error_code: 403, message: 'Internal request contained invalid signature.' },
  });
  const otherAlgorithm = await internal(
    { 'X-Connect-Authorization': 'AAAA', 'X-Connect-Request-Signature-Algorithm': 'HmacSHA512' },
    tasks,
  );
  assert.equal(otherAlgorithm.status, 400);
  assert.match(otherAlgorithm.body!.message!, /does not support the 'HmacSHA512' key signing algorithm/);
  // Signed with the key from the config topic, as another worker does: accepted, even through the follower
  // (forwarded to the leader with its signature).
  const key = Buffer.from(session.key, 'base64');
  const fence = await fetch(`${follower.restUrl}/connectors/signed/fence`, {
    method: 'PUT',
    headers: {
      'X-Connect-Authorization': createHmac('sha256', key).update(Buffer.alloc(0)).digest('base64'),
      'X-Connect-Request-Signature-Algorithm': 'HmacSHA256',
    },
  });
  assert.equal(fence.status, 204, await fence.text());
  assert.equal((await rest(leader.restUrl, 'DELETE', '/connectors/signed')).status, 204);

  // KIP-618 on a worker with exactly-once source disabled (the default): Kafka's message for `required`.
  const eos = await rest(follower.restUrl, 'PUT', '/connector-plugins/FileStreamSource/config/validate', {
    'connector.class': 'FileStreamSource',
    file: input,
    topic: 'x',
    'exactly.once.support': 'required',
  });
  const errors = (eos.body as { configs: { value: { name: string; errors: string[] } }[] }).configs.find(
    (c) => c.value.name === 'exactly.once.support',
  )?.value.errors;
  assert.deepEqual(errors, ['This worker does not have exactly-once source support enabled.']);
});

test('a cluster-scoped logger level (KIP-976) reaches every worker through the config topic, not a later one', async () => {
  const [w1, w2] = workers as [DistributedWorker, DistributedWorker];
  const levelAt = async (url: string, name: string) => {
    const r = await rest(url, 'GET', `/admin/loggers/${name}`);
    return r.status === 200 ? (r.body as { level: string }).level : null;
  };
  const ns = 'org.apache.kafka.connect.runtime';
  assert.equal(
    (await rest(w1.restUrl, 'PUT', `/admin/loggers/${ns}?scope=cluster`, { level: 'debug' })).status,
    204,
  );
  for (const w of [w1, w2])
    await eventually(
      async () => (await levelAt(w.restUrl, ns)) === 'DEBUG',
      30_000,
      `the level on ${w.workerId}`,
    );
  // Kafka's record: the namespace in the key, the level as the request gave it.
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap });
  const records: Array<[string, string]> = [];
  try {
    const tp = { topic: 'rest-configs', partition: 0 };
    consumer.assign([tp]);
    await consumer.seekToBeginning([tp]);
    const [end] = await consumer.endOffsets([tp]);
    while ((await consumer.position(tp)) < end!.offset)
      for (const r of await consumer.poll(500))
        if (r.key?.toString().startsWith('logger-cluster-'))
          records.push([r.key.toString(), r.value!.toString()]);
  } finally {
    await consumer.close();
  }
  assert.deepEqual(records, [[`logger-cluster-${ns}`, '{"level":"debug"}']]);

  // The worker scope stays on the worker asked.
  // The namespace and the worker's own loggers under it.
  assert.deepEqual(
    (await rest(w2.restUrl, 'PUT', `/admin/loggers/${ns}`, { level: 'TRACE' })).body,
    [ns, ...Object.values(CONNECT_LOGGERS).filter((name) => name.startsWith(ns))].sort(),
  );
  assert.equal(await levelAt(w2.restUrl, ns), 'TRACE');
  assert.equal(await levelAt(w1.restUrl, ns), 'DEBUG');
  // As in Kafka, a worker does not apply the levels written before it started.
  const w3 = await start();
  try {
    assert.equal(await levelAt(w3.restUrl, ns), null);
  } finally {
    await w3.stop();
  }
});

test("GET /health answers healthy through each worker's loop, and a create forwarded to the leader answers the Location of the worker asked", async () => {
  const [w1, w2] = workers as [DistributedWorker, DistributedWorker];
  // KIP-1017: once a worker has joined and its work loop runs a request.
  for (const w of [w1, w2]) {
    assert.deepEqual(await rest(w.restUrl, 'GET', '/health'), {
      status: 200,
      body: { status: 'healthy', message: 'Worker has completed startup and is ready to handle requests.' },
    });
  }
  await eventually(
    async () => w1.herder.leaderUrl() !== null && w1.herder.leaderUrl() === w2.herder.leaderUrl(),
    30_000,
    'one leader',
  );
  const follower = w1.herder.leaderUrl()!.includes(w1.workerId) ? w2 : w1;
  const created = await fetch(`${follower.restUrl}/connectors`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'located',
      config: { 'connector.class': 'FileStreamSource', topic: 'located', file: join(dir, 'located.txt') },
      initial_state: 'STOPPED',
    }),
  });
  assert.equal(created.status, 201, await created.clone().text());
  // Kafka's follower builds the 201 itself: its own address, not the leader's.
  assert.equal(created.headers.get('location'), `${follower.restUrl}/connectors/located`);
  await eventually(
    async () => (await rest(follower.restUrl, 'DELETE', '/connectors/located')).status === 204,
    30_000,
    'the connector deleted',
  );
});

test("pausing a STOPPED connector pauses it with no tasks, and a resume starts it with its tasks (Kafka's testPauseStopResume)", async () => {
  const [w1] = workers as [DistributedWorker, DistributedWorker];
  const input = join(dir, 'pause-stopped.txt');
  writeFileSync(input, 'x\n');
  const created = await rest(w1.restUrl, 'POST', '/connectors', {
    name: 'pause-stopped',
    config: { 'connector.class': 'FileStreamSource', topic: 'pause-stopped', file: input },
    initial_state: 'STOPPED',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await eventually(
    async () => (await statusOf(w1.restUrl, 'pause-stopped'))?.connector.state === 'STOPPED',
    30_000,
    'stopped',
  );
  // As Kafka's AbstractHerder.pauseConnector: the target state becomes PAUSED whatever it was; the connector
  // (WorkerConnector.suspend) reports PAUSED, and with no task configs there are no tasks to pause.
  assert.equal((await rest(w1.restUrl, 'PUT', '/connectors/pause-stopped/pause')).status, 202);
  await eventually(
    async () => (await statusOf(w1.restUrl, 'pause-stopped'))?.connector.state === 'PAUSED',
    30_000,
    'paused',
  );
  await sleep(500);
  const paused = await statusOf(w1.restUrl, 'pause-stopped');
  assert.equal(paused?.connector.state, 'PAUSED');
  assert.deepEqual(paused?.tasks, []);
  assert.deepEqual((await rest(w1.restUrl, 'GET', '/connectors/pause-stopped/tasks')).body, []);
  // No longer STOPPED: its offsets cannot be changed (Kafka's modifyConnectorOffsetsChecks).
  assert.equal((await rest(w1.restUrl, 'DELETE', '/connectors/pause-stopped/offsets')).status, 400);

  assert.equal((await rest(w1.restUrl, 'PUT', '/connectors/pause-stopped/resume')).status, 202);
  await eventually(() => running(w1.restUrl, 'pause-stopped', 1), 30_000, 'running with its task');
  assert.equal((await rest(w1.restUrl, 'DELETE', '/connectors/pause-stopped')).status, 204);
});
