// A ZooKeeper outage longer than the store's request timeout (2 x zookeeper.session.timeout.ms) while the broker
// reads, at start, the overrides of the topics with logs on disk or the dynamic broker configs: the start waits
// for ZooKeeper and goes on with what it reads then, as Kafka's KafkaZkClient.retryRequestsUntilConnected waits
// without a bound. Before, the read answered CONNECTIONLOSS and the start failed. The server is killed (kill -9)
// when the broker sends the read, and started again on the same port and data 3 s later. A stop while the start
// waits ends the wait. The same outage while the broker creates Kafka's persistent paths, or registers, is waited
// for as well (Kafka's createRecursive and registerBroker retry until connected), and the broker registers.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type * as zk from 'node-zookeeper-client';
import { Broker } from '../../src/broker/broker.js';
import { RenewableSession } from '../../src/broker/cluster/renewable-session.js';
import { loadBrokerConfig } from '../../src/broker/config/load-broker-config.js';
import { systemClock } from '../../src/common/clock.js';
import type { BrokerId } from '../../src/common/ids.js';
import { silentLogger } from '../../src/common/logger.js';
import type { CreateMode } from '../../src/controller/store/store.js';
import {
  brokerConfigPath,
  brokerPath,
  DEFAULT_BROKER_ENTITY,
  encodeEntityConfig,
  PERSISTENT_PATHS,
  topicConfigPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { connectedZooKeeperTool, zooKeeperCall } from '../helpers/zookeeper-tool.js';

const SESSION_TIMEOUT_MS = 1000;
/** Longer than the store's request timeout (2 x the session timeout), after which a read answers CONNECTIONLOSS. */
const OUTAGE_MS = 3000;

/** A topic's effective value of `key` as DescribeConfigs answers it. */
async function describedValue(broker: InProcessBroker, topic: string, key: string): Promise<string | null> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const response = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: 2, resourceName: topic, configurationKeys: [key] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.equal(response.results[0].errorCode, ErrorCode.NONE);
    return (response.results[0].configs as { value: string | null }[])[0]?.value ?? null;
  } finally {
    client.close();
  }
}

describe('a ZooKeeper outage during the start reads', () => {
  let zooKeeper: TestZooKeeper;
  let tool: zk.Client | undefined;
  const { get, create } = RenewableSession.prototype;

  before(async () => {
    zooKeeper = await startTestZooKeeper();
    tool = await connectedZooKeeperTool(zooKeeper.connect);
  });
  after(async () => {
    RenewableSession.prototype.get = get;
    RenewableSession.prototype.create = create;
    tool?.close();
    await zooKeeper?.stop();
  });

  /** Kills ZooKeeper when the broker first reads `path`, and starts it again OUTAGE_MS later. */
  function outageAtRead(path: string): { restarted: Promise<void> } {
    let restarted: Promise<void> = Promise.resolve();
    let done = false;
    RenewableSession.prototype.get = async function (this: RenewableSession, p, w) {
      if (p === path && !done) {
        done = true;
        await zooKeeper.kill();
        restarted = new Promise((r) => setTimeout(r, OUTAGE_MS)).then(() => zooKeeper.restart());
      }
      return get.call(this, p, w);
    };
    return {
      get restarted() {
        return restarted;
      },
    };
  }

  const settings = {
    'zookeeper.session.timeout.ms': SESSION_TIMEOUT_MS,
    'zookeeper.connection.timeout.ms': SESSION_TIMEOUT_MS,
  };

  it('waits while it reads the dynamic broker configs, and starts with them', async () => {
    await zooKeeperCall((done) =>
      tool!.mkdirp(
        brokerConfigPath(DEFAULT_BROKER_ENTITY),
        Buffer.from(encodeEntityConfig({ 'log.roll.ms': '3600000' })),
        done,
      ),
    );
    const outage = outageAtRead(brokerConfigPath(0 as never));
    let broker: InProcessBroker | undefined;
    try {
      broker = await startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect, ...settings });
      const client = await WireClient.connect(broker.host, broker.port);
      try {
        await createTopic(client, 'after-outage', { numPartitions: 1, replicationFactor: 1 });
      } finally {
        client.close();
      }
      assert.equal(await describedValue(broker, 'after-outage', 'segment.ms'), '3600000');
    } finally {
      RenewableSession.prototype.get = get;
      await outage.restarted;
      await broker?.stop();
    }
  });

  it('waits while it reads the overrides of the topics on disk, and opens them with those', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'brook-test-'));
    const topic = 'on-disk';
    let broker: InProcessBroker | undefined;
    try {
      broker = await startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect }, { dataDir });
      const client = await WireClient.connect(broker.host, broker.port);
      try {
        await createTopic(client, topic, {
          numPartitions: 1,
          replicationFactor: 1,
          configs: { 'retention.ms': '-1' },
        });
      } finally {
        client.close();
      }
      await broker.stop();
      broker = undefined;

      const outage = outageAtRead(topicConfigPath(topic));
      try {
        broker = await startInProcessBroker(
          { 'zookeeper.connect': zooKeeper.connect, ...settings },
          { dataDir },
        );
      } finally {
        RenewableSession.prototype.get = get;
        await outage.restarted;
      }
      assert.equal(await describedValue(broker, topic, 'retention.ms'), '-1');
    } finally {
      await broker?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
  /** Kills ZooKeeper when the broker first creates `path` (in `mode`), and starts it again `outageMs` later. */
  function outageAtCreate(path: string, mode: CreateMode, outageMs: number): { restarted: Promise<void> } {
    let restarted: Promise<void> = Promise.resolve();
    let done = false;
    RenewableSession.prototype.create = async function (this: RenewableSession, p, data, m) {
      if (p === path && (m ?? 'persistent') === mode && !done) {
        done = true;
        await zooKeeper.kill();
        restarted = new Promise((r) => setTimeout(r, outageMs)).then(() => zooKeeper.restart());
      }
      return create.call(this, p, data, m);
    };
    return {
      get restarted() {
        return restarted;
      },
    };
  }

  /** Starts a broker through an outage, and answers whether it registered: its node, and a topic it can create. */
  async function startsAndRegisters(outage: { restarted: Promise<void> }): Promise<void> {
    let broker: InProcessBroker | undefined;
    try {
      try {
        broker = await startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect, ...settings });
      } finally {
        RenewableSession.prototype.create = create;
        await outage.restarted;
      }
      // A new client: the test's own session may have expired during the outage, and an expired one never answers.
      const fresh = await connectedZooKeeperTool(zooKeeper.connect);
      try {
        const registered = await new Promise<boolean>((resolve, reject) =>
          fresh.exists(brokerPath(0 as BrokerId), (error, stat) => (error ? reject(error) : resolve(!!stat))),
        );
        assert.ok(registered, 'the broker is registered');
      } finally {
        fresh.close();
      }
      const client = await WireClient.connect(broker.host, broker.port);
      try {
        await createTopic(client, `after-create-outage-${Date.now()}`, {
          numPartitions: 1,
          replicationFactor: 1,
        });
      } finally {
        client.close();
      }
    } finally {
      await broker?.stop();
    }
  }

  it('waits while it creates the persistent paths, and registers once ZooKeeper is back', async () => {
    // Kafka: makeSurePersistentPathExists goes through retryRequestsUntilConnected. Before, the create answered
    // CONNECTIONLOSS after the request timeout and the start failed.
    await startsAndRegisters(outageAtCreate(PERSISTENT_PATHS[0]!, 'persistent', OUTAGE_MS));
  });

  it('waits while it registers, past the session and connection timeouts, and registers once ZooKeeper is back', async () => {
    // Kafka: registerBroker's create goes through retryRequestsUntilConnected. Before, the registration gave up after
    // 2 x zookeeper.session.timeout.ms + zookeeper.connection.timeout.ms (3 s here).
    await startsAndRegisters(outageAtCreate(brokerPath(0 as BrokerId), 'ephemeral', 2 * OUTAGE_MS));
  });

  it('a stop while it waits ends the wait: the start fails and the stop completes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'brook-test-'));
    let killed = false;
    RenewableSession.prototype.get = async function (this: RenewableSession, p, w) {
      if (p === brokerConfigPath(0 as never) && !killed) {
        killed = true;
        await zooKeeper.kill(); // and not started again until the broker has stopped
      }
      return get.call(this, p, w);
    };
    const overrides = new Map(
      Object.entries({
        'broker.id': 0,
        listeners: 'PLAINTEXT://127.0.0.1:0',
        'log.dirs': dataDir,
        'zookeeper.connect': zooKeeper.connect,
        ...settings,
      }).map(([k, v]) => [k, String(v)]),
    );
    const loaded = await loadBrokerConfig({ configPath: null, overrides, warn: () => {} });
    const broker = new Broker({ ...loaded, clock: systemClock, logger: silentLogger });
    try {
      const started = broker.start();
      while (!killed) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 3 * SESSION_TIMEOUT_MS)); // past the request timeout: waiting
      const stopAtMs = Date.now();
      const stopped = broker.stop();
      await assert.rejects(started, /CONNECTIONLOSS|SESSIONEXPIRED/);
      await stopped;
      const tookMs = Date.now() - stopAtMs;
      // The read in flight answers within its request timeout, and closing a session with no server takes a
      // while; without the stop ending the wait, the start (and the stop after it) would never end.
      assert.ok(tookMs < 15_000, `the stop took ${tookMs} ms`);
    } finally {
      RenewableSession.prototype.get = get;
      await broker.stop().catch(() => {});
      await zooKeeper.restart();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
