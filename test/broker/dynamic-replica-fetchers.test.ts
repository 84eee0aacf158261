// num.replica.fetchers in a real two-broker cluster: the follower runs that many fetchers for its leader, each
// partition fetched by the one Kafka's getFetcherId names (seen in the follower's FetcherLagMetrics, whose client
// id is the fetcher's, ReplicaFetcherThread-<fetcher id>-<leader id>), and replication completes through them. A
// change of the cluster default over the wire (IncrementalAlterConfigs) moves the partitions to the fetchers the new
// count names, without a restart, and what is written next is replicated as well; 0 is refused.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fetcherIdOf } from '../../src/broker/cluster/fetcher-id.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedController, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import { type Samples, scrape } from '../metrics/scrape.js';

const TOPIC = 'spread';
const PARTITIONS = 6;
const LEADER = 0;
const FOLLOWER = 1;
const LAG = 'kafka_server_fetcherlagmetrics_consumerlag';
const LOG_END = 'kafka_log_log_logendoffset';

describe('num.replica.fetchers in a two-broker cluster', () => {
  let cluster: TestCluster | undefined;
  let client: WireClient | undefined;
  const ports: number[] = [];

  before(async () => {
    for (let id = 0; id < 2; id++) ports.push(await freePort());
    cluster = await startCluster({
      brokers: 2,
      overrides: { 'num.replica.fetchers': 2 },
      brokerOverrides: Object.fromEntries(
        ports.map((port, id) => [id, { 'brook.metrics.listener': `http://127.0.0.1:${port}` }]),
      ),
    });
    const brokers = cluster.brokers;
    const controllerId = await agreedController(brokers);
    await createTopicOn(brokers[controllerId]!, TOPIC, {
      assignments: Object.fromEntries(Array.from({ length: PARTITIONS }, (_, p) => [p, [LEADER, FOLLOWER]])),
    });
    client = await WireClient.connect(brokers[LEADER]!.host, brokers[LEADER]!.port);
  });
  after(async () => {
    client?.close();
    await cluster?.stop();
  });

  /** One acks=all batch of `count` records to every partition, retried until the leader takes each. */
  async function produceToEvery(count: number): Promise<void> {
    for (let p = 0; p < PARTITIONS; p++) {
      const records = buildBatch(Array.from({ length: count }, (_, i) => ({ value: `r${p}-${i}` })));
      await waitFor(
        `partition ${p} takes a write`,
        async () => {
          const res = await client!.call(ApiKey.PRODUCE, 9, {
            transactionalId: null,
            acks: -1,
            timeoutMs: 10_000,
            topicData: [{ name: TOPIC, partitionData: [{ index: p, records }] }],
          });
          return res.responses[0].partitionResponses[0].errorCode === ErrorCode.NONE ? true : undefined;
        },
        60_000,
      );
    }
  }

  /** The fetcher (client id) each partition's lag is reported under on the follower; fails if two report one. */
  function fetcherOfEach(s: Samples, fetchers: number): Map<number, string> {
    const out = new Map<number, string>();
    for (let p = 0; p < PARTITIONS; p++) {
      for (let id = 0; id < Math.max(fetchers, 3); id++) {
        const clientId = `ReplicaFetcherThread-${id}-${LEADER}`;
        if (s.get(LAG, { clientId, topic: TOPIC, partition: p }) === undefined) continue;
        assert.equal(out.get(p), undefined, `partition ${p} is followed by two fetchers`);
        out.set(p, clientId);
      }
    }
    return out;
  }

  /** Waits until the follower fetches every partition with the fetcher `fetchers` names and has `end` records. */
  async function replicatedThrough(fetchers: number, end: number): Promise<void> {
    const expected = new Map(
      Array.from({ length: PARTITIONS }, (_, p) => [
        p,
        `ReplicaFetcherThread-${fetcherIdOf(TOPIC, p, fetchers)}-${LEADER}`,
      ]),
    );
    await waitFor(
      `every partition replicated through ${fetchers} fetchers`,
      async () => {
        const s = await scrape(ports[FOLLOWER]!);
        const seen = fetcherOfEach(s, fetchers);
        for (let p = 0; p < PARTITIONS; p++) {
          if (seen.get(p) !== expected.get(p)) return undefined;
          if (s.get(LAG, { clientId: expected.get(p)!, topic: TOPIC, partition: p }) !== 0) return undefined;
          if (s.get(LOG_END, { topic: TOPIC, partition: p }) !== end) return undefined;
        }
        return true;
      },
      60_000,
    );
  }

  async function setClusterDefault(value: string): Promise<number> {
    const altered = await client!.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: 4,
          resourceName: '',
          configs: [{ name: 'num.replica.fetchers', configOperation: 0, value }],
        },
      ],
      validateOnly: false,
    });
    return altered.responses[0].errorCode;
  }

  it('spreads partitions over two fetchers as Kafka does and replicates through both', {
    timeout: 180_000,
  }, async () => {
    const ids = new Set(Array.from({ length: PARTITIONS }, (_, p) => fetcherIdOf(TOPIC, p, 2)));
    assert.deepEqual([...ids].sort(), [0, 1], 'the topic has partitions for both fetchers');
    await produceToEvery(3);
    await replicatedThrough(2, 3);
  });

  it('moves partitions to the fetchers a new cluster-wide count names, without a restart', {
    timeout: 180_000,
  }, async () => {
    assert.equal(await setClusterDefault('0'), ErrorCode.INVALID_REQUEST, 'no fetcher at all is refused');
    const ids = new Set(Array.from({ length: PARTITIONS }, (_, p) => fetcherIdOf(TOPIC, p, 3)));
    assert.equal(ids.size, 3, 'the topic has partitions for three fetchers');
    assert.equal(await setClusterDefault('3'), ErrorCode.NONE);
    await replicatedThrough(3, 3);
    await produceToEvery(2);
    await replicatedThrough(3, 5);

    assert.equal(await setClusterDefault('1'), ErrorCode.NONE);
    await replicatedThrough(1, 5);
    await produceToEvery(2);
    await replicatedThrough(1, 7);
  });
});
