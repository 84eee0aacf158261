// A log found on disk at start is opened with its topic's config, read from the store before the logs are loaded:
// the topic's overrides, as Kafka's LogManager.startup reads every topic's (fetchTopicConfigOverrides), and the
// dynamic broker defaults, which Kafka's KafkaServer reads (DynamicBrokerConfig.initialize) before it creates the
// log manager. It must not run on the static defaults until the controller's first request naming the topic. Here
// broker 1 restarts in a cluster while every request of the controller (broker 0) to it is held, and its retention
// check runs every millisecond meanwhile.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestInterceptor } from '../../src/broker/request-interceptor.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { controllerOf, partitionView, readWhenLeading, waitFor } from '../helpers/cluster.js';
import { BROKER_RESOURCE, CLUSTER_DEFAULT, incrementalAlter } from '../helpers/dynamic-configs.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const CONTROLLER_REQUESTS: readonly number[] = [
  ApiKey.LEADER_AND_ISR,
  ApiKey.STOP_REPLICA,
  ApiKey.UPDATE_METADATA,
];

describe('topic configs of the logs loaded at start', () => {
  let zk: TestZooKeeper;
  let controller: InProcessBroker;
  let host: InProcessBroker | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'brook-test-'));
  const overrides = (id: number) => ({
    'broker.id': id,
    'zookeeper.connect': zk.connect,
    'controlled.shutdown.retry.backoff.ms': 200,
    'log.retention.check.interval.ms': 1,
  });

  before(async () => {
    zk = await startTestZooKeeper();
    controller = await startInProcessBroker(overrides(0));
    await waitFor('broker 0 to run the controller', async () =>
      (await controllerOf(controller)) === 0 ? true : undefined,
    );
    host = await startInProcessBroker(overrides(1), { dataDir });
  });
  after(async () => {
    await host?.stop().catch(() => {});
    await controller?.stop().catch(() => {});
    await zk?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * Creates `topic` on broker 1 alone with `configs`, writes eight 30-day-old records in segments of about three,
   * restarts broker 1 with the controller's requests held for two and a half seconds, and answers the offsets it
   * then serves from 0.
   */
  async function offsetsAfterHeldRestart(topic: string, configs: Record<string, string>): Promise<number[]> {
    const admin = await WireClient.connect(controller.host, controller.port);
    try {
      await createTopic(admin, topic, {
        assignments: { 0: [1] },
        configs: { 'segment.bytes': '1024', ...configs },
      });
    } finally {
      admin.close();
    }
    await waitFor(`broker 1 to lead ${topic}`, async () =>
      (await partitionView(host!, topic))?.leaderId === 1 ? true : undefined,
    );
    const client = await WireClient.connect(host!.host, host!.port);
    try {
      const old = Date.now() - 30 * 86_400_000;
      for (let i = 0; i < 8; i++) {
        const record = { key: `k${i}`, value: 'x'.repeat(300), timestamp: old };
        const r = await produceBatch(client, topic, buildBatch([record]));
        assert.equal(r.errorCode, ErrorCode.NONE);
      }
    } finally {
      client.close();
    }
    await host!.stop();
    host = undefined;

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
    await waitFor('a controller request to reach broker 1', async () => (seen > 0 ? true : undefined));
    // The log scheduler ticks every second and retention is due at every tick.
    await sleep(2500);
    release();
    await waitFor(`broker 1 to lead ${topic} again`, async () =>
      (await partitionView(host!, topic))?.leaderId === 1 ? true : undefined,
    );
    // Its metadata may name it leader (UpdateMetadata) before it has applied the LeaderAndIsr: read again then.
    return (await readWhenLeading(host, topic)).map((r) => r.offset);
  }

  it('retention.ms=-1 holds before the controller has sent anything to the restarted broker', async () => {
    assert.deepEqual(
      await offsetsAfterHeldRestart('kept-forever', { 'retention.ms': '-1' }),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
  });

  it('a cluster-wide dynamic log.retention.ms=-1 holds as well', async () => {
    const admin = await WireClient.connect(controller.host, controller.port);
    try {
      const [code] = await incrementalAlter(admin, BROKER_RESOURCE, CLUSTER_DEFAULT, {
        'log.retention.ms': '-1',
      });
      assert.equal(code, ErrorCode.NONE);
    } finally {
      admin.close();
    }
    assert.deepEqual(await offsetsAfterHeldRestart('kept-by-default', {}), [0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
