// MirrorCheckpointConnector's config rules, through a worker's validate endpoint, as Kafka's
// MirrorCheckpointConfig.validate has them (KIP-1031): unless the connector is disabled (`enabled=false`), it is
// refused with `emit.checkpoints.enabled=false` ("can't run with emit.checkpoints.enabled set to false") and with
// `emit.offset-syncs.enabled=false` ("can't run without offset syncs"), whatever sync.group.offsets.enabled says.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startStandalone } from '../../../src/connect/runtime/standalone.js';
import { startBroker } from '../../helpers/broker-process.js';
import { rest } from '../../helpers/connect-worker.js';

interface Validation {
  error_count: number;
  configs: { value: { name: string; errors: string[] } }[];
}

test('MirrorCheckpointConnector validation refuses what Kafka refuses', async (t) => {
  const broker = await startBroker();
  const dir = mkdtempSync(join(tmpdir(), 'brook-cp-validate-'));
  // The worker stops before its broker, so no client of it is left retrying a broker that is gone.
  let worker: Awaited<ReturnType<typeof startStandalone>> | undefined;
  t.after(async () => {
    await worker?.stop();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  worker = await startStandalone(
    {
      'bootstrap.servers': broker.bootstrap,
      listeners: 'http://127.0.0.1:0',
      'offset.storage.file.filename': join(dir, 'connect.offsets'),
    },
    () => {},
  );

  const errorsOf = async (extra: Record<string, string>) => {
    const res = await rest(
      worker.restUrl,
      'PUT',
      '/connector-plugins/MirrorCheckpointConnector/config/validate',
      {
        'connector.class': 'org.apache.kafka.connect.mirror.MirrorCheckpointConnector',
        name: 'cp',
        'source.cluster.alias': 'A',
        'target.cluster.alias': 'B',
        'source.cluster.bootstrap.servers': broker.bootstrap,
        'target.cluster.bootstrap.servers': broker.bootstrap,
        ...extra,
      },
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const body = res.body as Validation;
    const errors = body.configs.flatMap((c) => c.value.errors.map((e) => `${c.value.name}: ${e}`));
    assert.equal(body.error_count, errors.length, JSON.stringify(body));
    return errors.sort();
  };

  assert.deepEqual(await errorsOf({}), []);
  assert.deepEqual(await errorsOf({ 'emit.checkpoints.enabled': 'false' }), [
    "emit.checkpoints.enabled: MirrorCheckpointConnector can't run with emit.checkpoints.enabled set to false",
  ]);
  assert.deepEqual(
    await errorsOf({ 'emit.offset-syncs.enabled': 'false', 'emit.checkpoints.enabled': 'false' }),
    [
      "emit.checkpoints.enabled: MirrorCheckpointConnector can't run with emit.checkpoints.enabled set to false",
      "emit.offset-syncs.enabled: MirrorCheckpointConnector can't run without offset syncs",
    ],
  );
  assert.deepEqual(await errorsOf({ 'emit.offset-syncs.enabled': 'false' }), [
    "emit.offset-syncs.enabled: MirrorCheckpointConnector can't run without offset syncs",
  ]);
  // A disabled connector (a pair MirrorMaker runs only for heartbeats) is not checked.
  assert.deepEqual(
    await errorsOf({
      enabled: 'false',
      'emit.offset-syncs.enabled': 'false',
      'emit.checkpoints.enabled': 'false',
    }),
    [],
  );
});
