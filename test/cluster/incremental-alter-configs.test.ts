// IncrementalAlterConfigs in a ZooKeeper cluster of two broker processes. A client's admin requests for a topic or
// for the cluster-wide broker default go to any broker (the Java AdminClient picks the least loaded one), so two
// changes in a row often reach two brokers. Kafka applies each change to what ZooKeeper holds at that moment
// (ZkAdminManager reads the entity's config before editing it), so the second change keeps the first; a broker
// that edited what its config-change notifications had brought so far wrote the first change away whenever the
// second request arrived before that notification (tens of milliseconds on a loaded machine).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DescribeConfigsResponse } from '../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { alterConfigs, CLUSTER_DEFAULT, TOPIC_RESOURCE } from '../helpers/dynamic-configs.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const BROKER_RESOURCE = 4;
const DYNAMIC_TOPIC_CONFIG = 1;
const DYNAMIC_DEFAULT_BROKER_CONFIG = 3;
/** Changes in a row, alternating brokers: each pair is one chance for the second broker to be behind. */
const ROUNDS = 5;

/** The values of `keys` that `client`'s broker describes for the resource, with their sources. */
async function described(
  client: WireClient,
  resourceType: number,
  resourceName: string,
  keys: readonly string[],
): Promise<Record<string, [string | null, number]>> {
  const response = await client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
    resources: [{ resourceType, resourceName, configurationKeys: keys }],
    includeSynonyms: false,
    includeDocumentation: false,
  });
  const result = response.results[0]!;
  assert.equal(result.errorCode, 0, result.errorMessage ?? undefined);
  return Object.fromEntries(result.configs.map((c) => [c.name, [c.value, c.configSource]]));
}

describe('IncrementalAlterConfigs through two brokers in a row', () => {
  let cluster: TestCluster;
  let first: WireClient;
  let second: WireClient;

  before(async () => {
    cluster = await startCluster({ brokers: 2 });
    const [b0, b1] = cluster.brokers as [BrokerProcess, BrokerProcess];
    first = await WireClient.connect(b0.host, b0.port);
    second = await WireClient.connect(b1.host, b1.port);
    await createTopic(first, 'edited-twice', { numPartitions: 1, replicationFactor: 2 });
    // Both brokers know the topic before the first change (a request for an unknown topic is refused).
    await waitFor('the second broker to know the topic', () =>
      described(second, TOPIC_RESOURCE, 'edited-twice', ['retention.ms']),
    );
  });
  after(async () => {
    first?.close();
    second?.close();
    await cluster?.stop();
  });

  it("a topic's change through the second broker keeps the change just made through the first", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const retentionMs = String(3_600_000 + round);
      const segmentMs = String(7_200_000 + round);
      await alterConfigs(first, 'edited-twice', { 'retention.ms': retentionMs }, TOPIC_RESOURCE);
      await alterConfigs(second, 'edited-twice', { 'segment.ms': segmentMs }, TOPIC_RESOURCE);
      // The second broker wrote last and has applied its own write: it describes what the store holds.
      assert.deepEqual(
        await described(second, TOPIC_RESOURCE, 'edited-twice', ['retention.ms', 'segment.ms']),
        {
          'retention.ms': [retentionMs, DYNAMIC_TOPIC_CONFIG],
          'segment.ms': [segmentMs, DYNAMIC_TOPIC_CONFIG],
        },
        `round ${round}`,
      );
    }
  });

  it('a cluster-wide default set through the second broker keeps the one just set through the first', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const retentionMs = String(86_400_000 + round);
      const minCompactionLagMs = String(1_000 + round);
      await alterConfigs(first, CLUSTER_DEFAULT, { 'log.retention.ms': retentionMs });
      await alterConfigs(second, CLUSTER_DEFAULT, {
        'log.cleaner.min.compaction.lag.ms': minCompactionLagMs,
      });
      assert.deepEqual(
        await described(second, BROKER_RESOURCE, CLUSTER_DEFAULT, [
          'log.retention.ms',
          'log.cleaner.min.compaction.lag.ms',
        ]),
        {
          'log.retention.ms': [retentionMs, DYNAMIC_DEFAULT_BROKER_CONFIG],
          'log.cleaner.min.compaction.lag.ms': [minCompactionLagMs, DYNAMIC_DEFAULT_BROKER_CONFIG],
        },
        `round ${round}`,
      );
    }
  });
});
