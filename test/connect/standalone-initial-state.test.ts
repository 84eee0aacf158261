// `brook connect-standalone` creates a connector from a file shaped as the body of POST /connectors in the
// file's `initial_state` (KIP-980), as Kafka's ConnectStandalone passes CreateConnectorRequest.initialTargetState
// to the herder: PAUSED reports PAUSED with no tasks (as Kafka's testCreateConnectorWithPausedInitialState: a
// connector that is not STARTED generates no task configs) and moves no line until resumed; STOPPED has no tasks.

import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Consumer } from '../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { rest, startConnectWorker } from '../helpers/connect-worker.js';

let broker: BrokerProcess;
let dir: string;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-initial-'));
});

after(async () => {
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** How many records `topic` holds (partition 0), read from the start for up to `waitMs`. */
async function recordCount(topic: string, waitMs: number): Promise<number> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap });
  try {
    consumer.assign([{ topic, partition: 0 }]);
    await consumer.seekToBeginning();
    let n = 0;
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) n += (await consumer.poll(200)).length;
    return n;
  } finally {
    await consumer.close();
  }
}

function sourceFile(name: string, topic: string, file: string, initialState: string): string {
  return JSON.stringify({
    name,
    config: { 'connector.class': 'FileStreamSource', 'tasks.max': '1', file, topic },
    initial_state: initialState,
  });
}

test('a connector file with initial_state PAUSED or STOPPED creates the connector in that state', async () => {
  const pausedInput = join(dir, 'paused.txt');
  const stoppedInput = join(dir, 'stopped.txt');
  writeFileSync(pausedInput, 'a\nb\nc\n');
  writeFileSync(stoppedInput, 'x\n');
  const w = await startConnectWorker(
    dir,
    {
      'bootstrap.servers': broker.bootstrap,
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'offset.storage.file.filename': join(dir, 'connect.offsets'),
    },
    [
      sourceFile('paused-source', 'paused-topic', pausedInput, 'PAUSED'),
      sourceFile('stopped-source', 'stopped-topic', stoppedInput, 'stopped'),
    ],
  );
  try {
    const paused = await rest(w.url, 'GET', '/connectors/paused-source/status');
    assert.equal(paused.status, 200);
    const pausedStatus = paused.body as {
      connector: { state: string };
      tasks: { id: number; state: string }[];
    };
    assert.equal(pausedStatus.connector.state, 'PAUSED', JSON.stringify(paused.body));
    assert.deepEqual(pausedStatus.tasks, []);
    assert.deepEqual((await rest(w.url, 'GET', '/connectors/paused-source/tasks')).body, []);
    const stopped = await rest(w.url, 'GET', '/connectors/stopped-source/status');
    const stoppedStatus = stopped.body as { connector: { state: string }; tasks: unknown[] };
    assert.equal(stoppedStatus.connector.state, 'STOPPED', JSON.stringify(stopped.body));
    assert.deepEqual(stoppedStatus.tasks, []);
    assert.deepEqual((await rest(w.url, 'GET', '/connectors/stopped-source/tasks')).body, []);

    // The paused connector moves nothing while paused, then everything once resumed (its task is made then).
    appendFileSync(pausedInput, 'd\n');
    await sleep(1500);
    assert.equal(await recordCount('paused-topic', 1000), 0, 'a paused connector produced');
    assert.equal((await rest(w.url, 'PUT', '/connectors/paused-source/resume')).status, 202);
    let produced = 0;
    const deadline = Date.now() + 20_000;
    while (produced < 4 && Date.now() < deadline) produced = await recordCount('paused-topic', 500);
    assert.equal(produced, 4, 'the resumed task moved every line');
  } finally {
    await w.stop();
  }
});
