// The dedicated mode internal REST server's error answers, over real HTTP, as Kafka's ConnectExceptionMapper
// gives them: a ConnectException or ConfigException from the herder is 500 (not a client error), a
// RestError keeps its own status; and a request to a worker that does not lead is forwarded to the leader with
// Kafka's forward flag rules (HerderRequestHandler.completeOrForwardRequest), the leader's answer relayed.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { silentLogger } from '../../../src/common/logger.js';
import {
  ConfigException,
  ConnectException,
  RequestTargetError,
  RestError,
} from '../../../src/connect/errors.js';
import { MirrorRestServer } from '../../../src/connect/mirror/mirror-rest.js';
import type { DistributedHerder } from '../../../src/connect/runtime/distributed/distributed-herder.js';

/** What the flow's herder throws next, for either endpoint. */
let failure: Error | null = null;
// Only the two methods the internal server calls; each throws what the test sets.
const herder = {
  putTaskConfigs: async () => {
    if (failure !== null) throw failure;
  },
  fenceZombies: async () => {
    if (failure !== null) throw failure;
  },
} as unknown as DistributedHerder;

const server = new MirrorRestServer(silentLogger);
let base: string;

before(async () => {
  server.addFlow('A', 'B', herder);
  const { host, port } = await server.start('127.0.0.1', 0);
  base = `http://${host}:${port}/A/B/connectors/c`;
});

after(() => server.stop());

async function answer(
  err: Error | null,
  path: 'tasks' | 'fence',
): Promise<{ status: number; message: string }> {
  failure = err;
  const res = await fetch(`${base}/${path}`, {
    method: path === 'tasks' ? 'POST' : 'PUT',
    headers: { 'content-type': 'application/json' },
    body: '[]',
  });
  if (res.status === 204) return { status: 204, message: '' };
  const body = (await res.json()) as { error_code: number; message: string };
  assert.equal(body.error_code, res.status);
  return { status: res.status, message: body.message };
}

test('a ConnectException or ConfigException from the herder is 500, as Kafka', async () => {
  for (const path of ['tasks', 'fence'] as const) {
    assert.deepEqual(await answer(new ConnectException('the config topic is unreadable'), path), {
      status: 500,
      message: 'the config topic is unreadable',
    });
    assert.deepEqual(await answer(new ConfigException('bad value'), path), {
      status: 500,
      message: 'bad value',
    });
    assert.deepEqual(await answer(new Error('unexpected'), path), { status: 500, message: 'unexpected' });
  }
});

test('a RestError keeps its status; success is 204', async () => {
  assert.equal((await answer(new RestError(403, 'wrong signature'), 'tasks')).status, 403);
  assert.equal((await answer(new RestError(404, 'Connector c not found'), 'fence')).status, 404);
  assert.equal((await answer(null, 'tasks')).status, 204);
  assert.equal((await answer(null, 'fence')).status, 204);
});

test("a request to a worker that does not lead goes to the leader with Kafka's forward flag, its answer relayed", async (t) => {
  // The leader: records what reaches it and answers what the test sets.
  const seen: { method: string; url: string; body: string; headers: IncomingMessage['headers'] }[] = [];
  let reply: { status: number; body?: string } = { status: 204 };
  const leader = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        body: Buffer.concat(chunks).toString(),
        headers: req.headers,
      });
      if (reply.body === undefined) res.writeHead(reply.status).end();
      else res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
    });
  });
  await new Promise<void>((r) => leader.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => leader.close(() => r())));
  const leaderFlowUrl = `http://127.0.0.1:${(leader.address() as AddressInfo).port}/A/B/`;
  const notLeader = new RequestTargetError(leaderFlowUrl, 'Only the leader can change configs');
  const call = async (path: string, method: string, body: string, headers: Record<string, string> = {}) => {
    failure = notLeader;
    const res = await fetch(`${base}/${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? null : JSON.parse(text) };
  };

  // A worker's own request (no flag) goes on with forward=true, its body and signature as they were.
  const signature = {
    'X-Connect-Authorization': 'c2ln',
    'X-Connect-Request-Signature-Algorithm': 'HmacSHA256',
  };
  assert.deepEqual(await call('tasks', 'POST', '[{"a":"b"}]', signature), { status: 204, body: null });
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.method, 'POST');
  assert.equal(seen[0]!.url, '/A/B/connectors/c/tasks?forward=true');
  assert.equal(seen[0]!.body, '[{"a":"b"}]');
  assert.equal(seen[0]!.headers['x-connect-authorization'], 'c2ln');
  assert.equal(seen[0]!.headers['x-connect-request-signature-algorithm'], 'HmacSHA256');
  // Forwarded once already: one more hop, with forward=false.
  assert.deepEqual(await call('fence?forward=true', 'PUT', ''), { status: 204, body: null });
  assert.equal(seen[1]!.method, 'PUT');
  assert.equal(seen[1]!.url, '/A/B/connectors/c/fence?forward=false');
  // Forwarded twice: Kafka's 409, nothing sent.
  assert.deepEqual(await call('fence?forward=false', 'PUT', ''), {
    status: 409,
    body: {
      error_code: 409,
      message: 'Cannot complete request because of a conflicting operation (e.g. worker rebalance)',
    },
  });
  assert.equal(seen.length, 2);
  // The leader's error comes back with its status and message.
  reply = { status: 404, body: '{"error_code":404,"message":"Connector c not found"}' };
  assert.deepEqual(await call('fence', 'PUT', ''), {
    status: 404,
    body: { error_code: 404, message: 'Connector c not found' },
  });
  // No leader known: Kafka's 409.
  failure = new RequestTargetError('', 'no leader');
  const res = await fetch(`${base}/fence`, { method: 'PUT', body: '' });
  assert.deepEqual(await res.json(), {
    error_code: 409,
    message:
      'Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.',
  });
  // A leader that cannot be reached: Kafka's 500.
  await new Promise<void>((r) => leader.close(() => r()));
  const down = await call('tasks', 'POST', '[]');
  assert.equal(down.status, 500);
  assert.match(down.body.message, /^IO Error trying to forward REST request: /);
});
