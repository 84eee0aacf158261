// Restarts of a real broker process: a clean SIGTERM restart and a SIGKILL restart both keep every
// acknowledged record and every topic, and the broker takes appends again afterwards.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'durable';

async function produceMany(client: WireClient, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const response = await client.call(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [
        {
          name: TOPIC,
          partitionData: [{ index: 0, records: buildBatch([{ key: `k${i}`, value: `v${i}` }]) }],
        },
      ],
    });
    assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    assert.equal(response.responses[0].partitionResponses[0].baseOffset, BigInt(i));
  }
}

async function readAll(client: WireClient): Promise<string[]> {
  return (await readPartition(client, TOPIC, 0)).map((r) => r.value!.toString());
}

async function withClient<T>(broker: BrokerProcess, fn: (c: WireClient) => Promise<T>): Promise<T> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

describe('broker restarts', () => {
  for (const how of ['SIGTERM', 'SIGKILL'] as const) {
    it(`keeps every acknowledged record and the topic across a ${how} restart, then appends again`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'brook-restart-'));
      let broker: BrokerProcess | null = null;
      try {
        broker = await startBroker({ dataDir, overrides: { 'log.segment.bytes': 2048 } });
        await withClient(broker, async (c) => {
          const created = await c.call(ApiKey.CREATE_TOPICS, 5, {
            topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
            timeoutMs: 5000,
            validateOnly: false,
          });
          assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
          await produceMany(c, 0, 60);
        });
        if (how === 'SIGTERM') {
          assert.equal(await broker.stop(), 0, 'clean exit');
          assert.ok(existsSync(join(dataDir, '.kafka_cleanshutdown')), 'clean-shutdown marker written');
        } else {
          await broker.kill();
        }
        broker = await startBroker({ dataDir, overrides: { 'log.segment.bytes': 2048 } });
        const after = await withClient(broker, async (c) => {
          const values = await readAll(c);
          await produceMany(c, 60, 5);
          return values;
        });
        assert.deepEqual(
          after,
          Array.from({ length: 60 }, (_, i) => `v${i}`),
        );
        assert.equal(broker.log().includes('logs were recovered'), how === 'SIGKILL');
      } finally {
        await broker?.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
