// A log found on disk at start is opened with its topic's config overrides, read from the store before the logs are
// loaded, as Kafka's LogManager.startup reads every topic's (fetchTopicConfigOverrides): it must not run on the
// broker's defaults until the controller's first request naming the topic. Here broker 1 restarts in a cluster while
// every request of the controller (broker 0) to it is held, and its retention check runs every millisecond meanwhile.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestInterceptor } from '../../src/broker/request-interceptor.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { controllerOf, partitionView, readWhenLeading, waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const TOPIC = 'kept-forever';
const CONTROLLER_REQUESTS: readonly number[] = [
  ApiKey.LEADER_AND_ISR,
  ApiKey.STOP_REPLICA,
  ApiKey.UPDATE_METADATA,
];

describe('topic configs of the logs loaded at start', () => {
  let zk: TestZooKeeper | undefined;
  const brokers: InProcessBroker[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'brook-test-'));
  after(async () => {
    for (const b of brokers.reverse()) await b.stop().catch(() => {});
    await zk?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('retention.ms=-1 holds before the controller has sent anything to the restarted broker', async () => {
    zk = await startTestZooKeeper();
    const overrides = (id: number) => ({
      'broker.id': id,
      'zookeeper.connect': zk!.connect,
      'controlled.shutdown.retry.backoff.ms': 200,
      'log.retention.check.interval.ms': 1,
    });
    const controller = await startInProcessBroker(overrides(0));
    brokers.push(controller);
    await waitFor('broker 0 to run the controller', async () =>
      (await controllerOf(controller)) === 0 ? true : undefined,
    );
    let host = await startInProcessBroker(overrides(1), { dataDir });
    brokers.push(host);
    const admin = await WireClient.connect(controller.host, controller.port);
    try {
      await createTopic(admin, TOPIC, {
        assignments: { 0: [1] },
        configs: { 'retention.ms': '-1', 'segment.bytes': '1024' },
      });
    } finally {
      admin.close();
    }
    await waitFor('broker 1 to lead the topic', async () =>
      (await partitionView(host, TOPIC))?.leaderId === 1 ? true : undefined,
    );
    const client = await WireClient.connect(host.host, host.port);
    const old = Date.now() - 30 * 86_400_000;
    for (let i = 0; i < 8; i++) {
      const record = { key: `k${i}`, value: 'x'.repeat(300), timestamp: old };
      const r = await produceBatch(client, TOPIC, buildBatch([record]));
      assert.equal(r.errorCode, ErrorCode.NONE);
    }
    client.close();
    await host.stop();
    brokers.pop();

    // Every request of the controller waits until `release`: the log has only what the broker read at start.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let seen = 0;
    const hold: RequestInterceptor = (request) => {
      if (!CONTROLLER_REQUESTS.includes(request.apiKey)) return undefined;
      seen++;
      return held.then(() => request.handle());
    };
    host = await startInProcessBroker(overrides(1), { dataDir, interceptor: hold });
    brokers.push(host);
    await waitFor('a controller request to reach broker 1', async () => (seen > 0 ? true : undefined));
    // The log scheduler ticks every second and retention is due at every tick.
    await sleep(2500);
    release();
    await waitFor('broker 1 to lead the topic again', async () =>
      (await partitionView(host, TOPIC))?.leaderId === 1 ? true : undefined,
    );
    // Its metadata may name it leader (UpdateMetadata) before it has applied the LeaderAndIsr: read again then.
    const offsets = (await readWhenLeading(host, TOPIC)).map((r) => r.offset);
    assert.deepEqual(offsets, [0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
