// Replication policies, MirrorMaker's config file, the internal record formats (byte layouts written out by
// hand from Kafka's schemas) and offset translation: no broker needed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CheckpointStore } from '../../../src/connect/mirror/checkpoint-store.js';
import { MirrorConfig, MirrorFilters, setClientSecurity } from '../../../src/connect/mirror/mirror-config.js';
import { internalRestEnabled } from '../../../src/connect/mirror/mirror-maker.js';
import { parseMirrorMakerConfig } from '../../../src/connect/mirror/mm2-config.js';
import { OffsetSyncStore, SyncDecider } from '../../../src/connect/mirror/offset-syncs.js';
import {
  decodeCheckpoint,
  decodeHeartbeat,
  decodeOffsetSync,
  encodeCheckpointKey,
  encodeCheckpointValue,
  encodeHeartbeatKey,
  encodeHeartbeatValue,
  encodeOffsetSyncKey,
  encodeOffsetSyncValue,
} from '../../../src/connect/mirror/records.js';
import {
  DefaultReplicationPolicy,
  IdentityReplicationPolicy,
  replicationPolicyFrom,
} from '../../../src/connect/mirror/replication-policy.js';
import { MirrorSourceConnector } from '../../../src/connect/mirror/source-connector.js';

test('DefaultReplicationPolicy names remote topics A.topic and finds their source', () => {
  const p = new DefaultReplicationPolicy();
  assert.equal(p.formatRemoteTopic('A', 'orders'), 'A.orders');
  assert.equal(p.topicSource('A.orders'), 'A');
  assert.equal(p.upstreamTopic('A.orders'), 'orders');
  assert.equal(p.topicSource('orders'), null);
  assert.equal(p.offsetSyncsTopic('B'), 'mm2-offset-syncs.B.internal');
  assert.equal(p.checkpointsTopic('A'), 'A.checkpoints.internal');
  assert.ok(p.isHeartbeatsTopic('heartbeats') && p.isHeartbeatsTopic('B.A.heartbeats'));
  assert.ok(p.isInternalTopic('__consumer_offsets') && p.isInternalTopic('mm2-offsets.A.internal'));
  assert.ok(!p.isInternalTopic('orders'));
  const dash = replicationPolicyFrom({ 'replication.policy.separator': '_' });
  assert.equal(dash.formatRemoteTopic('A', 't'), 'A_t');
  assert.equal(dash.checkpointsTopic('A'), 'A_checkpoints.internal');
});

test('IdentityReplicationPolicy keeps names except heartbeats; Kafka class names are accepted', () => {
  const p = replicationPolicyFrom({
    'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
  });
  assert.ok(p instanceof IdentityReplicationPolicy);
  assert.equal(p.formatRemoteTopic('A', 'orders'), 'orders');
  assert.equal(p.formatRemoteTopic('A', 'heartbeats'), 'A.heartbeats');
  assert.equal(p.topicSource('orders'), null);
  assert.throws(
    () => replicationPolicyFrom({ 'replication.policy.class': 'com.example.Nope' }),
    /could not be found/,
  );
});

test('filters: topics/topics.exclude regexes, internal topics, cycles, groups', () => {
  const c = new MirrorConfig({
    'source.cluster.alias': 'A',
    'target.cluster.alias': 'B',
    topics: 'orders.*, heart.*',
    'topics.exclude': 'orders-private',
    'groups.exclude': 'skip-.*',
  });
  const f = new MirrorFilters(c);
  assert.ok(f.shouldReplicateTopic('orders'));
  assert.ok(f.shouldReplicateTopic('orders-eu'));
  assert.ok(!f.shouldReplicateTopic('orders-private'));
  assert.ok(!f.shouldReplicateTopic('payments'), 'topics is matched against the whole name');
  assert.ok(!f.shouldReplicateTopic('B.orders'), 'a topic that came from the target is a cycle');
  assert.ok(f.shouldReplicateTopic('heartbeats'));
  assert.ok(!f.shouldReplicateTopic('mm2-offset-syncs.B.internal'));
  assert.ok(f.shouldReplicateGroup('app'));
  assert.ok(!f.shouldReplicateGroup('skip-me'));
  const defaults = new MirrorFilters(
    new MirrorConfig({ 'source.cluster.alias': 'A', 'target.cluster.alias': 'B' }),
  );
  assert.ok(!defaults.shouldReplicateGroup('console-consumer-123'), "Kafka's default groups.exclude");
  assert.ok(!defaults.shouldReplicateTopic('x.internal') && defaults.shouldReplicateTopic('x'));
  assert.ok(!f.shouldReplicateConfig('min.insync.replicas'));
  assert.ok(f.shouldReplicateConfig('retention.ms'));
});

test('mm2.properties: clusters, per-cluster settings, enabled flows, per-flow overrides', () => {
  const cfg = parseMirrorMakerConfig({
    clusters: 'A, B',
    'A.bootstrap.servers': 'a:9092',
    'B.bootstrap.servers': 'b:9092',
    'B.security.protocol': 'SSL',
    'A->B.enabled': 'true',
    'A->B.topics': 'orders',
    topics: '.*',
    'replication.factor': '1',
    'offset.flush.interval.ms': '1000',
  });
  // Kafka's clusterPairs: B->A is not enabled but runs for its heartbeats, its replication off.
  assert.deepEqual(
    cfg.flows.map((x) => [`${x.source}->${x.target}`, x.replicates, x.connectorProps.enabled]),
    [
      ['A->B', true, 'true'],
      ['B->A', false, 'false'],
    ],
  );
  const f = cfg.flows[0]!;
  assert.equal(f.connectorProps.topics, 'orders');
  assert.equal(f.connectorProps['replication.factor'], '1');
  assert.equal(f.connectorProps['source.cluster.bootstrap.servers'], 'a:9092');
  assert.equal(f.connectorProps['target.cluster.security.protocol'], 'SSL');
  assert.equal(f.workerProps['bootstrap.servers'], 'b:9092');
  assert.equal(f.workerProps['offset.storage.topic'], 'mm2-offsets.A.internal');
  assert.equal(f.workerProps['config.storage.topic'], 'mm2-configs.A.internal');
  assert.equal(f.workerProps['status.storage.topic'], 'mm2-status.A.internal');
  assert.equal(f.workerProps['offset.flush.interval.ms'], '1000');
  const pairs = (props: Record<string, string>) =>
    parseMirrorMakerConfig({
      clusters: 'A, B',
      'A.bootstrap.servers': 'a:9092',
      'B.bootstrap.servers': 'b:9092',
      'A->B.enabled': 'true',
      ...props,
    }).flows.map((x) => `${x.source}->${x.target}`);
  assert.deepEqual(
    pairs({ 'emit.heartbeats.enabled': 'false' }),
    ['A->B'],
    'no heartbeats: only the enabled pair',
  );
  assert.deepEqual(pairs({ 'B->A.emit.heartbeats.enabled': 'false' }), ['A->B']);
  assert.deepEqual(pairs({ 'emit.heartbeats.enabled': 'false', 'B->A.emit.heartbeats.enabled': 'true' }), [
    'A->B',
    'B->A',
  ]);
  assert.throws(() => parseMirrorMakerConfig({ 'A.bootstrap.servers': 'x' }), /clusters/);
  assert.throws(
    () => parseMirrorMakerConfig({ clusters: 'A,B', 'A.bootstrap.servers': 'a', 'A->B.enabled': 'true' }),
    /B\.bootstrap\.servers/,
  );
});

test("worker config as Kafka's workerConfig: the target cluster's keys, exactly once per target, REST keys", () => {
  const cfg = parseMirrorMakerConfig({
    clusters: 'A, B, C',
    'A.bootstrap.servers': 'a:9092',
    'B.bootstrap.servers': 'b:9092',
    'C.bootstrap.servers': 'c:9092',
    'B.exactly.once.source.support': 'enabled',
    'B.scheduled.rebalance.max.delay.ms': '2000',
    'exactly.once.source.support': 'enabled',
    'A->C.exactly.once.source.support': 'enabled',
    'offset.storage.replication.factor': '1',
    'dedicated.mode.enable.internal.rest': 'true',
    listeners: 'http://127.0.0.1:0',
    'A->B.enabled': 'true',
    'A->C.enabled': 'true',
  });
  const toB = cfg.flows.find((f) => f.target === 'B')!;
  const toC = cfg.flows.find((f) => f.target === 'C')!;
  assert.equal(toB.workerProps['exactly.once.source.support'], 'enabled', 'B.exactly.once.source.support');
  assert.equal(toB.workerProps['scheduled.rebalance.max.delay.ms'], '2000');
  assert.equal(
    toC.workerProps['exactly.once.source.support'],
    undefined,
    'as in Kafka, neither the top-level nor the A->C key reaches the worker',
  );
  assert.equal(toB.workerProps['offset.storage.replication.factor'], '1');
  assert.equal(toB.workerProps.listeners, 'http://127.0.0.1:0');
  assert.equal(toB.workerProps['group.id'], 'A-mm2');
  assert.equal(toB.workerProps['client.id'], 'A->B');
  assert.equal(toB.workerProps['bootstrap.servers'], 'b:9092');
  assert.equal(internalRestEnabled({ 'dedicated.mode.enable.internal.rest': 'true' }), true);
  assert.equal(internalRestEnabled({}), false);
  assert.throws(
    () => internalRestEnabled({ 'dedicated.mode.enable.internal.rest': 'yes' }),
    /internal\.rest/,
  );
  // KIP-618 preflight as Kafka's MirrorSourceConnector: supported only when the source consumer reads committed.
  const connector = new MirrorSourceConnector();
  const base = { 'source.cluster.alias': 'A', 'target.cluster.alias': 'B' };
  assert.equal(connector.exactlyOnceSupport(base), 'UNSUPPORTED');
  for (const key of [
    'source.consumer.isolation.level',
    'consumer.isolation.level',
    'source.cluster.consumer.isolation.level',
  ])
    assert.equal(connector.exactlyOnceSupport({ ...base, [key]: 'read_committed' }), 'SUPPORTED', key);
});

test("record formats are Kafka's Struct layouts", () => {
  const syncKey = encodeOffsetSyncKey({ topic: 'ab', partition: 3 });
  assert.deepEqual([...syncKey], [0, 2, 0x61, 0x62, 0, 0, 0, 3]);
  const syncValue = encodeOffsetSyncValue({ upstreamOffset: 5, downstreamOffset: 7 });
  assert.equal(syncValue.toString('hex'), '0000000000000005' + '0000000000000007');
  assert.deepEqual(decodeOffsetSync(syncKey, syncValue), {
    topic: 'ab',
    partition: 3,
    upstreamOffset: 5,
    downstreamOffset: 7,
  });
  const cp = {
    group: 'g',
    topic: 'A.t',
    partition: 1,
    upstreamOffset: 10,
    downstreamOffset: 9,
    metadata: 'm',
  };
  const cpValue = encodeCheckpointValue(cp);
  assert.equal(cpValue.toString('hex'), '0000' + '000000000000000a' + '0000000000000009' + '0001' + '6d');
  assert.equal(encodeCheckpointKey(cp).toString('hex'), '000167' + '0003412e74' + '00000001');
  assert.deepEqual(decodeCheckpoint(encodeCheckpointKey(cp), cpValue), cp);
  const hb = { sourceClusterAlias: 'A', targetClusterAlias: 'B', timestamp: 1_700_000_000_000 };
  assert.equal(
    encodeHeartbeatValue(hb).toString('hex'),
    `0000${(1_700_000_000_000).toString(16).padStart(16, '0')}`,
  );
  assert.deepEqual(decodeHeartbeat(encodeHeartbeatKey(hb), encodeHeartbeatValue(hb)), hb);
  assert.throws(() => decodeOffsetSync(Buffer.from([0, 9, 1]), syncValue), /truncated/);
  // int64 beyond 32 bits, the largest a double holds exactly, and -1, as Java's writeLong writes them.
  for (const v of [2 ** 32 + 5, Number.MAX_SAFE_INTEGER, -1, -(2 ** 40)]) {
    const encoded = encodeOffsetSyncValue({ upstreamOffset: v, downstreamOffset: 0 });
    const expected = Buffer.alloc(16);
    expected.writeBigInt64BE(BigInt(v));
    assert.equal(encoded.toString('hex'), expected.toString('hex'), String(v));
    assert.equal(decodeOffsetSync(syncKey, encoded).upstreamOffset, v);
  }
});

test('offset syncs are emitted as Kafka does: first record, lag over offset.lag.max, gaps, truncation', () => {
  const d = new SyncDecider(100);
  assert.equal(d.update(0, 0), true, 'the first record of a lifetime');
  let emitted = 0;
  for (let i = 1; i < 100; i++) if (d.update(i, i)) emitted++;
  assert.equal(emitted, 0, 'nothing until the translation would be 100 behind');
  assert.equal(d.update(100, 101), true, 'downstream 101 is 100 past the sync + 1');
  assert.equal(d.update(105, 102), true, 'a gap upstream');
  assert.equal(d.update(106, 50), true, 'downstream went back');
});

test('translation never passes the true position: sync itself exact, one past a sync otherwise', () => {
  const s = new OffsetSyncStore();
  s.add({ topic: 't', partition: 0, upstreamOffset: 0, downstreamOffset: 10 });
  assert.equal(s.translate('t', 0, 0), null, 'nothing before the syncs topic was read to its end');
  s.markReadToEnd();
  s.add({ topic: 't', partition: 0, upstreamOffset: 100, downstreamOffset: 110 });
  s.add({ topic: 't', partition: 0, upstreamOffset: 200, downstreamOffset: 215 });
  assert.equal(s.translate('t', 0, 200), 215, 'at the newest sync: exact');
  assert.equal(s.translate('t', 0, 201), 216, 'one past the sync, not 216 + more');
  const older = s.translate('t', 0, 150);
  assert.ok(older !== null && older >= 11 && older <= 111, `150 translates through an older sync: ${older}`);
  assert.equal(s.translate('t', 0, 5000), 216);
  assert.equal(s.translate('t', 1, 5), null, 'no sync for the partition');
  // Every translation is at or before the true position, for a mapping with gaps (downstream = upstream + 10
  // + duplicates), whatever syncs the store kept.
  const store = new OffsetSyncStore();
  store.markReadToEnd();
  const truth = (u: number) => u + 10 + Math.floor(u / 7);
  for (let u = 0; u < 5000; u += 13)
    store.add({ topic: 'x', partition: 0, upstreamOffset: u, downstreamOffset: truth(u) });
  for (let u = 0; u < 5000; u++) {
    const t = store.translate('x', 0, u);
    assert.ok(t !== null && t <= truth(u), `upstream ${u}: ${t} > ${truth(u)}`);
  }
  // Recent syncs stay precise: a group a few thousand records behind translates within offset.lag.max.
  const busy = new OffsetSyncStore();
  busy.markReadToEnd();
  for (let u = 0; u <= 6000; u += 100)
    busy.add({ topic: 'y', partition: 0, upstreamOffset: u, downstreamOffset: u });
  assert.equal(busy.translate('y', 0, 3050), 3001);
  assert.equal(busy.translate('y', 0, 3000), 3000);
  store.add({ topic: 'x', partition: 0, upstreamOffset: 10, downstreamOffset: 9000 });
  assert.equal(store.translate('x', 0, 9), -1, 'a restart from an older offset drops the older syncs');
});

test('a restart keeps every offset sync only when the checkpoints were loaded; checkpoints never go back', () => {
  const syncs = [0, 100, 200].map((u) => ({
    topic: 't',
    partition: 0,
    upstreamOffset: u,
    downstreamOffset: u,
  }));
  const onlyLast = new OffsetSyncStore(true);
  const history = new OffsetSyncStore(false);
  for (const s of syncs) {
    onlyLast.add(s);
    history.add(s);
  }
  onlyLast.markReadToEnd();
  history.markReadToEnd();
  assert.equal(onlyLast.translate('t', 0, 150), -1, 'syncs read before the end: only the newest kept');
  assert.equal(history.translate('t', 0, 150), 101, 'with the checkpoints loaded the history is kept');

  const store = new CheckpointStore(new Set(['g']));
  const cp = (upstreamOffset: number, downstreamOffset: number) => ({
    group: 'g',
    topic: 't',
    partition: 0,
    upstreamOffset,
    downstreamOffset,
    metadata: '',
  });
  assert.equal(store.isMoreRecent(cp(500, 490)), true, 'the first of its partition');
  store.update([cp(500, 490)]);
  assert.equal(store.isMoreRecent(cp(500, 490)), false, 'the same again');
  assert.equal(store.isMoreRecent(cp(501, 101)), false, 'a coarser translation of a later offset');
  assert.equal(store.isMoreRecent(cp(600, 590)), true, 'further downstream');
  assert.equal(store.isMoreRecent(cp(100, 95)), true, 'the group was reset upstream');
});

test("intervals: Kafka's <job>.interval.seconds, or Brook's .interval.ms when set; negative turns a job off", () => {
  const base = { 'source.cluster.alias': 'A', 'target.cluster.alias': 'B' };
  assert.equal(new MirrorConfig(base).intervalMs('refresh.topics'), 600_000);
  assert.equal(new MirrorConfig(base).intervalMs('emit.heartbeats'), 1000);
  assert.equal(new MirrorConfig(base).intervalMs('emit.checkpoints'), 60_000);
  const c = new MirrorConfig({
    ...base,
    'sync.topic.acls.interval.seconds': '5',
    'emit.checkpoints.interval.seconds': '-1',
    'refresh.groups.interval.ms': '250',
    'refresh.groups.interval.seconds': '9',
  });
  assert.equal(c.intervalMs('sync.topic.acls'), 5000);
  assert.equal(c.intervalMs('emit.checkpoints'), -1000);
  assert.equal(c.intervalMs('refresh.groups'), 250);
  assert.throws(
    () => new MirrorConfig({ ...base, 'refresh.topics.interval.seconds': 'soon' }),
    /refresh\.topics/,
  );
});

test('client settings per role: <side>.cluster.*, then <side>.cluster.<role>.*, <role>.*, <side>.<role>.*', () => {
  const seen: Record<string, string>[] = [];
  setClientSecurity((props) => {
    seen.push({ ...props });
    return {};
  });
  try {
    const c = new MirrorConfig({
      'source.cluster.alias': 'A',
      'target.cluster.alias': 'B',
      'source.cluster.bootstrap.servers': 'a:9093',
      'source.cluster.security.protocol': 'SASL_SSL',
      'source.cluster.sasl.jaas.config': 'cluster',
      'source.cluster.consumer.sasl.jaas.config': 'cluster-consumer',
      'source.admin.sasl.jaas.config': 'source-admin',
      'target.cluster.bootstrap.servers': 'b:9093',
      'target.producer.ssl.truststore.location': '/b.pem',
    });
    c.clientOptions('source', 'x');
    c.clientOptions('source', 'x', 'consumer');
    c.clientOptions('source', 'x', 'admin');
    c.clientOptions('target', 'x', 'producer');
    assert.equal(seen[0]!['sasl.jaas.config'], 'cluster');
    assert.equal(seen[1]!['sasl.jaas.config'], 'cluster-consumer');
    assert.equal(seen[2]!['sasl.jaas.config'], 'source-admin');
    assert.equal(seen[2]!['security.protocol'], 'SASL_SSL');
    assert.equal(seen[3]!['ssl.truststore.location'], '/b.pem');
  } finally {
    setClientSecurity(null);
  }
});
