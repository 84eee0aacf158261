// Admin.close({ timeoutMs }) as Kafka's Admin.close(Duration): calls made once close began fail with a timeout
// ("not accepting new calls"); the calls in progress may finish within the timeout (without one, close waits for
// them all); those still running when it ends fail with a timeout (close(0): at once); a negative timeout is refused.
// Against an in-process broker that answers ListGroups late.

import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { RequestTimeoutError } from '../../src/client/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

let broker: InProcessBroker;
/** How long the broker holds each ListGroups request before answering it. */
let listGroupsDelayMs = 0;

before(async () => {
  broker = await startInProcessBroker(
    {},
    {
      interceptor: (request) => {
        if (request.apiKey !== ApiKey.LIST_GROUPS) return undefined;
        return sleep(listGroupsDelayMs).then(() => request.handle());
      },
    },
  );
});

after(async () => {
  await broker?.stop();
});

/** An admin client whose metadata is already fetched, so that a listGroups() call goes straight to ListGroups. */
async function connectedAdmin(): Promise<Admin> {
  const admin = new Admin({ bootstrapServers: `127.0.0.1:${broker.port}` });
  await admin.listTopics();
  return admin;
}

/** The call's failure, with how long after `startedMs` it came. */
async function failureOf(
  call: Promise<unknown>,
  startedMs: number,
): Promise<{ err: unknown; afterMs: number }> {
  const err = await call.then(
    () => assert.fail('the call succeeded'),
    (e: unknown) => e,
  );
  return { err, afterMs: Date.now() - startedMs };
}

test('close(0) fails the calls in progress with a timeout at once', async () => {
  listGroupsDelayMs = 3_000;
  const admin = await connectedAdmin();
  const call = admin.listGroups();
  await sleep(50);
  const started = Date.now();
  await admin.close({ timeoutMs: 0 });
  const { err, afterMs } = await failureOf(call, started);
  assert.ok(err instanceof RequestTimeoutError, `a timeout, got ${String(err)}`);
  assert.ok(afterMs < 1_000, `failed ${afterMs} ms after close(0)`);
});

test('close(timeout) lets a call run until the timeout, then fails it with a timeout', async () => {
  listGroupsDelayMs = 3_000;
  const admin = await connectedAdmin();
  const call = admin.listGroups();
  await sleep(50);
  const started = Date.now();
  const closed = admin.close({ timeoutMs: 400 });
  const { err, afterMs } = await failureOf(call, started);
  await closed;
  assert.ok(err instanceof RequestTimeoutError, `a timeout, got ${String(err)}`);
  assert.ok(afterMs >= 350, `failed ${afterMs} ms after close, before its 400 ms timeout`);
  assert.ok(afterMs < 2_500, `failed ${afterMs} ms after close, not at its 400 ms timeout`);
});

test('close() without a timeout waits for the calls in progress to finish', async () => {
  listGroupsDelayMs = 600;
  const admin = await connectedAdmin();
  const call = admin.listGroups();
  await sleep(50);
  await admin.close();
  assert.ok(Array.isArray(await call), 'the call in progress was answered');
});

test('a call made after close began fails with a timeout', async () => {
  listGroupsDelayMs = 600;
  const admin = await connectedAdmin();
  const inProgress = admin.listGroups();
  await sleep(50);
  const closed = admin.close();
  const { err } = await failureOf(admin.listTopics(), Date.now());
  assert.ok(err instanceof RequestTimeoutError, `a timeout, got ${String(err)}`);
  assert.match((err as Error).message, /not accepting new calls/);
  await closed;
  await inProgress;
  const late = await failureOf(admin.describeCluster(), Date.now());
  assert.ok(late.err instanceof RequestTimeoutError, `after close too, got ${String(late.err)}`);
});

test('a negative or missing-number close timeout is refused', async () => {
  const admin = await connectedAdmin();
  try {
    await assert.rejects(admin.close({ timeoutMs: -1 }), RangeError);
    await assert.rejects(admin.close({ timeoutMs: Number.NaN }), RangeError);
    assert.ok(Array.isArray(await admin.listTopics()), 'a refused close leaves the client open');
  } finally {
    await admin.close();
  }
});

test('close(timeout) during the handshake with a broker that never answers returns within the timeout', async () => {
  // Kafka's close ends a connection still being opened with the rest (the selector closes connecting channels).
  // Before, close() waited for the connection's ApiVersions to time out: request.timeout.ms, 30 s.
  const silent = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    silent.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const admin = new Admin({ bootstrapServers: `127.0.0.1:${(server.address() as net.AddressInfo).port}` });
  try {
    const call = admin.listTopics();
    call.catch(() => {});
    while (silent.size === 0) await sleep(10);
    const started = Date.now();
    await admin.close({ timeoutMs: 200 });
    const elapsedMs = Date.now() - started;
    assert.ok(elapsedMs < 2_000, `close(200) took ${elapsedMs} ms`);
    await assert.rejects(call, RequestTimeoutError);
  } finally {
    for (const socket of silent) socket.destroy();
    await new Promise((r) => server.close(r));
  }
});
