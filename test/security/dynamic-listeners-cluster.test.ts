// Dynamic listeners in a ZooKeeper cluster of two brokers: an EXTERNAL listener added to each broker at runtime
// (IncrementalAlterConfigs on /config/brokers/<id>) is registered in /brokers/ids/<id>, the controller sends the
// new endpoints to every broker, and a client bootstrapped on broker 0's new listener is told broker 1's new
// endpoint too and produces to a partition broker 1 leads through it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { agreedController, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { freePort } from '../helpers/zookeeper.js';

const TOPIC = 'on-broker-1';

describe('listeners added at runtime in a ZooKeeper cluster', () => {
  let cluster: TestCluster | undefined;
  const externalPorts: number[] = [];
  const clients: { close(): Promise<void> }[] = [];

  before(async () => {
    for (let id = 0; id < 2; id++) externalPorts.push(await freePort());
    cluster = await startCluster({
      brokers: 2,
      overrides: { 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT' },
    });
    const brokers = cluster.brokers;
    const controllerId = await agreedController(brokers);
    // Broker 1 leads the only partition.
    await createTopicOn(brokers[controllerId]!, TOPIC, { assignments: { 0: [1, 0] } });
  });
  after(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => {});
    await cluster?.stop();
  });

  it('the new endpoints reach every broker and a client uses them', { timeout: 180_000 }, async () => {
    const brokers = cluster!.brokers;
    const admin = new Admin({ bootstrapServers: cluster!.bootstrap });
    clients.push(admin);
    for (const id of [0, 1]) {
      const b = brokers[id]!;
      const [result] = await admin.incrementalAlterConfigs([
        {
          type: 'broker',
          name: String(id),
          ops: [
            {
              op: 'set',
              name: 'listeners',
              value: `PLAINTEXT://${b.host}:${b.port},EXTERNAL://127.0.0.1:${externalPorts[id]}`,
            },
          ],
        },
      ]);
      assert.equal(result?.error ?? null, null, `broker ${id}`);
    }
    // Broker 0's metadata on its EXTERNAL listener names both brokers' EXTERNAL endpoints once UpdateMetadata came.
    const external = new Admin({ bootstrapServers: `127.0.0.1:${externalPorts[0]}` });
    clients.push(external);
    await waitFor(
      "both brokers' EXTERNAL endpoints served by broker 0",
      async () => {
        const { brokers: listed } = await external.describeCluster();
        const ports = listed.map((b) => [b.nodeId, b.port]).sort((a, b) => a[0]! - b[0]!);
        return JSON.stringify(ports) ===
          JSON.stringify([
            [0, externalPorts[0]],
            [1, externalPorts[1]],
          ])
          ? true
          : undefined;
      },
      90_000,
    );
    // The producer reaches broker 1, the leader, at the endpoint broker 0 told it.
    const producer = new Producer({ bootstrapServers: `127.0.0.1:${externalPorts[0]}`, lingerMs: 0 });
    clients.push(producer);
    const sent = await waitFor(
      'a write to the partition broker 1 leads',
      () => producer.send({ topic: TOPIC, partition: 0, value: Buffer.from('external') }),
      90_000,
    );
    assert.equal(sent.partition, 0);
  });
});
