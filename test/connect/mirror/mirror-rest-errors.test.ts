// The dedicated mode internal REST server's error answers, over real HTTP, as Kafka's ConnectExceptionMapper
// gives them: a ConnectException or ConfigException from the herder is 500 (not a client error), a
// RestError keeps its own status, and a request to a worker that does not lead is 409.

import assert from 'node:assert/strict';
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

test('a RestError keeps its status; a worker that does not lead answers 409; success is 204', async () => {
  assert.equal((await answer(new RestError(403, 'wrong signature'), 'tasks')).status, 403);
  assert.equal((await answer(new RestError(404, 'Connector c not found'), 'fence')).status, 404);
  assert.equal(
    (await answer(new RequestTargetError('http://leader:8083/', 'not the leader'), 'tasks')).status,
    409,
  );
  assert.equal((await answer(null, 'tasks')).status, 204);
  assert.equal((await answer(null, 'fence')).status, 204);
});
