// The metadata of a source group's committed offset travels to the target group: Kafka's MirrorCheckpointTask
// commits each checkpoint as its OffsetAndMetadata (the translated offset and the upstream commit's metadata), so
// an application that keeps a cursor or a note in its commit metadata finds it again after switching clusters.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin, Producer } from '../../../src/client/index.js';
import { sleep } from '../../helpers/wait.js';
import { useMirrorClusters } from './mirror-clusters.js';
import { startMirrorMaker, writeTwoClusterMm2 } from './mirror-process.js';

const clusters = useMirrorClusters('brook-mirror-meta-');

test("group offsets synced to the target carry the source commit's metadata", async () => {
  const source = new Admin({ bootstrapServers: clusters.a.bootstrap });
  const target = new Admin({ bootstrapServers: clusters.b.bootstrap });
  try {
    await source.createTopics([{ topic: 'ledger', numPartitions: 1, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers: clusters.a.bootstrap });
    await producer.sendBatch(
      Array.from({ length: 20 }, (_, i) => ({ topic: 'ledger', value: Buffer.from(`${i}`) })),
    );
    await producer.close();
    const mirror = await startMirrorMaker(
      writeTwoClusterMm2(
        clusters.dir,
        { sourceBootstrap: clusters.a.bootstrap, targetBootstrap: clusters.b.bootstrap, topics: 'ledger' },
        {
          'replication.policy.class': 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
          'refresh.topics.interval.ms': 1000,
          'refresh.groups.interval.ms': 1000,
          'emit.checkpoints.interval.ms': 500,
          'sync.group.offsets.enabled': true,
          'sync.group.offsets.interval.ms': 500,
          'offset.flush.interval.ms': 1000,
        },
      ),
    );
    clusters.mirrors.push(mirror);

    const committed = await source.alterConsumerGroupOffsets('ledger-app', [
      { topic: 'ledger', partition: 0, offset: 20, metadata: 'cursor=20' },
    ]);
    assert.deepEqual(
      committed.map((r) => r.error),
      [null],
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [synced] = await target.listConsumerGroupOffsets('ledger-app').catch(() => []);
      if (synced !== undefined && synced.offset >= 0) {
        assert.equal(synced.metadata, 'cursor=20', `target group offset ${JSON.stringify(synced)}`);
        break;
      }
      assert.ok(
        Date.now() < deadline,
        `the target group got no offset; the mirror's log ends:\n${mirror.output().slice(-4000)}`,
      );
      await sleep(300);
    }
  } finally {
    await source.close();
    await target.close();
  }
});
