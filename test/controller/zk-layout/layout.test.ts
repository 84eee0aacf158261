// Round trips against JSON written out by hand in the formats Kafka keeps in ZooKeeper, and refusals of bad
// data as values (never exceptions).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BrokerId, PartitionId } from '../../../src/common/ids.js';
import { InProcessStore } from '../../../src/controller/store/in-process-store.js';
import {
  brokerConfigPath,
  type Decoded,
  decodeBrokerRegistration,
  decodeClusterId,
  decodeConfigChange,
  decodeController,
  decodeControllerEpoch,
  decodeEntityConfig,
  decodeIsrChangeNotification,
  decodeLogDirEvent,
  decodePartitionState,
  decodePreferredReplicaElection,
  decodeProducerIdBlock,
  decodeReassignPartitions,
  decodeTopicAssignment,
  encodeBrokerRegistration,
  encodeClusterId,
  encodeConfigChange,
  encodeController,
  encodeControllerEpoch,
  encodeEntityConfig,
  encodeIsrChangeNotification,
  encodeLogDirEvent,
  encodePartitionState,
  encodePreferredReplicaElection,
  encodeProducerIdBlock,
  encodeReassignPartitions,
  encodeTopicAssignment,
  ensurePersistentPaths,
  encodeControllerEpoch as epochBytes,
  fencedOps,
  LayoutDecodeError,
  PERSISTENT_PATHS,
  partitionStatePath,
  sequenceNumberOf,
  topicConfigPath,
  topicPath,
  wasFenced,
} from '../../../src/controller/zk-layout/index.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const parsed = (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as unknown;

function value<T>(decoded: Decoded<T>): T {
  if (!decoded.ok) assert.fail(`decode failed: ${decoded.error.message}`);
  return decoded.value;
}

function refused<T>(decoded: Decoded<T>, reason: RegExp): void {
  assert.equal(decoded.ok, false, 'bad data must be refused');
  if (!decoded.ok) {
    assert.ok(decoded.error instanceof LayoutDecodeError);
    assert.match(decoded.error.message, reason);
  }
}

describe('zk-layout: broker registration', () => {
  const v5 = `{"features":{"metadata.version":{"min_version":1,"max_version":7}},
    "listener_security_protocol_map":{"CLIENT":"SASL_SSL","REPLICATION":"PLAINTEXT"},
    "endpoints":["CLIENT://broker1.example.com:9093","REPLICATION://broker1.example.com:9094"],
    "rack":"dc1","jmx_port":9999,"host":"broker1.example.com","port":9094,
    "timestamp":"1690000000123","version":5}`;

  it('decodes Kafka version 5 JSON and encodes it back to the same JSON', () => {
    const broker = value(decodeBrokerRegistration(1 as BrokerId, utf8(v5)));
    assert.equal(broker.brokerId, 1);
    assert.deepEqual(broker.endpoints, [
      { listenerName: 'CLIENT', securityProtocol: 'SASL_SSL', host: 'broker1.example.com', port: 9093 },
      { listenerName: 'REPLICATION', securityProtocol: 'PLAINTEXT', host: 'broker1.example.com', port: 9094 },
    ]);
    assert.equal(broker.rack, 'dc1');
    assert.equal(broker.jmxPort, 9999);
    assert.equal(broker.timestampMs, 1690000000123);
    assert.deepEqual(broker.features, { 'metadata.version': { minVersion: 1, maxVersion: 7 } });
    assert.deepEqual(parsed(encodeBrokerRegistration(broker)), JSON.parse(v5));
  });

  it('writes null host and port -1 without a PLAINTEXT listener, no rack when unset, and brackets IPv6', () => {
    const bytes = encodeBrokerRegistration({
      brokerId: 3 as BrokerId,
      endpoints: [{ listenerName: 'SSL', securityProtocol: 'SSL', host: '::1', port: 9093 }],
      rack: null,
      jmxPort: -1,
      timestampMs: 5,
      features: {},
    });
    assert.deepEqual(parsed(bytes), {
      features: {},
      listener_security_protocol_map: { SSL: 'SSL' },
      endpoints: ['SSL://[::1]:9093'],
      jmx_port: -1,
      host: null,
      port: -1,
      timestamp: '5',
      version: 5,
    });
    assert.equal(value(decodeBrokerRegistration(3 as BrokerId, bytes)).endpoints[0]?.host, '::1');
  });

  it('reads older versions: 4 without features, 2 without a listener map, 1 with host and port only', () => {
    const v4 = `{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://:9092"],
      "jmx_port":-1,"host":"","port":9092,"timestamp":"1","version":4}`;
    const b4 = value(decodeBrokerRegistration(0 as BrokerId, utf8(v4)));
    assert.deepEqual(b4.endpoints, [
      { listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '', port: 9092 },
    ]);
    assert.deepEqual(b4.features, {});
    assert.equal(b4.rack, null);
    const v2 =
      '{"version":2,"host":"h","port":9092,"jmx_port":-1,"timestamp":"1","endpoints":["SSL://h:9093"]}';
    assert.equal(
      value(decodeBrokerRegistration(0 as BrokerId, utf8(v2))).endpoints[0]?.securityProtocol,
      'SSL',
    );
    const v1 = '{"version":1,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666"}';
    const b1 = value(decodeBrokerRegistration(0 as BrokerId, utf8(v1)));
    assert.deepEqual(b1.endpoints, [
      { listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: 'localhost', port: 9092 },
    ]);
  });

  it('refuses bad registrations as values', () => {
    const id = 0 as BrokerId;
    refused(decodeBrokerRegistration(id, utf8('{"version":6,"endpoints":[]}')), /version/);
    refused(decodeBrokerRegistration(id, utf8('{"version":5,"endpoints":["nonsense"]}')), /endpoints\[0\]/);
    refused(
      decodeBrokerRegistration(
        id,
        utf8('{"version":5,"endpoints":["X://h:1"],"listener_security_protocol_map":{}}'),
      ),
      /security protocol/,
    );
    refused(decodeBrokerRegistration(id, utf8('{"version":5,"endpoints":["PLAINTEXT://h:70000"]}')), /port/);
    refused(
      decodeBrokerRegistration(id, utf8('{"version":5,"endpoints":["PLAINTEXT://h:1"],"timestamp":12}')),
      /timestamp/,
    );
    refused(decodeBrokerRegistration(id, new Uint8Array([0xff, 0xfe])), /UTF-8/);
  });
});

describe('zk-layout: topics and partitions', () => {
  const topicV3 = `{"version":3,"topic_id":"k8Q4-5wHRrGkqZ6f9xOcyA",
    "partitions":{"0":[1,2,3],"1":[2,3,1],"10":[3,1,2]},
    "adding_replicas":{"0":[3]},"removing_replicas":{"1":[1]}}`;

  it('round-trips a version 3 topic assignment with its topic id and reassignment state', () => {
    const topic = value(decodeTopicAssignment(utf8(topicV3)));
    assert.equal(topic.topicId, 'k8Q4-5wHRrGkqZ6f9xOcyA');
    assert.deepEqual([...topic.partitions.keys()], [0, 1, 10]);
    assert.deepEqual(topic.partitions.get(0 as PartitionId), {
      replicas: [1, 2, 3],
      addingReplicas: [3],
      removingReplicas: [],
    });
    assert.deepEqual(topic.partitions.get(1 as PartitionId)?.removingReplicas, [1]);
    assert.deepEqual(parsed(encodeTopicAssignment(topic)), JSON.parse(topicV3));
  });

  it('reads a version 1 assignment written before topic ids', () => {
    const topic = value(decodeTopicAssignment(utf8('{"version":1,"partitions":{"0":[0,1,3]}}')));
    assert.equal(topic.topicId, null);
    assert.deepEqual(topic.partitions.get(0 as PartitionId), {
      replicas: [0, 1, 3],
      addingReplicas: [],
      removingReplicas: [],
    });
  });

  it('refuses bad assignments as values', () => {
    refused(decodeTopicAssignment(utf8('{"version":3,"partitions":{"x":[1]}}')), /partition number/);
    refused(decodeTopicAssignment(utf8('{"version":3,"partitions":{"0":[1,1]}}')), /twice/);
    refused(decodeTopicAssignment(utf8('{"version":3,"partitions":{"0":[-1]}}')), /outside/);
    refused(decodeTopicAssignment(utf8('{"version":3,"topic_id":"short","partitions":{}}')), /Uuid/);
    refused(decodeTopicAssignment(utf8('{"version":3}')), /partitions is missing/);
    refused(decodeTopicAssignment(utf8('[1,2]')), /not a JSON object/);
    refused(decodeTopicAssignment(utf8('{"version":3,')), /not JSON/);
  });

  it('round-trips partition state as Kafka writes it, with leader_recovery_state only when recovering', () => {
    const clean = '{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":4,"isr":[1,2]}';
    const state = value(decodePartitionState(utf8(clean)));
    assert.deepEqual(state, {
      leader: 1,
      leaderEpoch: 4,
      isr: [1, 2],
      controllerEpoch: 7,
      leaderRecoveryState: 0,
    });
    assert.deepEqual(parsed(encodePartitionState(state)), JSON.parse(clean));
    const recovering =
      '{"controller_epoch":8,"leader":3,"version":1,"leader_epoch":5,"isr":[3],"leader_recovery_state":1}';
    const unclean = value(decodePartitionState(utf8(recovering)));
    assert.equal(unclean.leaderRecoveryState, 1);
    assert.deepEqual(parsed(encodePartitionState(unclean)), JSON.parse(recovering));
    const leaderless = value(
      decodePartitionState(utf8('{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":2,"isr":[]}')),
    );
    assert.equal(leaderless.leader, -1);
  });

  it('refuses bad partition state as values', () => {
    refused(
      decodePartitionState(utf8('{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0}')),
      /isr is missing/,
    );
    refused(
      decodePartitionState(
        utf8('{"controller_epoch":1,"leader":"1","version":1,"leader_epoch":0,"isr":[1]}'),
      ),
      /leader is not an integer/,
    );
    refused(
      decodePartitionState(
        utf8('{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0.5,"isr":[1]}'),
      ),
      /leader_epoch/,
    );
    refused(
      decodePartitionState(
        utf8(
          '{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1],"leader_recovery_state":2}',
        ),
      ),
      /leader_recovery_state/,
    );
  });
});

describe('zk-layout: cluster, controller, configs, notifications', () => {
  it('round-trips the cluster id, whose version Kafka writes as a string', () => {
    const json = '{"version":"1","id":"MkU3OEVBNTcwNTJENDM2Qg"}';
    assert.equal(value(decodeClusterId(utf8(json))), 'MkU3OEVBNTcwNTJENDM2Qg');
    assert.deepEqual(parsed(encodeClusterId('MkU3OEVBNTcwNTJENDM2Qg')), JSON.parse(json));
  });

  it('round-trips the controller registration and reads version 1', () => {
    const v2 = '{"version":2,"brokerid":2,"timestamp":"1690000000000","kraftControllerEpoch":-1}';
    const controller = value(decodeController(utf8(v2)));
    assert.deepEqual(controller, { brokerId: 2, timestampMs: 1690000000000, kraftControllerEpoch: -1 });
    assert.deepEqual(parsed(encodeController(controller)), JSON.parse(v2));
    assert.equal(
      value(decodeController(utf8('{"version":1,"brokerid":0,"timestamp":"1492431322"}'))).brokerId,
      0,
    );
    refused(decodeController(utf8('{"version":2,"timestamp":"1"}')), /brokerid is missing/);
  });

  it('round-trips the controller epoch as decimal text', () => {
    assert.deepEqual(encodeControllerEpoch(12), utf8('12'));
    assert.equal(value(decodeControllerEpoch(utf8('12'))), 12);
    refused(decodeControllerEpoch(utf8('twelve')), /not an integer/);
    refused(decodeControllerEpoch(utf8('-3')), /out of range/);
  });

  it('round-trips entity configs and config change notifications, reading version 1 changes', () => {
    const config = '{"version":1,"config":{"retention.ms":"86400000","cleanup.policy":"compact"}}';
    const entries = value(decodeEntityConfig(utf8(config)));
    assert.deepEqual(entries, { 'retention.ms': '86400000', 'cleanup.policy': 'compact' });
    assert.deepEqual(parsed(encodeEntityConfig(entries)), JSON.parse(config));
    refused(decodeEntityConfig(utf8('{"version":1,"config":{"retention.ms":86400000}}')), /not a string/);
    const change = '{"version":2,"entity_path":"topics/orders"}';
    assert.deepEqual(value(decodeConfigChange(utf8(change))), { entityPath: 'topics/orders' });
    assert.deepEqual(parsed(encodeConfigChange({ entityPath: 'topics/orders' })), JSON.parse(change));
    const v1 = '{"version":1,"entity_type":"brokers","entity_name":"<default>"}';
    assert.deepEqual(value(decodeConfigChange(utf8(v1))), { entityPath: 'brokers/<default>' });
  });

  it("reads entity configs as a Kafka broker's ConfigEntityZNode.decode does: only a value not a string refuses", () => {
    const read = (text: string) => decodeEntityConfig(utf8(text));
    assert.deepEqual(value(read('{"version":2,"config":{"a":"1"}}')), { a: '1' }, 'the version is not read');
    assert.deepEqual(value(read('not json')), {}, 'not JSON: no configs');
    assert.deepEqual(value(read('[1]')), {}, 'not an object: no configs');
    assert.deepEqual(value(read('{"version":1}')), {}, 'no config object: no configs');
    assert.deepEqual(value(read('{"version":1,"config":"x"}')), {}, 'config not an object: no configs');
    assert.deepEqual(value(decodeEntityConfig(new Uint8Array([0xff, 0xfe]))), {}, 'not UTF-8');
    refused(read('{"version":1,"config":{"retention.ms":5}}'), /not a string/);
    refused(read('{"version":1,"config":{"a":null}}'), /not a string/);
  });

  it('round-trips reassignment, preferred election, ISR change and log dir notifications', () => {
    const reassign = '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[4,5,6]}]}';
    const moves = value(decodeReassignPartitions(utf8(reassign)));
    assert.deepEqual(moves, [{ topic: 'orders', partition: 0, replicas: [4, 5, 6] }]);
    assert.deepEqual(parsed(encodeReassignPartitions(moves)), JSON.parse(reassign));
    const list =
      '{"version":1,"partitions":[{"topic":"orders","partition":3},{"topic":"audit","partition":0}]}';
    const election = value(decodePreferredReplicaElection(utf8(list)));
    assert.deepEqual(parsed(encodePreferredReplicaElection(election)), JSON.parse(list));
    const isr = value(decodeIsrChangeNotification(utf8(list)));
    assert.deepEqual(parsed(encodeIsrChangeNotification(isr)), JSON.parse(list));
    const logDir = '{"version":1,"broker":1,"event":1}';
    assert.deepEqual(parsed(encodeLogDirEvent(value(decodeLogDirEvent(utf8(logDir))))), JSON.parse(logDir));
    refused(
      decodeReassignPartitions(utf8('{"version":1,"partitions":[{"topic":"","partition":0,"replicas":[]}]}')),
      /topic is empty/,
    );
    refused(decodeIsrChangeNotification(utf8('{"version":1,"partitions":[7]}')), /not an object/);
  });

  it('round-trips the producer id block with its longs as strings', () => {
    const json = '{"version":1,"broker":2,"block_start":"9007199254740000","block_end":"9007199254740990"}';
    const block = value(decodeProducerIdBlock(utf8(json)));
    assert.equal(block.blockStart, 9007199254740000);
    assert.deepEqual(parsed(encodeProducerIdBlock(block)), JSON.parse(json));
    refused(
      decodeProducerIdBlock(utf8('{"version":1,"broker":2,"block_start":"10","block_end":"9"}')),
      /before/,
    );
    refused(
      decodeProducerIdBlock(
        utf8('{"version":1,"broker":2,"block_start":"99999999999999999","block_end":"1"}'),
      ),
      /range/,
    );
  });
});

describe('zk-layout: paths', () => {
  it('builds Kafka paths and refuses names that would address another node', () => {
    assert.equal(partitionStatePath('orders', 3 as PartitionId), '/brokers/topics/orders/partitions/3/state');
    assert.equal(topicConfigPath('orders'), '/config/topics/orders');
    assert.equal(brokerConfigPath('<default>'), '/config/brokers/<default>');
    assert.equal(brokerConfigPath(4 as BrokerId), '/config/brokers/4');
    assert.throws(() => topicPath('a/b'));
    assert.throws(() => topicPath('..'));
    assert.equal(sequenceNumberOf('config_change_0000000042', 'config_change_'), 42);
    assert.equal(sequenceNumberOf('config_change_42', 'config_change_'), null);
  });

  it('creates the persistent paths a broker expects, idempotently', async () => {
    const store = InProcessStore.open({ dataDir: null });
    const session = store.openSession();
    assert.ok((await ensurePersistentPaths(session)).ok);
    assert.ok((await ensurePersistentPaths(session)).ok);
    for (const path of PERSISTENT_PATHS) {
      const stat = await session.exists(path);
      assert.ok(stat.ok && stat.value !== null, `${path} exists`);
    }
    const brokers = await session.children('/brokers');
    assert.deepEqual(brokers.ok && brokers.value, ['ids', 'seqid', 'topics']);
    store.close();
  });
});

describe('zk-layout: controller fencing', () => {
  it('lets the current controller write and fences the one whose epoch version is stale', async () => {
    const store = InProcessStore.open({ dataDir: null });
    const s = store.openSession();
    assert.ok((await s.create('/controller_epoch', epochBytes(1))).ok);
    const stale = 0;
    const current = await s.set('/controller_epoch', epochBytes(2), 0);
    assert.ok(current.ok);
    assert.ok((await s.create('/state', utf8('x'))).ok);
    const write = { op: 'set', path: '/state', data: utf8('by current'), version: 0 } as const;
    const fenced = await s.multi(fencedOps(stale, [write]));
    assert.equal(fenced.ok, false);
    assert.ok(!fenced.ok && wasFenced(fenced));
    assert.ok((await s.multi(fencedOps(current.value.version, [write]))).ok);
    const stateNow = await s.get('/state');
    assert.equal(stateNow.ok && new TextDecoder().decode(stateNow.value.data), 'by current');
    const conflict = await s.multi(fencedOps(current.value.version, [write]));
    assert.ok(!conflict.ok && !wasFenced(conflict) && conflict.failedOpIndex === 1);
    store.close();
  });
});
