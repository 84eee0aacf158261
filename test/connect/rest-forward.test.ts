// A Connect worker's REST server forwarding a request it cannot serve (the herder names another worker: the
// leader, or a task's owner), over real HTTP, with the rules of Kafka's HerderRequestHandler.completeOrForwardRequest:
// a client's request (no `forward` flag) goes on with forward=true, one with forward=true with forward=false, one
// with forward=false is 409; the target's answer is relayed; a target that cannot be reached is Kafka's 500
// "IO Error trying to forward REST request" (RestClient).

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { silentLogger } from '../../src/common/logger.js';
import { RequestTargetError } from '../../src/connect/errors.js';
import type { Herder } from '../../src/connect/runtime/herder.js';
import { RestServer } from '../../src/connect/runtime/rest-server.js';

/** The worker the herder names; set once the target is listening. */
let targetUrl = '';
const herder = {
  deleteConnector: async () => {
    throw new RequestTargetError(targetUrl, 'Only the leader can change configs');
  },
} as unknown as Herder;

const seen: { method: string; url: string }[] = [];
const target = createServer((req, res) => {
  seen.push({ method: req.method!, url: req.url! });
  req.resume();
  req.on('end', () => res.writeHead(204).end());
});
const server = new RestServer(herder, silentLogger);
let base = '';

before(async () => {
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
  const { host, port } = await server.start('127.0.0.1', 0);
  base = `http://${host}:${port}`;
});

after(async () => {
  await server.stop();
  if (target.listening) await new Promise<void>((r) => target.close(() => r()));
});

async function del(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { method: 'DELETE' });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text) };
}

test("a request is forwarded with Kafka's forward flag: none -> true -> false -> 409", async () => {
  assert.deepEqual(await del('/connectors/c'), { status: 204, body: null });
  assert.deepEqual(seen.at(-1), { method: 'DELETE', url: '/connectors/c?forward=true' });
  assert.deepEqual(await del('/connectors/c?forward=true'), { status: 204, body: null });
  assert.deepEqual(seen.at(-1), { method: 'DELETE', url: '/connectors/c?forward=false' });
  const count = seen.length;
  assert.deepEqual(await del('/connectors/c?forward=false'), {
    status: 409,
    body: {
      error_code: 409,
      message: 'Cannot complete request because of a conflicting operation (e.g. worker rebalance)',
    },
  });
  assert.equal(seen.length, count, 'nothing sent on');
});

test("a worker that cannot be reached is Kafka's 500 IO Error", async () => {
  await new Promise<void>((r) => target.close(() => r()));
  const down = await del('/connectors/c');
  assert.equal(down.status, 500);
  assert.match((down.body as { message: string }).message, /^IO Error trying to forward REST request: /);
});
