// brook.log.flush.group.commit.enable and .max.delay.ms changed over the wire on the cluster-default broker
// resource (both cluster-wide dynamic) reach the logs of a running broker: with the key off (the default) a
// produce is answered without a group fdatasync; once it is on, each produce waits for one
// (brook_log_groupcommit_syncs counts them per log); a max delay of a second makes the fdatasync, and so the
// produce's answer, wait at least that long; switched off again, produces stop syncing.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import { scrape } from '../metrics/scrape.js';

const TOPIC = 'synced';
const SYNCS = 'brook_log_groupcommit_syncs';

describe('dynamic group commit over the wire', () => {
  let broker: BrokerProcess;
  let client: WireClient;
  let metricsPort: number;

  before(async () => {
    metricsPort = await freePort();
    broker = await startBroker({
      overrides: { 'brook.metrics.listener': `http://127.0.0.1:${metricsPort}` },
    });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1, replicationFactor: 1 });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  /** One acks=1 produce, retried until the partition takes it; answers how long the accepted one took. */
  async function produceTimed(): Promise<number> {
    return waitFor(
      'a produce accepted',
      async () => {
        const started = performance.now();
        const res = await client.call(ApiKey.PRODUCE, 9, {
          transactionalId: null,
          acks: 1,
          timeoutMs: 10_000,
          topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ value: 'v' }]) }] }],
        });
        const elapsedMs = performance.now() - started;
        return res.responses[0].partitionResponses[0].errorCode === ErrorCode.NONE ? elapsedMs : undefined;
      },
      60_000,
    );
  }

  async function syncs(): Promise<number> {
    return (await scrape(metricsPort)).value(SYNCS, { topic: TOPIC, partition: 0 });
  }

  async function setClusterDefault(configs: Record<string, string>): Promise<void> {
    const altered = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: 4,
          resourceName: '',
          configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value })),
        },
      ],
      validateOnly: false,
    });
    assert.equal(altered.responses[0].errorCode, ErrorCode.NONE, altered.responses[0].errorMessage);
  }

  it('turns group commit and its delay on and off without a restart', { timeout: 120_000 }, async () => {
    await produceTimed();
    await produceTimed();
    assert.equal(await syncs(), 0, 'no group fdatasync while the key is off');

    await setClusterDefault({ 'brook.log.flush.group.commit.enable': 'true' });
    await produceTimed();
    const afterOne = await syncs();
    assert.ok(afterOne >= 1, `the produce waited for a group fdatasync (${afterOne})`);
    await produceTimed();
    assert.ok((await syncs()) > afterOne, 'each produce waits for a group fdatasync of its own');

    await setClusterDefault({ 'brook.log.flush.group.commit.max.delay.ms': '1000' });
    const delayedMs = await produceTimed();
    // A timer never fires early by more than a millisecond; load only makes the wait longer.
    assert.ok(delayedMs >= 990, `the fdatasync waited for the max delay (${delayedMs} ms)`);

    await setClusterDefault({ 'brook.log.flush.group.commit.enable': 'false' });
    const before = await syncs();
    await produceTimed();
    await produceTimed();
    assert.equal(await syncs(), before, 'no group fdatasync once the key is off again');
  });
});
