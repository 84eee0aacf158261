// The broker process over the wire, spoken to with Brook's own codecs: every handler's main paths and error
// codes, and bad input that must close only the offending connection.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { RawClient } from '../helpers/raw-client.js';
import { fetchBody, WireClient } from '../helpers/wire-client.js';

function produceRequest(topic: string, partition: number, records: Buffer | null, acks = 1) {
  return {
    transactionalId: null,
    acks,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  };
}

const fetchRequest = fetchBody;

function createTopicsRequest(
  name: string,
  numPartitions: number,
  configs: { name: string; value: string }[] = [],
) {
  return {
    topics: [{ name, numPartitions, replicationFactor: 1, assignments: [], configs }],
    timeoutMs: 5000,
    validateOnly: false,
  };
}

describe('broker over the wire', () => {
  let broker: BrokerProcess;
  let client: WireClient;
  before(async () => {
    broker = await startBroker({ overrides: { 'num.partitions': 2 } });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('advertises its handlers in ApiVersions, with Produce from version 0', async () => {
    const response = await client.call(ApiKey.API_VERSIONS, 3, {
      clientSoftwareName: 'brook-test',
      clientSoftwareVersion: '1.0',
    });
    assert.equal(response.errorCode, ErrorCode.NONE);
    const produce = response.apiKeys.find((k: { apiKey: number }) => k.apiKey === ApiKey.PRODUCE);
    assert.deepEqual(produce, { apiKey: 0, minVersion: 0, maxVersion: 11 });
    assert.ok(response.apiKeys.some((k: { apiKey: number }) => k.apiKey === ApiKey.FETCH));
  });

  it('answers an ApiVersions version it does not know with UNSUPPORTED_VERSION in a v0 body', async () => {
    const raw = await RawClient.connect(broker.host, broker.port);
    try {
      raw.sendFrame(frame99());
      const frame = await raw.nextFrame();
      assert.equal(frame.readInt32BE(0), 7, 'correlation id');
      assert.equal(frame.readInt16BE(4), ErrorCode.UNSUPPORTED_VERSION);
      assert.ok(frame.readInt32BE(6) > 5, 'the supported API list follows');
    } finally {
      raw.socket.destroy();
    }
  });

  it('creates a topic through Metadata auto-creation and answers with its leaders', async () => {
    const response = await client.call(ApiKey.METADATA, 9, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'auto-made' }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.equal(response.brokers.length, 1);
    assert.equal(response.brokers[0].port, broker.port);
    const topic = response.topics[0];
    assert.equal(topic.name, 'auto-made');
    assert.equal(topic.errorCode, ErrorCode.NONE);
    assert.equal(topic.partitions.length, 2);
    assert.ok(topic.partitions.every((p: { leaderId: number }) => p.leaderId === 0));
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION when auto-creation is not allowed, and INVALID_TOPIC for a bad name', async () => {
    const response = await client.call(ApiKey.METADATA, 9, {
      topics: [
        { topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'not-there' },
        { topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'bad/name' },
      ],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.equal(response.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(response.topics[1].errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
  });

  it('produces with acks=1 and acks=-1 and fetches the same records back with offsets from 0', async () => {
    const created = await client.call(ApiKey.CREATE_TOPICS, 5, createTopicsRequest('wire-rt', 1));
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    const first = buildBatch([
      { key: 'a', value: 'one' },
      { key: 'b', value: 'two', headers: [{ key: 'h', value: 'x' }] },
    ]);
    const p1 = await client.call(ApiKey.PRODUCE, 9, produceRequest('wire-rt', 0, first, 1));
    assert.equal(p1.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    assert.equal(p1.responses[0].partitionResponses[0].baseOffset, 0n);
    const p2 = await client.call(
      ApiKey.PRODUCE,
      9,
      produceRequest('wire-rt', 0, buildBatch([{ value: 'three' }]), -1),
    );
    assert.equal(p2.responses[0].partitionResponses[0].baseOffset, 2n);
    const fetched = await client.call(ApiKey.FETCH, 12, fetchRequest('wire-rt', 0, 0));
    const part = fetched.responses[0].partitions[0];
    assert.equal(part.errorCode, ErrorCode.NONE);
    assert.equal(part.highWatermark, 3n);
    const records = [];
    for (let pos = 0; pos < part.records.length; pos += 12 + part.records.readInt32BE(pos + 8)) {
      records.push(...readRecords(part.records, pos));
    }
    assert.deepEqual(
      records.map((r) => [r.offset, r.key?.toString() ?? null, r.value?.toString()]),
      [
        [0, 'a', 'one'],
        [1, 'b', 'two'],
        [2, null, 'three'],
      ],
    );
    assert.equal(records[1]!.headers[0]!.key, 'h');
  });

  it('serves Fetch v17 by topic id and ListOffsets v10, the newest versions', async () => {
    const md = await client.call(ApiKey.METADATA, 12, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'wire-rt' }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    const topicId: string = md.topics[0].topicId;
    const body = fetchRequest('wire-rt', 0, 0);
    body.topics[0]!.topicId = topicId;
    const fetched = await client.call(ApiKey.FETCH, 17, body);
    assert.equal(fetched.responses[0].topicId, topicId);
    assert.equal(fetched.responses[0].partitions[0].errorCode, ErrorCode.NONE);
    assert.ok(fetched.responses[0].partitions[0].records.length > 0);
    const latest = await client.call(ApiKey.LIST_OFFSETS, 10, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: 'wire-rt',
          partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }],
        },
      ],
      timeoutMs: 1000,
    });
    assert.equal(latest.topics[0].partitions[0].offset, fetched.responses[0].partitions[0].highWatermark);
  });

  it('answers OFFSET_OUT_OF_RANGE beyond the log end and long-polls until data arrives', async () => {
    const out = await client.call(ApiKey.FETCH, 12, fetchRequest('wire-rt', 0, 99));
    assert.equal(out.responses[0].partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    const other = await WireClient.connect(broker.host, broker.port);
    try {
      const started = Date.now();
      other.send(ApiKey.FETCH, 12, fetchRequest('wire-rt', 0, 3, 5000));
      await new Promise((r) => setTimeout(r, 200));
      await client.call(ApiKey.PRODUCE, 9, produceRequest('wire-rt', 0, buildBatch([{ value: 'late' }])));
      const waited = await other.receive();
      assert.ok(Date.now() - started < 4000, 'the fetch completed when data arrived, not at its timeout');
      assert.ok(waited.responses[0].partitions[0].records.length > 0);
    } finally {
      other.close();
    }
  });

  it('rejects a batch with a wrong CRC with CORRUPT_MESSAGE and keeps the log unchanged', async () => {
    const batch = buildBatch([{ value: 'x' }]);
    batch[batch.length - 1]! ^= 0xff;
    const response = await client.call(ApiKey.PRODUCE, 9, produceRequest('wire-rt', 0, batch));
    assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.CORRUPT_MESSAGE);
    const offsets = await client.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: 'wire-rt',
          partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }],
        },
      ],
      timeoutMs: 1000,
    });
    assert.equal(offsets.topics[0].partitions[0].offset, 4n);
  });

  it('answers the log start offset as the earliest offset of an empty partition', async () => {
    await client.call(ApiKey.CREATE_TOPICS, 5, createTopicsRequest('empty-one', 1));
    const offsets = await client.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: 'empty-one',
          partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -2n, maxNumOffsets: 1 }],
        },
      ],
      timeoutMs: 1000,
    });
    assert.equal(offsets.topics[0].partitions[0].errorCode, ErrorCode.NONE);
    assert.equal(offsets.topics[0].partitions[0].offset, 0n);
  });

  it('refuses InitProducerId with a producer id but no epoch, or an epoch but no producer id', async () => {
    for (const [producerId, producerEpoch] of [
      [5n, -1],
      [-1n, 3],
    ] as const) {
      for (const transactionalId of [null, 'half-known']) {
        const init = await client.call(ApiKey.INIT_PRODUCER_ID, 4, {
          transactionalId,
          transactionTimeoutMs: 60000,
          producerId,
          producerEpoch,
        });
        assert.equal(init.errorCode, ErrorCode.INVALID_REQUEST);
        assert.equal(init.producerId, -1n);
      }
    }
  });

  it('answers duplicate idempotent batches with their original offsets and rejects sequence gaps', async () => {
    const init = await client.call(ApiKey.INIT_PRODUCER_ID, 4, {
      transactionalId: null,
      transactionTimeoutMs: 60000,
      producerId: -1n,
      producerEpoch: -1,
    });
    assert.equal(init.errorCode, ErrorCode.NONE);
    const producerId = Number(init.producerId);
    const batch = (seq: number) =>
      buildBatch([{ value: `s${seq}` }], { producerId, producerEpoch: 0, baseSequence: seq });
    const a = await client.call(ApiKey.PRODUCE, 9, produceRequest('wire-rt', 0, batch(0)));
    const again = await client.call(ApiKey.PRODUCE, 9, produceRequest('wire-rt', 0, batch(0)));
    assert.equal(again.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    assert.equal(
      again.responses[0].partitionResponses[0].baseOffset,
      a.responses[0].partitionResponses[0].baseOffset,
    );
    const gap = await client.call(ApiKey.PRODUCE, 9, produceRequest('wire-rt', 0, batch(5)));
    assert.equal(gap.responses[0].partitionResponses[0].errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    const described = await client.call(ApiKey.DESCRIBE_PRODUCERS, 0, {
      topics: [{ name: 'wire-rt', partitionIndexes: [0] }],
    });
    const producer = described.topics[0].partitions[0].activeProducers.find(
      (p: { producerId: bigint }) => p.producerId === BigInt(producerId),
    );
    assert.equal(producer.producerEpoch, 0);
    assert.equal(producer.lastSequence, 0, 'the rejected batch left the last sequence unchanged');
  });

  it('answers unknown partitions and invalid acks with their error codes', async () => {
    const unknown = await client.call(
      ApiKey.PRODUCE,
      9,
      produceRequest('no-such-topic', 0, buildBatch([{ value: 'x' }])),
    );
    assert.equal(unknown.responses[0].partitionResponses[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const acks = await client.call(
      ApiKey.PRODUCE,
      9,
      produceRequest('wire-rt', 0, buildBatch([{ value: 'x' }]), 2),
    );
    assert.equal(acks.responses[0].partitionResponses[0].errorCode, ErrorCode.INVALID_REQUIRED_ACKS);
  });

  it('an acks=0 produce that fails closes the connection; one that succeeds keeps it and its records', async () => {
    const producer = await WireClient.connect(broker.host, broker.port);
    try {
      producer.raw.sendFrame(
        WireClient.encode(
          ApiKey.PRODUCE,
          9,
          1,
          produceRequest('wire-rt', 0, buildBatch([{ value: 'quiet' }]), 0),
        ),
      );
      const meta = await producer.call(ApiKey.METADATA, 9, {
        topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'wire-rt' }],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      assert.equal(
        meta.topics[0].errorCode,
        ErrorCode.NONE,
        'a successful acks=0 produce keeps the connection',
      );
      const end = await client.call(ApiKey.LIST_OFFSETS, 7, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [
          {
            name: 'wire-rt',
            partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }],
          },
        ],
      });
      const hw = end.topics[0].partitions[0].offset;
      const fetched = await client.call(ApiKey.FETCH, 12, fetchRequest('wire-rt', 0, Number(hw) - 1));
      const records = readRecords(fetched.responses[0].partitions[0].records, 0);
      assert.equal(
        records[records.length - 1]!.value?.toString(),
        'quiet',
        'the acks=0 records were appended',
      );
      producer.raw.sendFrame(
        WireClient.encode(
          ApiKey.PRODUCE,
          9,
          2,
          produceRequest('no-such-topic', 0, buildBatch([{ value: 'x' }]), 0),
        ),
      );
      assert.equal(await producer.raw.waitClosed(5000), true, 'the broker closed the connection');
    } finally {
      producer.close();
    }
  });

  it('creates, grows and deletes topics with Kafka error codes for bad requests', async () => {
    const bad = await client.call(
      ApiKey.CREATE_TOPICS,
      5,
      createTopicsRequest('bad-config', 1, [{ name: 'retention.ms', value: 'soon' }]),
    );
    assert.equal(bad.topics[0].errorCode, ErrorCode.INVALID_CONFIG);
    const made = await client.call(
      ApiKey.CREATE_TOPICS,
      5,
      createTopicsRequest('grow-me', 1, [{ name: 'retention.ms', value: '1000' }]),
    );
    assert.equal(made.topics[0].errorCode, ErrorCode.NONE);
    assert.equal(
      made.topics[0].configs.find((c: { name: string }) => c.name === 'retention.ms').value,
      '1000',
    );
    const again = await client.call(ApiKey.CREATE_TOPICS, 5, createTopicsRequest('grow-me', 1));
    assert.equal(again.topics[0].errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
    const grown = await client.call(ApiKey.CREATE_PARTITIONS, 2, {
      topics: [{ name: 'grow-me', count: 3, assignments: null }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(grown.results[0].errorCode, ErrorCode.NONE);
    const shrink = await client.call(ApiKey.CREATE_PARTITIONS, 2, {
      topics: [{ name: 'grow-me', count: 2, assignments: null }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(shrink.results[0].errorCode, ErrorCode.INVALID_PARTITIONS);
    const produced = await client.call(
      ApiKey.PRODUCE,
      9,
      produceRequest('grow-me', 2, buildBatch([{ value: 'x' }])),
    );
    assert.equal(produced.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    const deleted = await client.call(ApiKey.DELETE_TOPICS, 4, {
      topics: [],
      topicNames: ['grow-me'],
      timeoutMs: 5000,
    });
    assert.equal(deleted.responses[0].errorCode, ErrorCode.NONE);
    const gone = await client.call(
      ApiKey.PRODUCE,
      9,
      produceRequest('grow-me', 0, buildBatch([{ value: 'x' }])),
    );
    assert.equal(gone.responses[0].partitionResponses[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it("answers CreateTopics for an existing topic TOPIC_ALREADY_EXISTS whatever its configs, and a null config INVALID_CONFIG, in Kafka's order", async () => {
    const made = await client.call(ApiKey.CREATE_TOPICS, 5, createTopicsRequest('made-once', 1));
    assert.equal(made.topics[0].errorCode, ErrorCode.NONE);
    // Create-or-find callers (Kafka Connect's TopicAdmin) take TOPIC_ALREADY_EXISTS as "found": Kafka's
    // ZkAdminManager looks the topic up before anything else of the request, configs included.
    const results = async (configs: { name: string; value: string | null }[]) => {
      const response = await client.call(ApiKey.CREATE_TOPICS, 5, {
        topics: [
          { name: 'made-once', numPartitions: 1, replicationFactor: 1, assignments: [], configs },
          { name: 'null-config', numPartitions: 1, replicationFactor: 1, assignments: [], configs },
        ],
        timeoutMs: 5000,
        validateOnly: false,
      });
      return response.topics.map((t: { name: string; errorCode: number; errorMessage: string | null }) => [
        t.name,
        t.errorCode,
        t.errorMessage,
      ]);
    };
    assert.deepEqual(await results([{ name: 'no.such.key', value: '1' }]), [
      ['made-once', ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'made-once' already exists."],
      ['null-config', ErrorCode.INVALID_CONFIG, 'Unknown topic config name: no.such.key'],
    ]);
    assert.deepEqual(
      await results([
        { name: 'retention.ms', value: null },
        { name: 'segment.ms', value: '60000' },
        { name: 'cleanup.policy', value: null },
      ]),
      [
        ['made-once', ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'made-once' already exists."],
        [
          'null-config',
          ErrorCode.INVALID_CONFIG,
          'Null value not supported for topic configs: retention.ms,cleanup.policy',
        ],
      ],
    );
  });

  it('CreateTopics v5+: a topic not created answers configs [] and -1 partitions and replicas, as Kafka', async () => {
    const made = await client.call(ApiKey.CREATE_TOPICS, 5, createTopicsRequest('there-already', 1));
    assert.equal(made.topics[0].errorCode, ErrorCode.NONE);
    for (const version of [5, 7]) {
      const response = await client.call(ApiKey.CREATE_TOPICS, version, {
        topics: [
          createTopicsRequest('there-already', 1).topics[0],
          createTopicsRequest('not-made', 1, [{ name: 'retention.ms', value: 'soon' }]).topics[0],
        ],
        timeoutMs: 5000,
        validateOnly: false,
      });
      const results = response.topics.map(
        (t: {
          name: string;
          errorCode: number;
          numPartitions: number;
          replicationFactor: number;
          configs: unknown;
        }) => [t.name, t.errorCode, t.numPartitions, t.replicationFactor, t.configs],
      );
      assert.deepEqual(
        results,
        [
          ['there-already', ErrorCode.TOPIC_ALREADY_EXISTS, -1, -1, []],
          ['not-made', ErrorCode.INVALID_CONFIG, -1, -1, []],
        ],
        `v${version}`,
      );
    }
  });

  it('describes, alters and incrementally alters topic and broker configs with their sources', async () => {
    await client.call(
      ApiKey.CREATE_TOPICS,
      5,
      createTopicsRequest('configured', 1, [{ name: 'retention.ms', value: '5000' }]),
    );
    const describe = (name: string, type = 2) =>
      client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
        resources: [{ resourceType: type, resourceName: name, configurationKeys: null }],
        includeSynonyms: true,
        includeDocumentation: false,
      });
    type Described = {
      results: { configs: { name: string; value: string | null; configSource: number }[] }[];
    };
    const entry = (response: Described, key: string) =>
      response.results[0]!.configs.find((c) => c.name === key)!;
    const before = await describe('configured');
    assert.equal(entry(before, 'retention.ms').value, '5000');
    assert.equal(entry(before, 'retention.ms').configSource, 1, 'DYNAMIC_TOPIC_CONFIG');
    assert.equal(entry(before, 'segment.bytes').configSource, 5, "DEFAULT_CONFIG, Kafka's number 5");
    const incremental = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: 2,
          resourceName: 'configured',
          configs: [
            { name: 'cleanup.policy', configOperation: 0, value: 'compact' },
            { name: 'retention.ms', configOperation: 1, value: null },
          ],
        },
      ],
      validateOnly: false,
    });
    assert.equal(incremental.responses[0].errorCode, ErrorCode.NONE);
    const after = await describe('configured');
    assert.equal(entry(after, 'cleanup.policy').value, 'compact');
    assert.notEqual(entry(after, 'retention.ms').configSource, 1, 'the override was deleted');
    const bad = await client.call(ApiKey.ALTER_CONFIGS, 1, {
      resources: [
        { resourceType: 2, resourceName: 'configured', configs: [{ name: 'no.such.key', value: '1' }] },
      ],
      validateOnly: false,
    });
    assert.equal(bad.responses[0].errorCode, ErrorCode.INVALID_CONFIG);
    const missing = await describe('no-such-topic');
    assert.equal(missing.results[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const brokerConfigs = await describe('0', 4);
    assert.equal(brokerConfigs.results[0].errorCode, ErrorCode.NONE);
    assert.equal(entry(brokerConfigs, 'num.partitions').value, '2');
    const wrongBroker = await describe('7', 4);
    assert.equal(wrongBroker.results[0].errorCode, ErrorCode.INVALID_REQUEST);
  });

  it('a resource named twice in (Incremental)AlterConfigs is INVALID_REQUEST; the others apply', async () => {
    for (const name of ['named-twice', 'named-once']) {
      const made = await client.call(ApiKey.CREATE_TOPICS, 5, createTopicsRequest(name, 1));
      assert.equal(made.topics[0].errorCode, ErrorCode.NONE);
    }
    const retentionMs = async (topic: string) => {
      const described = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
        resources: [{ resourceType: 2, resourceName: topic, configurationKeys: ['retention.ms'] }],
        includeSynonyms: false,
        includeDocumentation: false,
      });
      return described.results[0].configs[0].value;
    };
    const untouched = await retentionMs('named-twice');
    const answers = (response: {
      responses: { resourceName: string; errorCode: number; errorMessage: string }[];
    }) => response.responses.map((r) => [r.resourceName, r.errorCode, r.errorMessage]);
    const refused = ['named-twice', ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.'];
    const incremental = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: ['named-twice', 'named-once', 'named-twice'].map((resourceName, i) => ({
        resourceType: 2,
        resourceName,
        configs: [{ name: 'retention.ms', configOperation: 0, value: String(1000 + i) }],
      })),
      validateOnly: false,
    });
    assert.deepEqual(answers(incremental), [refused, ['named-once', ErrorCode.NONE, null], refused]);
    const legacy = await client.call(ApiKey.ALTER_CONFIGS, 1, {
      resources: ['named-once', 'named-twice', 'named-twice'].map((resourceName, i) => ({
        resourceType: 2,
        resourceName,
        configs: [{ name: 'retention.ms', value: String(2000 + i) }],
      })),
      validateOnly: false,
    });
    assert.deepEqual(answers(legacy), [['named-once', ErrorCode.NONE, null], refused, refused]);
    assert.equal(await retentionMs('named-twice'), untouched, 'neither change of the repeated topic applied');
    assert.equal(await retentionMs('named-once'), '2000');
  });

  it('describes every config for an empty list of names, as for null (Kafka ConfigHelper)', async () => {
    await client.call(ApiKey.CREATE_TOPICS, 5, createTopicsRequest('described-all', 1));
    const names = async (type: number, name: string, keys: string[] | null): Promise<string[]> => {
      const response = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
        resources: [{ resourceType: type, resourceName: name, configurationKeys: keys }],
        includeSynonyms: false,
        includeDocumentation: false,
      });
      assert.equal(response.results[0].errorCode, ErrorCode.NONE);
      return response.results[0].configs.map((c: { name: string }) => c.name);
    };
    for (const [type, name] of [
      [2, 'described-all'],
      [4, '0'],
    ] as const) {
      const all = await names(type, name, null);
      assert.ok(all.length > 20, `${all.length} configs for null`);
      assert.deepEqual(await names(type, name, []), all);
    }
  });

  it('refuses APPEND and SUBTRACT on a key that is not a list with INVALID_CONFIG, as Kafka 3.3+ does', async () => {
    await client.call(
      ApiKey.CREATE_TOPICS,
      5,
      createTopicsRequest('appended', 1, [{ name: 'retention.ms', value: '5000' }]),
    );
    const APPEND = 2;
    const SUBTRACT = 3;
    for (const [resourceType, resourceName, name] of [
      [2, 'appended', 'retention.ms'],
      [4, '0', 'log.cleaner.threads'],
      [4, '', 'log.retention.ms'],
    ] as const) {
      for (const configOperation of [APPEND, SUBTRACT]) {
        const response = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
          resources: [{ resourceType, resourceName, configs: [{ name, configOperation, value: '1' }] }],
          validateOnly: false,
        });
        const verb = configOperation === APPEND ? 'append' : 'subtract';
        assert.deepEqual(
          [response.responses[0].errorCode, response.responses[0].errorMessage],
          [ErrorCode.INVALID_CONFIG, `Config value ${verb} is not allowed for config key: ${name}`],
          `${verb} on ${name}`,
        );
      }
    }
    const described = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: 2, resourceName: 'appended', configurationKeys: ['retention.ms'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.equal(described.results[0].configs[0].value, '5000', 'the refused change left the value alone');
  });

  it('deletes records below an offset, then serves from the new log start', async () => {
    await client.call(ApiKey.CREATE_TOPICS, 5, createTopicsRequest('trim-me', 1));
    await client.call(
      ApiKey.PRODUCE,
      9,
      produceRequest('trim-me', 0, buildBatch([{ value: 'a' }, { value: 'b' }])),
    );
    await client.call(ApiKey.PRODUCE, 9, produceRequest('trim-me', 0, buildBatch([{ value: 'c' }])));
    const deleted = await client.call(ApiKey.DELETE_RECORDS, 2, {
      topics: [{ name: 'trim-me', partitions: [{ partitionIndex: 0, offset: 2n }] }],
      timeoutMs: 5000,
    });
    assert.equal(deleted.topics[0].partitions[0].errorCode, ErrorCode.NONE);
    assert.equal(deleted.topics[0].partitions[0].lowWatermark, 2n);
    const below = await client.call(ApiKey.FETCH, 12, fetchRequest('trim-me', 0, 0));
    assert.equal(below.responses[0].partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    assert.equal(below.responses[0].partitions[0].logStartOffset, 2n);
    const tooFar = await client.call(ApiKey.DELETE_RECORDS, 2, {
      topics: [{ name: 'trim-me', partitions: [{ partitionIndex: 0, offset: 99n }] }],
      timeoutMs: 5000,
    });
    assert.equal(tooFar.topics[0].partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  });

  it('describes the cluster and its log directory', async () => {
    const cluster = await client.call(ApiKey.DESCRIBE_CLUSTER, 1, {
      includeClusterAuthorizedOperations: false,
      endpointType: 1,
    });
    assert.equal(cluster.errorCode, ErrorCode.NONE);
    assert.equal(cluster.controllerId, 0);
    assert.deepEqual(
      cluster.brokers.map((b: { brokerId: number; port: number }) => [b.brokerId, b.port]),
      [[0, broker.port]],
    );
    assert.match(cluster.clusterId, /^[A-Za-z0-9_-]{22}$/);
    // KRaft controllers asked of a broker: the wrong endpoint type; an unknown type: unsupported. Either way the
    // answer names nothing of the cluster, as Kafka's.
    for (const [endpointType, errorCode] of [
      [2, ErrorCode.MISMATCHED_ENDPOINT_TYPE],
      [7, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE],
    ]) {
      const refused = await client.call(ApiKey.DESCRIBE_CLUSTER, 1, {
        includeClusterAuthorizedOperations: true,
        endpointType,
      });
      assert.equal(refused.errorCode, errorCode, `endpoint type ${endpointType}`);
      assert.equal(refused.clusterId, '');
      assert.equal(refused.controllerId, -1);
      assert.deepEqual(refused.brokers, []);
    }
    const dirs = await client.call(ApiKey.DESCRIBE_LOG_DIRS, 4, { topics: null });
    assert.equal(dirs.results[0].logDir, broker.dataDir);
    const rt = dirs.results[0].topics.find((t: { name: string }) => t.name === 'wire-rt');
    assert.ok(rt.partitions[0].partitionSize > 0n);
    assert.ok(dirs.results[0].usableBytes > 0n);
  });

  it('closes a connection that sends garbage, an oversized frame or an unsupported version, and keeps serving others', async () => {
    const cases: Buffer[] = [
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
      Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 0]),
      Buffer.from([0xff, 0xff, 0xff, 0xf0]),
      frameOf(withVersion(WireClient.encode(ApiKey.METADATA, 1, 1, metadataAll()), 99)),
      frameOf(Buffer.from([0x03, 0xe7, 0, 0, 0, 0, 0, 1, 0, 0])),
      frameOf(
        WireClient.encode(
          ApiKey.PRODUCE,
          9,
          1,
          produceRequest('wire-rt', 0, buildBatch([{ value: 'x' }])),
        ).subarray(0, 20),
      ),
    ];
    for (const bytes of cases) {
      const raw = await RawClient.connect(broker.host, broker.port);
      await raw.sendRaw(bytes);
      assert.equal(await raw.waitClosed(5000), true, `closed after ${bytes.subarray(0, 8).toString('hex')}`);
    }
    const still = await client.call(ApiKey.METADATA, 1, {
      topics: [],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.equal(still.brokers.length, 1, 'the shared connection still works');
  });
});

function metadataAll() {
  return {
    topics: null,
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  };
}

/** The same frame claiming another API version, as a client probing for a newer version would send. */
function withVersion(frame: Buffer, version: number): Buffer {
  frame.writeInt16BE(version, 2);
  return frame;
}

function frameOf(body: Buffer): Buffer {
  const out = Buffer.alloc(4 + body.length);
  out.writeInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

function frame99(): Buffer {
  // ApiVersions v99 with a v2 request header (flexible): key, version, correlation id, client id, no tags.
  const body = Buffer.alloc(8 + 2 + 1 + 2);
  body.writeInt16BE(ApiKey.API_VERSIONS, 0);
  body.writeInt16BE(99, 2);
  body.writeInt32BE(7, 4);
  body.writeInt16BE(-1, 8);
  body[10] = 0;
  body[11] = 1;
  body[12] = 1;
  return body;
}
