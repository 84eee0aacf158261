// __transaction_state is created with transaction.state.log.replication.factor and .min.isr as configured, over the
// wire, as Kafka 3.x creates it (AutoTopicCreationManager): while fewer brokers are alive than the replication
// factor the creation fails and FindCoordinator (key type 1) answers COORDINATOR_NOT_AVAILABLE; once enough brokers
// are up, the topic is created with every replica. Brook used to lower both to the brokers alive at the first
// FindCoordinator, which left a cluster whose first transactional client came early with a transaction log of one
// replica for good.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { controllerOf, waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const TXN_TOPIC = '__transaction_state';

describe('__transaction_state on a cluster with fewer live brokers than its replication factor', () => {
  let zk: TestZooKeeper;
  const brokers: InProcessBroker[] = [];
  let client: WireClient;

  const start = async (id: number): Promise<InProcessBroker> => {
    const broker = await startInProcessBroker({
      'broker.id': id,
      'zookeeper.connect': zk.connect,
      'replica.fetch.wait.max.ms': 100,
      'controlled.shutdown.retry.backoff.ms': 200,
      'transaction.state.log.num.partitions': 2,
      'transaction.state.log.replication.factor': 2,
      'transaction.state.log.min.isr': 2,
    });
    brokers.push(broker);
    return broker;
  };

  before(async () => {
    zk = await startTestZooKeeper();
    const first = await start(0);
    await waitFor('broker 0 to run the controller', async () =>
      (await controllerOf(first)) === 0 ? true : undefined,
    );
    client = await WireClient.connect(first.host, first.port);
  });
  after(async () => {
    client?.close();
    try {
      for (const b of brokers.reverse()) await b.stop();
    } finally {
      await zk?.stop();
    }
  });

  const findTxnCoordinator = async (): Promise<number> => {
    const r = await client.call(ApiKey.FIND_COORDINATOR, 4, {
      key: '',
      keyType: 1,
      coordinatorKeys: ['txn-replication'],
    });
    return r.coordinators[0].errorCode;
  };

  const txnTopic = async () => {
    const md = await client.call(ApiKey.METADATA, 9, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: TXN_TOPIC }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    return md.topics[0];
  };

  it('answers COORDINATOR_NOT_AVAILABLE and creates nothing while one of two brokers is alive', async () => {
    for (let i = 0; i < 5; i++) {
      assert.equal(await findTxnCoordinator(), ErrorCode.COORDINATOR_NOT_AVAILABLE);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await txnTopic()).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('creates the topic with every replica and the configured min ISR once enough brokers are up', async () => {
    await start(1);
    await waitFor('a transaction coordinator', async () =>
      (await findTxnCoordinator()) === ErrorCode.NONE ? true : undefined,
    );
    const topic = await txnTopic();
    assert.equal(topic.partitions.length, 2);
    for (const p of topic.partitions) assert.deepEqual([...p.replicaNodes].sort(), [0, 1]);
    const configs = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: 2, resourceName: TXN_TOPIC, configurationKeys: ['min.insync.replicas'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.equal(configs.results[0].configs[0].value, '2');
  });
});
