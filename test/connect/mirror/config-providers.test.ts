// Config providers in mm2.properties (Kafka's `config.providers`): the clusters' addresses come from
// `${env:VAR}` and `${file:/path:key}`, the flow's topic list from a file too. The mirror copies the records,
// and the connector configs in `mm2-configs.A.internal` keep the variables (the worker resolves them when the
// connectors and tasks start, as Kafka's does), so values read through a provider are not stored there.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Admin, Consumer, Producer } from '../../../src/client/index.js';
import { useMirrorClusters } from './mirror-clusters.js';
import { startMirrorMaker, writeMm2 } from './mirror-process.js';

const clusters = useMirrorClusters('brook-mirror-providers-');

/** Every record of `topic` on cluster `bootstrap` (one partition), keys and values as text. */
async function readAll(bootstrap: string, topic: string, partitions: number): Promise<string[]> {
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const out: string[] = [];
  try {
    const tps = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    const ends = await consumer.endOffsets(tps);
    consumer.assign(tps);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const positions = await Promise.all(tps.map((tp) => consumer.position(tp)));
      if (positions.every((p, i) => p >= ends.find((e) => e.partition === i)!.offset)) break;
      if (Date.now() > deadline) throw new Error(`could not read ${topic} to its end`);
      for (const r of await consumer.poll(300))
        out.push(`${r.key?.toString() ?? ''}=${r.value?.toString() ?? ''}`);
    }
  } finally {
    await consumer.close();
  }
  return out;
}

test('cluster addresses and topics from env and file variables: records copied, variables stored', async () => {
  const admin = new Admin({ bootstrapServers: clusters.a.bootstrap });
  try {
    await admin.createTopics([{ topic: 'orders', numPartitions: 2, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
  const secrets = join(clusters.dir, 'mm2-secrets.properties');
  writeFileSync(secrets, `target.servers=${clusters.b.bootstrap}\ntopics=orders\n`);
  const file = writeMm2(clusters.dir, {
    'config.providers': 'file, env',
    'config.providers.file.class': 'org.apache.kafka.common.config.provider.FileConfigProvider',
    'config.providers.env.class': 'org.apache.kafka.common.config.provider.EnvVarConfigProvider',
    clusters: 'A, B',
    'A.bootstrap.servers': `\${env:BROOK_MM2_SOURCE_SERVERS}`,
    'B.bootstrap.servers': `\${file:${secrets}:target.servers}`,
    'A->B.enabled': true,
    'A->B.topics': `\${file:${secrets}:topics}`,
    'replication.factor': 1,
    'emit.checkpoints.enabled': false,
    'offset.flush.interval.ms': 1000,
    'offset-syncs.topic.replication.factor': 1,
    'heartbeats.topic.replication.factor': 1,
    'checkpoints.topic.replication.factor': 1,
    'offset.storage.replication.factor': 1,
  });
  const producer = new Producer({ bootstrapServers: clusters.a.bootstrap, lingerMs: 5 });
  try {
    await producer.sendBatch(
      Array.from({ length: 100 }, (_, i) => ({
        topic: 'orders',
        partition: i % 2,
        value: Buffer.from(`order-${i}`),
      })),
    );
  } finally {
    await producer.close();
  }
  const mirror = await startMirrorMaker(file, { BROOK_MM2_SOURCE_SERVERS: clusters.a.bootstrap });
  clusters.mirrors.push(mirror);

  const consumer = new Consumer({
    bootstrapServers: clusters.b.bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const seen = new Set<string>();
  try {
    const deadline = Date.now() + 120_000;
    let assigned = false;
    while (seen.size < 100 && Date.now() < deadline) {
      if (!assigned) {
        const targetAdmin = new Admin({ bootstrapServers: clusters.b.bootstrap });
        const partitions = await targetAdmin
          .describeTopics(['A.orders'])
          .then((d) => d[0]?.partitions.length ?? 0)
          .catch(() => 0)
          .finally(() => targetAdmin.close());
        if (partitions === 2) {
          consumer.assign([0, 1].map((partition) => ({ topic: 'A.orders', partition })));
          assigned = true;
        } else await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      for (const r of await consumer.poll(500)) seen.add(r.value!.toString());
    }
  } finally {
    await consumer.close();
  }
  assert.equal(seen.size, 100, `records on the target:\n${mirror.output()}`);

  // The stored connector and task configs keep the variables; the resolved addresses are not in the topic.
  const configs = await readAll(clusters.b.bootstrap, 'mm2-configs.A.internal', 1);
  const source = configs.filter((c) => c.startsWith('connector-MirrorSourceConnector=')).at(-1);
  assert.ok(source !== undefined, configs.join('\n'));
  const props = (JSON.parse(source.slice(source.indexOf('=') + 1)) as { properties: Record<string, string> })
    .properties;
  assert.equal(props.topics, `\${file:${secrets}:topics}`);
  assert.equal(props['source.cluster.bootstrap.servers'], `\${env:BROOK_MM2_SOURCE_SERVERS}`);
  assert.equal(props['target.cluster.bootstrap.servers'], `\${file:${secrets}:target.servers}`);
  assert.ok(
    configs.some((c) => c.startsWith('task-MirrorSourceConnector-0=')),
    `no task config stored:\n${configs.join('\n')}`,
  );
  const leaked = configs.filter((c) => c.includes(clusters.a.bootstrap) || c.includes(clusters.b.bootstrap));
  assert.deepEqual(leaked, [], 'resolved addresses stored in the config topic');
});
