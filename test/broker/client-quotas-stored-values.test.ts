// DescribeClientQuotas over quota values stored in ZooKeeper by another tool, read as Kafka's ZooKeeper mode reads
// them (ZkAdminManager.clientQuotaPropsToDoubleMap: Scala's toDouble, which is Java's Double.parseDouble): blanks
// trimmed, exponents, NaN and Infinity taken; a value it refuses (the empty string, a word, hexadecimal without a
// binary exponent) throws IllegalStateException for a matched entity, so the whole describe fails with
// UNKNOWN_SERVER_ERROR and no message (ApiError.fromThrowable sends none for that code) and no entries. An entity
// the filter does not match is not read as numbers, so its bad value fails nothing. A document with a value that is
// not a string fails the describe when Kafka reads it (ConfigEntityZNode.decode throws), matched or not: every
// document of a kind the filter may match, or only the named one for an exact filter. Before, Brook answered NONE,
// read "" as 0 and left out the values Number() could not read, and failed every describe over such a document.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as zk from 'node-zookeeper-client';
import { CONFIG_PATH, encodeEntityConfig } from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { connectedZooKeeperTool, zooKeeperCall } from '../helpers/zookeeper-tool.js';

const MATCH_EXACT = 0;
const MATCH_SPECIFIED = 2;

interface Described {
  errorCode: number;
  errorMessage: string | null;
  entries: { entity: unknown[]; values: { key: string; value: number }[] }[] | null;
}

describe('DescribeClientQuotas over stored values Kafka reads with Double.parseDouble', () => {
  let zooKeeper: TestZooKeeper;
  let tool: zk.Client | undefined;
  let broker: InProcessBroker | undefined;
  let client: WireClient | undefined;

  before(async () => {
    zooKeeper = await startTestZooKeeper();
    tool = await connectedZooKeeperTool(zooKeeper.connect);
    broker = await startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    tool?.close();
    await broker?.stop();
    await zooKeeper?.stop();
  });

  /** Writes an entity's document as a tool other than the broker would, with no change notification. */
  const store = (entityPath: string, config: Record<string, string>) =>
    zooKeeperCall((done) =>
      tool!.mkdirp(`${CONFIG_PATH}/${entityPath}`, Buffer.from(encodeEntityConfig(config)), done),
    );
  const remove = (entityPath: string) =>
    zooKeeperCall((done) => tool!.remove(`${CONFIG_PATH}/${entityPath}`, -1, done));

  const describeQuotas = (
    components: { entityType: string; matchType: number; match: string | null }[],
    strict: boolean,
  ): Promise<Described> => client!.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, { components, strict });
  const exactClient = (name: string) =>
    describeQuotas([{ entityType: 'client-id', matchType: MATCH_EXACT, match: name }], true);

  it('describes the values Double.parseDouble reads: blanks trimmed, exponents, NaN and Infinity', async () => {
    await store('clients/java-read', {
      request_percentage: ' 2.5 ',
      producer_byte_rate: '1e3',
      controller_mutation_rate: 'NaN',
      consumer_byte_rate: 'Infinity',
    });
    try {
      const response = await exactClient('java-read');
      assert.equal(response.errorCode, ErrorCode.NONE);
      const values = Object.fromEntries(response.entries![0]!.values.map((v) => [v.key, v.value]));
      assert.deepEqual(values, {
        request_percentage: 2.5,
        producer_byte_rate: 1000,
        controller_mutation_rate: Number.NaN,
        consumer_byte_rate: Number.POSITIVE_INFINITY,
      });
    } finally {
      await remove('clients/java-read');
    }
  });

  for (const [name, text] of [
    ['blank', ''],
    ['word', 'lots'],
    ['hexadecimal', '0x10'],
  ] as const) {
    it(`fails the whole describe, UNKNOWN_SERVER_ERROR without a message, over a matched ${name} value`, async () => {
      await store(`clients/${name}`, { producer_byte_rate: text });
      try {
        assert.deepEqual(await exactClient(name), {
          throttleTimeMs: 0,
          errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
          errorMessage: null,
          entries: null,
        });
      } finally {
        await remove(`clients/${name}`);
      }
    });
  }

  it('fails a describe of every entity over one bad value, and not one whose filter leaves it out', async () => {
    await store('users/good', { consumer_byte_rate: '2048' });
    await store('users/bad', { consumer_byte_rate: 'lots', 'SCRAM-SHA-256': 'salt=AA,stored_key=AA' });
    try {
      const everything = await describeQuotas([], false);
      assert.deepEqual([everything.errorCode, everything.entries], [ErrorCode.UNKNOWN_SERVER_ERROR, null]);
      // Kafka reads the other users' documents here too (fetchAllEntityConfigs), but parses only the matched ones.
      const good = await describeQuotas(
        [{ entityType: 'user', matchType: MATCH_EXACT, match: 'good' }],
        false,
      );
      assert.equal(good.errorCode, ErrorCode.NONE);
      assert.deepEqual(good.entries, [
        {
          entity: [{ entityType: 'user', entityName: 'good' }],
          values: [{ key: 'consumer_byte_rate', value: 2048 }],
        },
      ]);
    } finally {
      await remove('users/good');
      await remove('users/bad');
    }
  });

  it('fails a describe that reads a document with a value that is not a string, and only one that reads it', async () => {
    const path = `${CONFIG_PATH}/clients/not-a-string`;
    await zooKeeperCall((done) =>
      tool!.mkdirp(path, Buffer.from('{"version":1,"config":{"producer_byte_rate":5}}'), done),
    );
    await store('users/good', { consumer_byte_rate: '2048' });
    try {
      // Kafka reads every client-id document for these (fetchAllEntityConfigs), whose decode throws.
      for (const components of [[], [{ entityType: 'client-id', matchType: MATCH_SPECIFIED, match: null }]]) {
        const response = await describeQuotas(components, false);
        assert.deepEqual(
          [response.errorCode, response.errorMessage, response.entries],
          [ErrorCode.UNKNOWN_SERVER_ERROR, null, null],
        );
      }
      // And only the named entity's, or no client-id document at all, for these.
      const user = await describeQuotas(
        [{ entityType: 'user', matchType: MATCH_EXACT, match: 'good' }],
        true,
      );
      assert.deepEqual([user.errorCode, user.entries?.length], [ErrorCode.NONE, 1]);
      const other = await exactClient('other');
      assert.deepEqual([other.errorCode, other.entries], [ErrorCode.NONE, []]);
      const ips = await describeQuotas(
        [{ entityType: 'ip', matchType: MATCH_SPECIFIED, match: null }],
        false,
      );
      assert.deepEqual([ips.errorCode, ips.entries], [ErrorCode.NONE, []]);
    } finally {
      await remove('clients/not-a-string');
      await remove('users/good');
    }
  });
});
