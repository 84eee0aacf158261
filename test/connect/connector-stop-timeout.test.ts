// A connector whose stop() waits on an admin call that never ends does not hold up the worker: Kafka 3.9's
// Worker.awaitStopConnectors waits CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_MS (5 s) for a connector to stop, then logs
// the connector as unresponsive and goes on (the stop runs on in the
// background). MirrorMaker's connectors close their admins with Admin.close() (Utils.closeQuietly), which waits for
// the calls in progress up to default.api.timeout.ms; the worker's bound is what keeps a delete or a shutdown short.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startStandalone } from '../../src/connect/runtime/standalone.js';
import { pluginDirWith, rest } from '../helpers/connect-worker.js';
import { startInProcessBroker } from '../helpers/in-process-broker.js';
import { waitUntil } from '../helpers/wait.js';

test('deleting a connector whose stop hangs on an admin call returns after the 5 s graceful bound', {
  timeout: 60_000,
}, async (t) => {
  const broker = await startInProcessBroker({});
  // A cluster that accepts connections and never answers: the admin's call runs until its own timeout.
  const silent = new Set<net.Socket>();
  const blackhole = net.createServer((socket) => {
    silent.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(join(tmpdir(), 'brook-connector-stop-'));
  const lines: string[] = [];
  const worker = await startStandalone(
    {
      'bootstrap.servers': `127.0.0.1:${broker.port}`,
      listeners: 'http://127.0.0.1:0',
      'offset.storage.file.filename': join(dir, 'connect.offsets'),
      'plugin.path': pluginDirWith(dir, 'hanging-admin-source'),
    },
    (line) => lines.push(line),
  );
  t.after(async () => {
    await worker.stop().catch(() => {});
    for (const s of silent) s.destroy();
    await new Promise((r) => blackhole.close(r));
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const created = await rest(worker.restUrl, 'POST', '/connectors', {
    name: 'hanging',
    config: {
      'connector.class': 'test.HangingAdminSourceConnector',
      'hang.bootstrap.servers': `127.0.0.1:${(blackhole.address() as net.AddressInfo).port}`,
      // Long past the 5 s bound, short enough that the call (in the worker's plugin realm, out of the test's
      // reach) ends soon after the test.
      'hang.api.timeout.ms': '15000',
    },
  });
  assert.equal(created.status, 201);
  await waitUntil(
    () => silent.size > 0,
    10_000,
    () => 'the admin never reached the silent cluster',
  );
  const started = Date.now();
  const deleted = await rest(worker.restUrl, 'DELETE', '/connectors/hanging');
  const elapsedMs = Date.now() - started;
  assert.equal(deleted.status, 204);
  assert.ok(elapsedMs >= 4_000 && elapsedMs < 10_000, `the delete took ${elapsedMs} ms, not the 5 s bound`);
  assert.ok(
    lines.some((l) => l.includes("Connector 'hanging' did not stop within 5000 ms and is unresponsive")),
    `the worker says it gave up waiting:\n${lines.join('\n')}`,
  );
});
