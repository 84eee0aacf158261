// What DynamicConfig tries again, and what it leaves for the next change, with a real ZooKeeper behind a broker:
// - the client quotas read in full at start, denied (NOAUTH) and then allowed, apply without a restart, as Kafka's
//   ZkConfigManager.startup reads them through a client that retries until it gets an answer;
// - one client quota entity whose document is refused (a value that is not a string) leaves the others applied;
// - a quota value Kafka cannot read as a number ends that entity's change there, as its QuotaConfigHandler's
//   toLong / toDouble throw: that quota and those after it keep their value; an IP rate that is no int is no rate;
// - a topic config node with a value that is not a string changes nothing (Kafka's ConfigEntityZNode.decode throws
//   on `to[String]`, the notification is logged and dropped), and the next change of the topic applies;
// - so does a dynamic broker config read before the logs load: there the start fails, as Kafka's does;
// - a cluster default changed between its read before the logs load and the start of watching is applied (why the
//   start reads the broker layers twice, as Kafka does);
// - while only an entity's read is pending, the retries read that entity and do not list /config/changes again.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as zk from 'node-zookeeper-client';
import { CreateMode } from 'node-zookeeper-client';
import { RenewableSession } from '../../src/broker/cluster/renewable-session.js';
import {
  brokerConfigPath,
  CONFIG_CHANGES_PATH,
  CONFIG_PATH,
  configChangeCreatePath,
  DEFAULT_BROKER_ENTITY,
  encodeConfigChange,
  encodeEntityConfig,
  topicConfigPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, fetchBody, produceBatch, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import {
  ACL_ADMIN_ONLY,
  ACL_OPEN,
  connectedZooKeeperTool,
  zooKeeperCall,
} from '../helpers/zookeeper-tool.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

/** The throttle_time_ms of one Produce v9 of about 2 KB by client id `clientId`. */
async function produceThrottleMs(broker: InProcessBroker, clientId: string, topic: string): Promise<number> {
  const client = await WireClient.connect(broker.host, broker.port, clientId);
  try {
    const response = await client.call(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [
        {
          name: topic,
          partitionData: [{ index: 0, records: buildBatch([{ value: 'x'.repeat(2000) }]) }],
        },
      ],
    });
    assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    return response.throttleTimeMs as number;
  } finally {
    client.close();
  }
}

describe('dynamic config retries', () => {
  let zooKeeper: TestZooKeeper;
  let tool: zk.Client | undefined;

  before(async () => {
    zooKeeper = await startTestZooKeeper();
    tool = await connectedZooKeeperTool(zooKeeper.connect);
  });
  after(async () => {
    tool?.close();
    await zooKeeper?.stop();
  });

  const notify = (entityPath: string) =>
    zooKeeperCall((done) =>
      tool!.create(
        configChangeCreatePath(),
        Buffer.from(encodeConfigChange({ entityPath })),
        CreateMode.PERSISTENT_SEQUENTIAL,
        done,
      ),
    );

  /** A broker on the test's ZooKeeper with short quota windows, and a topic of one partition to produce to. */
  const startQuotaBroker = async (topic: string): Promise<InProcessBroker> => {
    const broker = await startInProcessBroker({
      'zookeeper.connect': zooKeeper.connect,
      'quota.window.num': 2,
    });
    try {
      const client = await WireClient.connect(broker.host, broker.port);
      try {
        await createTopic(client, topic, { numPartitions: 1, replicationFactor: 1 });
      } finally {
        client.close();
      }
    } catch (err) {
      await broker.stop();
      throw err;
    }
    return broker;
  };

  it('client quotas whose read at start was denied apply once readable, without a restart', async () => {
    const clients = `${CONFIG_PATH}/clients`;
    const data = Buffer.from(encodeEntityConfig({ producer_byte_rate: '100' }));
    await zooKeeperCall((done) => tool!.mkdirp(`${clients}/slow`, data, done));
    await zooKeeperCall((done) => tool!.setACL(clients, ACL_ADMIN_ONLY, -1, done));
    let broker: InProcessBroker | undefined;
    try {
      broker = await startQuotaBroker('quota-reload');
      // Unread, the quota does not apply: the broker serves without it.
      assert.equal(await produceThrottleMs(broker, 'slow', 'quota-reload'), 0);
      await zooKeeperCall((done) => tool!.setACL(clients, ACL_OPEN, -1, done));
      const deadline = Date.now() + 20_000;
      while ((await produceThrottleMs(broker, 'slow', 'quota-reload')) === 0) {
        assert.ok(Date.now() < deadline, 'the quota was not applied after /config/clients read again');
        await sleep(100);
      }
    } finally {
      await zooKeeperCall((done) => tool!.setACL(clients, ACL_OPEN, -1, done)).catch(() => {});
      await broker?.stop();
    }
  });

  it('a client quota document with a value that is not a string leaves the other entities applied at start', async () => {
    // Kafka applies each entity on its own (ConfigHandler.processConfigChanges per entity); before, the one refused
    // document failed the whole reload, retried every 10 s at most and never applied, so no quota held.
    const clients = `${CONFIG_PATH}/clients`;
    const good = Buffer.from(encodeEntityConfig({ producer_byte_rate: '100' }));
    const bad = Buffer.from('{"version":1,"config":{"producer_byte_rate":100}}');
    await zooKeeperCall((done) => tool!.mkdirp(`${clients}/held`, good, done));
    await zooKeeperCall((done) => tool!.mkdirp(`${clients}/refused`, bad, done));
    let broker: InProcessBroker | undefined;
    try {
      broker = await startQuotaBroker('quota-refused');
      await sleep(500); // a retry of the reload, if one were pending, comes after 100 ms
      assert.ok((await produceThrottleMs(broker, 'held', 'quota-refused')) > 0, 'the good quota holds');
      assert.equal(await produceThrottleMs(broker, 'refused', 'quota-refused'), 0);
    } finally {
      await zooKeeperCall((done) => tool!.remove(`${clients}/refused`, -1, done)).catch(() => {});
      await zooKeeperCall((done) => tool!.remove(`${clients}/held`, -1, done)).catch(() => {});
      await broker?.stop();
    }
  });

  it('a quota value Kafka cannot read ends the change of its entity there: it and the later quotas stay', async () => {
    const entity = (id: string) => `${CONFIG_PATH}/clients/${id}`;
    const write = async (id: string, config: Record<string, string>) => {
      const data = Buffer.from(encodeEntityConfig(config));
      await zooKeeperCall((done) => tool!.mkdirp(entity(id), data, done)).catch(() => {});
      await zooKeeperCall((done) => tool!.setData(entity(id), data, -1, done));
      await notify(`clients/${id}`);
    };
    /** Waits for a marker entity's quota, so that every change notified before it has been handled. */
    let markers = 0;
    const handled = async (broker: InProcessBroker, topic: string) => {
      const marker = `marker-${markers++}`;
      await write(marker, { producer_byte_rate: '100' });
      const deadline = Date.now() + 20_000;
      while ((await produceThrottleMs(broker, marker, topic)) === 0) {
        assert.ok(Date.now() < deadline, `the quota of ${marker} was not applied`);
        await sleep(100);
      }
    };
    const fetchThrottleMs = async (broker: InProcessBroker, clientId: string, topic: string) => {
      const client = await WireClient.connect(broker.host, broker.port, clientId);
      try {
        let throttleMs = 0;
        for (let i = 0; i < 5 && throttleMs === 0; i++) {
          throttleMs = (await client.call(ApiKey.FETCH, 12, fetchBody(topic, 0, 0))).throttleTimeMs as number;
        }
        return throttleMs;
      } finally {
        client.close();
      }
    };
    const ids = ['parse-long', 'parse-later', 'marker-0', 'marker-1', 'marker-2'];
    let broker: InProcessBroker | undefined;
    try {
      broker = await startQuotaBroker('quota-parse');
      const setup = await WireClient.connect(broker.host, broker.port);
      await produceBatch(setup, 'quota-parse', buildBatch([{ value: 'x'.repeat(2000) }]));
      setup.close();
      await write('parse-long', { producer_byte_rate: '100' });
      await write('parse-later', { consumer_byte_rate: '100' });
      await handled(broker, 'quota-parse');
      assert.ok((await produceThrottleMs(broker, 'parse-long', 'quota-parse')) > 0, 'producer_byte_rate 100');
      assert.ok((await fetchThrottleMs(broker, 'parse-later', 'quota-parse')) > 0, 'consumer_byte_rate 100');
      // Long.parseLong refuses an exponent: the quota stays 100 (before: read as 1e9, and no throttle).
      await write('parse-long', { producer_byte_rate: '1e9' });
      // A producer_byte_rate Kafka cannot read stops the change before consumer_byte_rate, whose absence would
      // remove it (before: the bad key alone was skipped, and the consumer quota removed).
      await write('parse-later', { producer_byte_rate: 'lots' });
      await handled(broker, 'quota-parse');
      await sleep(2_100); // the quota windows (2 x 1 s) forget the traffic above
      assert.ok(
        (await produceThrottleMs(broker, 'parse-long', 'quota-parse')) > 0,
        'producer_byte_rate still 100',
      );
      assert.ok(
        (await fetchThrottleMs(broker, 'parse-later', 'quota-parse')) > 0,
        'consumer_byte_rate still 100',
      );
    } finally {
      for (const id of ids) await zooKeeperCall((done) => tool!.remove(entity(id), -1, done)).catch(() => {});
      await broker?.stop();
    }
  });

  it('an IP connection_creation_rate Kafka cannot read as an int (toInt) is no rate', async () => {
    const ipPath = `${CONFIG_PATH}/ips/127.0.0.1`;
    const markerPath = `${CONFIG_PATH}/clients/ip-marker`;
    let broker: InProcessBroker | undefined;
    try {
      broker = await startQuotaBroker('quota-ip');
      // Integer.parseInt refuses "1.0" (before: read as 1 connection a second, and new connections were held).
      const rate = Buffer.from(encodeEntityConfig({ connection_creation_rate: '1.0' }));
      await zooKeeperCall((done) => tool!.mkdirp(ipPath, rate, done));
      await notify('ips/127.0.0.1');
      await zooKeeperCall((done) =>
        tool!.mkdirp(markerPath, Buffer.from(encodeEntityConfig({ producer_byte_rate: '100' })), done),
      );
      await notify('clients/ip-marker');
      const deadline = Date.now() + 20_000;
      while ((await produceThrottleMs(broker, 'ip-marker', 'quota-ip')) === 0) {
        assert.ok(Date.now() < deadline, 'the marker quota was not applied');
        await sleep(100);
      }
      for (let i = 0; i < 4; i++) {
        const client = await WireClient.connect(broker.host, broker.port);
        try {
          const answer = await client.call(ApiKey.API_VERSIONS, 3, {
            clientSoftwareName: 'test',
            clientSoftwareVersion: '1',
          });
          assert.equal(answer.errorCode, ErrorCode.NONE, `connection ${i + 1} served`);
        } finally {
          client.close();
        }
      }
    } finally {
      for (const path of [ipPath, markerPath])
        await zooKeeperCall((done) => tool!.remove(path, -1, done)).catch(() => {});
      await broker?.stop();
    }
  });

  it('a topic config with a value that is not a string changes nothing; the next change applies', async () => {
    const broker = await startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect });
    try {
      const topic = 'not-a-string';
      const client = await WireClient.connect(broker.host, broker.port);
      try {
        await createTopic(client, topic, { configs: { 'retention.ms': '86400000' } });
      } finally {
        client.close();
      }
      assert.equal(await describedValue(broker, topic, 'retention.ms'), '86400000');

      const path = topicConfigPath(topic);
      const bad = Buffer.from('{"version":1,"config":{"retention.ms":5,"segment.ms":"3600000"}}');
      await zooKeeperCall((done) => tool!.setData(path, bad, -1, done));
      await notify(`topics/${topic}`);
      await sleep(1000); // the notification is read and dropped
      assert.equal(await describedValue(broker, topic, 'retention.ms'), '86400000');
      assert.equal(await describedValue(broker, topic, 'segment.ms'), '604800000');

      const good = Buffer.from(encodeEntityConfig({ 'retention.ms': '3600000' }));
      await zooKeeperCall((done) => tool!.setData(path, good, -1, done));
      await notify(`topics/${topic}`);
      const deadline = Date.now() + 10_000;
      while ((await describedValue(broker, topic, 'retention.ms')) !== '3600000') {
        assert.ok(Date.now() < deadline, 'the next change was not applied');
        await sleep(50);
      }
    } finally {
      await broker.stop();
    }
  });

  it('a dynamic broker config with a value that is not a string fails the start, as in Kafka', async () => {
    // Kafka: DynamicBrokerConfig.initialize reads the layers with getEntityConfigs before the logs, and its decode throws.
    const path = brokerConfigPath(DEFAULT_BROKER_ENTITY);
    const bad = Buffer.from('{"version":1,"config":{"log.retention.ms":-1}}');
    await zooKeeperCall((done) => tool!.mkdirp(path, bad, done));
    try {
      await assert.rejects(
        startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect }).then((b) => b.stop()),
        /log\.retention\.ms is not a string/,
      );
    } finally {
      await zooKeeperCall((done) => tool!.setData(path, Buffer.from(encodeEntityConfig({})), -1, done));
    }
  });

  it('a cluster default changed after its read before the logs load is in effect once started', async () => {
    // Why start() reads the broker layers again after loadBeforeLogs (Kafka too reads them twice: in
    // DynamicBrokerConfig.initialize, and in ZkConfigManager.startup's fetchAllEntityConfigs): watching starts by
    // taking the notifications present as history, so a change made between the two would otherwise be lost.
    const path = brokerConfigPath(DEFAULT_BROKER_ENTITY);
    await zooKeeperCall((done) =>
      tool!.mkdirp(path, Buffer.from(encodeEntityConfig({ 'log.roll.ms': '3600000' })), done),
    );
    await zooKeeperCall((done) =>
      tool!.setData(path, Buffer.from(encodeEntityConfig({ 'log.roll.ms': '3600000' })), -1, done),
    );
    const { get } = RenewableSession.prototype;
    let changed = false;
    RenewableSession.prototype.get = async function (this: RenewableSession, p, w) {
      const result = await get.call(this, p, w);
      if (p === path && !changed) {
        changed = true;
        const data = Buffer.from(encodeEntityConfig({ 'log.roll.ms': '7200000' }));
        await zooKeeperCall((done) => tool!.setData(path, data, -1, done));
        await notify(`brokers/${DEFAULT_BROKER_ENTITY}`);
      }
      return result;
    };
    let broker: InProcessBroker | undefined;
    try {
      broker = await startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect });
      RenewableSession.prototype.get = get;
      assert.ok(changed);
      const client = await WireClient.connect(broker.host, broker.port);
      try {
        await createTopic(client, 'rolled', { numPartitions: 1, replicationFactor: 1 });
      } finally {
        client.close();
      }
      assert.equal(await describedValue(broker, 'rolled', 'segment.ms'), '7200000');
    } finally {
      RenewableSession.prototype.get = get;
      await zooKeeperCall((done) => tool!.setData(path, Buffer.from(encodeEntityConfig({})), -1, done));
      await broker?.stop();
    }
  });

  it('retrying an entity read does not list the change notifications again', async () => {
    const path = brokerConfigPath(DEFAULT_BROKER_ENTITY);
    await zooKeeperCall((done) =>
      tool!.mkdirp(path, Buffer.from(encodeEntityConfig({ 'log.roll.ms': '3600000' })), done),
    );
    const broker = await startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect });
    // Counts the broker's store calls; the broker's ZooKeeper store is a RenewableSession.
    const counts = { listings: 0, entityReads: 0 };
    const { children, get } = RenewableSession.prototype;
    RenewableSession.prototype.children = function (this: RenewableSession, p, w) {
      if (p === CONFIG_CHANGES_PATH) counts.listings++;
      return children.call(this, p, w);
    };
    RenewableSession.prototype.get = function (this: RenewableSession, p, w) {
      if (p === path) counts.entityReads++;
      return get.call(this, p, w);
    };
    try {
      await zooKeeperCall((done) => tool!.setACL(path, ACL_ADMIN_ONLY, -1, done));
      await notify(`brokers/${DEFAULT_BROKER_ENTITY}`);
      await sleep(400); // the notification is read and the default's read fails
      counts.listings = 0;
      counts.entityReads = 0;
      await sleep(1600); // retries after 200, 400 and 800 ms
      assert.ok(counts.entityReads >= 2, `the default was read again ${counts.entityReads} times`);
      assert.equal(counts.listings, 0, 'no notification came: /config/changes is not listed again');
    } finally {
      RenewableSession.prototype.children = children;
      RenewableSession.prototype.get = get;
      await zooKeeperCall((done) => tool!.setACL(path, ACL_OPEN, -1, done)).catch(() => {});
      await broker.stop();
    }
  });
});
