// The cluster-wide dynamic broker configs are in force when the logs are loaded at start, as in Kafka, where
// KafkaServer.startup initializes DynamicBrokerConfig (reading /config/brokers/<default> and /<id>) before it
// creates the LogManager. What loading reads (the index size each reopened active segment is preallocated to,
// max.message.bytes as the largest batch recovery accepts, log.preallocate) must come from them, not from the
// static layers alone. Observed here on the active segment's offset index, preallocated at open to
// log.index.size.max.bytes set as a cluster default.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { BROKER_RESOURCE, CLUSTER_DEFAULT, incrementalAlter } from '../helpers/dynamic-configs.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';

const dataDir = mkdtempSync(join(tmpdir(), 'brook-test-'));
let broker: InProcessBroker | undefined;
after(async () => {
  await broker?.stop().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});

test('a log loaded at start opens its active segment with the cluster-default log.index.size.max.bytes', async () => {
  broker = await startInProcessBroker({}, { dataDir });
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const [code] = await incrementalAlter(client, BROKER_RESOURCE, CLUSTER_DEFAULT, {
      'log.index.size.max.bytes': '4096',
    });
    assert.equal(code, ErrorCode.NONE);
    await createTopic(client, 'indexed');
    const r = await produceBatch(client, 'indexed', buildBatch([{ key: 'k', value: 'v' }]));
    assert.equal(r.errorCode, ErrorCode.NONE);
  } finally {
    client.close();
  }
  await broker.stop();
  broker = undefined;
  broker = await startInProcessBroker({}, { dataDir });
  const index = join(dataDir, 'indexed-0', '00000000000000000000.index');
  assert.equal(statSync(index).size, 4096, 'preallocated to the cluster default, not the static 10 MiB');
});
