// A KafkaBasedLog starts once and never after stop(), checked on a real broker by the client sockets left open: a
// second start() used to replace the log's consumer and producer without closing them (stop() then closed only the
// second pair, and the first kept its connections, which kept MirrorMaker's process from exiting), and a start()
// after stop() opened clients that nothing closed. Both are now refused before any client is opened.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../src/common/logger.js';
import { KafkaBasedLog } from '../../src/connect/runtime/distributed/kafka-based-log.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { socketsLeftOpen } from '../helpers/open-sockets.js';

function newLog(broker: InProcessBroker, topic: string): KafkaBasedLog {
  return new KafkaBasedLog({
    topic,
    bootstrapServers: `127.0.0.1:${broker.port}`,
    clientId: `lifecycle-${topic}`,
    partitions: 1,
    replicationFactor: 1,
    onRecord: () => {},
    log: silentLogger,
  });
}

test('a second start of a log is refused and stop closes every client it opened', {
  timeout: 60_000,
}, async (t) => {
  const broker = await startInProcessBroker({ 'num.partitions': 1 });
  t.after(() => broker.stop());
  const log = newLog(broker, 'twice');
  await log.start();
  await assert.rejects(log.start(), /already started/);
  await log.send('k', Buffer.from('v'));
  await log.readToEnd();
  await log.stop();
  assert.equal(await socketsLeftOpen(broker.port), 0, 'client sockets left open after stop');
});

test('a start after stop is refused without opening a client', { timeout: 60_000 }, async (t) => {
  const broker = await startInProcessBroker({ 'num.partitions': 1 });
  t.after(() => broker.stop());
  let requests = 0;
  broker.interception.set(() => {
    requests++;
    return undefined;
  });
  const log = newLog(broker, 'stopped-first');
  await log.stop();
  await assert.rejects(log.start(), /was stopped/);
  assert.equal(requests, 0, 'the stopped log sent requests');
  assert.equal(await socketsLeftOpen(broker.port), 0, 'client sockets left open');
});
