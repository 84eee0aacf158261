// The log.cleaner.* broker configs Kafka makes dynamic, changed over the wire with IncrementalAlterConfigs on the
// cluster-default broker resource, reach a running broker's cleaner: log.cleaner.backoff.ms (from 60 s to 100 ms,
// or nothing would be cleaned before the test times out), log.cleaner.io.max.bytes.per.second (the pass cannot
// finish faster than its bytes at that rate) and log.cleaner.threads (within Kafka's half-to-double rule).

import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

describe('dynamic log cleaner configs over the wire', () => {
  let broker: BrokerProcess;
  let client: WireClient;

  before(async () => {
    broker = await startBroker({
      overrides: { 'log.cleaner.threads': 1, 'log.cleaner.backoff.ms': 60_000 },
    });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('threads, backoff and the I/O throttle change on a running broker', async () => {
    const created = await client.call(ApiKey.CREATE_TOPICS, 5, {
      topics: [
        {
          name: 'table',
          numPartitions: 1,
          replicationFactor: 1,
          assignments: [],
          configs: Object.entries({
            'cleanup.policy': 'compact',
            'segment.bytes': '8192',
            'min.cleanable.dirty.ratio': '0.01',
          }).map(([name, value]) => ({ name, value })),
        },
      ],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE, created.topics[0].errorMessage);
    const produce = async (key: string, value: string) => {
      const response = await client.call(ApiKey.PRODUCE, 9, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 5000,
        topicData: [{ name: 'table', partitionData: [{ index: 0, records: buildBatch([{ key, value }]) }] }],
      });
      assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    };
    const keys = 20;
    const rounds = 12;
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < keys; k++) await produce(`key-${k}`, `round-${round}-`.padEnd(400, 'x'));
    }
    // Unique keys after the data, so that all of it leaves the active segment (which is never cleaned).
    for (let i = 0; i < 20; i++) await produce(`filler-${i}`, 'filler'.padEnd(400, 'y'));
    const logDir = join(broker.dataDir, 'table-0');
    let logBytes = 0;
    for (const name of readdirSync(logDir).filter((n) => n.endsWith('.log')))
      logBytes += statSync(join(logDir, name)).size;
    const keyed = async () =>
      (await readPartition(client, 'table', 0)).filter((r) => r.key?.toString().startsWith('key-')).length;
    // The first pass is due 60 s after the broker started: nothing is cleaned yet.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await keyed(), keys * rounds, 'no cleaning before log.cleaner.backoff.ms');
    const setThreads = async (value: string) =>
      (
        await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
          resources: [
            {
              resourceType: 4,
              resourceName: '',
              configs: [{ name: 'log.cleaner.threads', configOperation: 0, value }],
            },
          ],
          validateOnly: false,
        })
      ).responses[0];
    // Kafka's rule for a running cleaner: at least 1, at most double, at least half the current count; refused
    // INVALID_REQUEST, as Kafka 3.9 refuses every broker reconfiguration it validates.
    for (const refused of ['0', '3']) {
      const response = await setThreads(refused);
      assert.equal(response.errorCode, ErrorCode.INVALID_REQUEST, `threads ${refused}`);
      assert.match(response.errorMessage, /Log cleaner threads/);
    }

    const bytesPerSecond = 50_000;
    const started = Date.now();
    const altered = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: 4,
          resourceName: '',
          configs: [
            { name: 'log.cleaner.threads', configOperation: 0, value: '2' },
            { name: 'log.cleaner.backoff.ms', configOperation: 0, value: '100' },
            {
              name: 'log.cleaner.io.max.bytes.per.second',
              configOperation: 0,
              value: String(bytesPerSecond),
            },
          ],
        },
      ],
      validateOnly: false,
    });
    assert.equal(altered.responses[0].errorCode, ErrorCode.NONE, altered.responses[0].errorMessage);
    const deadline = started + 45_000;
    let left = await keyed();
    while (left !== keys && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      left = await keyed();
    }
    const seconds = (Date.now() - started) / 1000;
    assert.equal(left, keys, 'one record per key once the cleaner runs');
    // The pass reads the dirty data twice (offset map, then cleaning); even once, at the throttled rate, takes
    // this long. Unthrottled it takes milliseconds.
    const leastSeconds = (0.8 * logBytes) / bytesPerSecond;
    assert.ok(seconds >= leastSeconds, `cleaned in ${seconds} s, ${logBytes} B at ${bytesPerSecond} B/s`);
  });
});
