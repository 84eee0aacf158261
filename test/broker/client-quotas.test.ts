// Client quotas through the wire on one broker: AlterClientQuotas / DescribeClientQuotas with Kafka's validation
// and precedence, producer_byte_rate and consumer_byte_rate answered with throttle_time_ms in Produce and Fetch and
// enforced by muting the connection, request_percentage, controller_mutation_rate (KIP-599), and Brook's client
// waiting out the throttle time. The broker runs quota.window.num=2 (windows of 1 s) so that a quota bites after
// about a second of traffic instead of ten.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Writer } from '../../src/protocol/primitives/index.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopic, fetchBody, produceBatch, WireClient } from '../helpers/wire-client.js';

const PAYLOAD = buildBatch(Array.from({ length: 20 }, () => ({ value: 'x'.repeat(1000) })));
const ZERO_ID = 'AAAAAAAAAAAAAAAAAAAAAA';
const SMALL_PAYLOAD = buildBatch([{ value: 'x'.repeat(1200) }]);

function produceBody(topic: string) {
  return {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: PAYLOAD }] }],
  };
}

describe('client quotas', () => {
  let broker: BrokerProcess;
  let admin: Admin;
  let setup: WireClient;

  before(async () => {
    broker = await startBroker({
      overrides: {
        'quota.window.num': 2,
        'controller.quota.window.num': 2,
        // Small internal topics: a FindCoordinator that creates one takes that many mutations (see below).
        'offsets.topic.num.partitions': 3,
        'transaction.state.log.num.partitions': 3,
      },
    });
    admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'quota-admin' });
    setup = await WireClient.connect(broker.host, broker.port);
    await createTopic(setup, 'quota-topic', { numPartitions: 1, replicationFactor: 1 });
  });
  after(async () => {
    setup?.close();
    await admin?.close();
    await broker?.stop();
  });

  it('stores quotas per entity and describes them with exact, default and specified filters', async () => {
    const results = await admin.alterClientQuotas([
      { entity: { user: 'alice' }, ops: [{ key: 'producer_byte_rate', value: 1048576 }] },
      {
        entity: { user: 'alice', clientId: 'app' },
        ops: [
          { key: 'consumer_byte_rate', value: 2048 },
          { key: 'request_percentage', value: 12.5 },
        ],
      },
      { entity: { clientId: null }, ops: [{ key: 'controller_mutation_rate', value: 5 }] },
    ]);
    assert.deepEqual(
      results.map((r) => r.error),
      [null, null, null],
    );
    const alice = await admin.describeClientQuotas([{ entityType: 'user', match: { name: 'alice' } }], {
      strict: true,
    });
    assert.deepEqual(alice, [{ entity: { user: 'alice' }, values: { producer_byte_rate: 1048576 } }]);
    const aliceAny = await admin.describeClientQuotas([{ entityType: 'user', match: { name: 'alice' } }]);
    assert.equal(aliceAny.length, 2, 'not strict: alice and alice/app');
    const both = await admin.describeClientQuotas(
      [
        { entityType: 'user', match: 'any' },
        { entityType: 'client-id', match: 'any' },
      ],
      { strict: true },
    );
    assert.deepEqual(both, [
      {
        entity: { user: 'alice', clientId: 'app' },
        values: { consumer_byte_rate: 2048, request_percentage: 12.5 },
      },
    ]);
    const defaults = await admin.describeClientQuotas([{ entityType: 'client-id', match: { name: null } }], {
      strict: true,
    });
    assert.deepEqual(defaults, [{ entity: { clientId: null }, values: { controller_mutation_rate: 5 } }]);
    // Removing the last key leaves nothing to describe for that entity.
    await admin.alterClientQuotas([
      { entity: { clientId: null }, ops: [{ key: 'controller_mutation_rate', value: null }] },
    ]);
    assert.deepEqual(
      await admin.describeClientQuotas([{ entityType: 'client-id', match: { name: null } }], {
        strict: true,
      }),
      [],
    );
  });

  it('answers invalid alterations per entity with Kafka errors and writes nothing for them', async () => {
    const response = await setup.call(ApiKey.ALTER_CLIENT_QUOTAS, 1, {
      entries: [
        { entity: [], ops: [{ key: 'producer_byte_rate', value: 1, remove: false }] },
        {
          entity: [{ entityType: 'user', entityName: 'bob' }],
          ops: [{ key: 'not_a_quota', value: 1, remove: false }],
        },
        {
          entity: [{ entityType: 'user', entityName: 'bob' }],
          ops: [{ key: 'producer_byte_rate', value: 1.5, remove: false }],
        },
        {
          entity: [{ entityType: 'client-id', entityName: 'c' }],
          ops: [{ key: 'consumer_byte_rate', value: 0, remove: false }],
        },
        { entity: [{ entityType: 'group', entityName: 'g' }], ops: [] },
        { entity: [{ entityType: 'user', entityName: '' }], ops: [] },
        {
          entity: [
            { entityType: 'user', entityName: 'a' },
            { entityType: 'user', entityName: 'b' },
          ],
          ops: [],
        },
      ],
      validateOnly: false,
    });
    const errors = response.entries.map((e: { errorCode: number; errorMessage: string }) => [
      e.errorCode,
      e.errorMessage,
    ]);
    assert.deepEqual(errors, [
      [ErrorCode.INVALID_REQUEST, 'Invalid empty client quota entity'],
      [ErrorCode.INVALID_REQUEST, 'Invalid configuration key not_a_quota'],
      [ErrorCode.INVALID_REQUEST, 'producer_byte_rate cannot be a fractional value.'],
      [ErrorCode.INVALID_REQUEST, 'Quota consumer_byte_rate must be greater than 0'],
      [ErrorCode.INVALID_REQUEST, 'Unhandled client quota entity type: group'],
      [ErrorCode.INVALID_REQUEST, 'Empty user not supported'],
      [ErrorCode.INVALID_REQUEST, 'Invalid client quota entity, duplicate entity entry user'],
    ]);
    const validateOnly = await admin.alterClientQuotas(
      [{ entity: { user: 'carol' }, ops: [{ key: 'producer_byte_rate', value: 100 }] }],
      { validateOnly: true },
    );
    assert.equal(validateOnly[0]!.error, null);
    assert.deepEqual(
      await admin.describeClientQuotas([{ entityType: 'user', match: { name: 'carol' } }], { strict: true }),
      [],
      'validate_only writes nothing',
    );
    const badFilter = await setup.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, {
      components: [
        { entityType: 'user', matchType: 2, match: null },
        { entityType: 'user', matchType: 2, match: null },
      ],
      strict: false,
    });
    assert.equal(badFilter.errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal(badFilter.entries, null);
    // An exact match needs a name; the default entity is asked for with match type DEFAULT.
    const exactNull = await setup.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, {
      components: [{ entityType: 'client-id', matchType: 0, match: null }],
      strict: false,
    });
    assert.equal(exactNull.errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal(exactNull.errorMessage, 'Request specified MATCH_TYPE_EXACT, but set match string to null.');
    const custom = await setup.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 0, {
      components: [{ entityType: 'tenant', matchType: 2, match: null }],
      strict: false,
    });
    assert.equal(custom.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  });

  it('throttles a producer over producer_byte_rate and mutes its connection, while another producer is not', async () => {
    await admin.alterClientQuotas([
      { entity: { clientId: 'slow-producer' }, ops: [{ key: 'producer_byte_rate', value: 30000 }] },
    ]);
    const slow = await WireClient.connect(broker.host, broker.port, 'slow-producer');
    const fast = await WireClient.connect(broker.host, broker.port, 'fast-producer');
    try {
      let throttleTimeMs = 0;
      let firstThrottled = -1;
      // Until the throttle is long enough to measure the mute against.
      for (let i = 0; i < 30 && throttleTimeMs < 200; i++) {
        const r = await slow.call(ApiKey.PRODUCE, 9, produceBody('quota-topic'));
        assert.equal(r.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
        throttleTimeMs = r.throttleTimeMs;
        if (throttleTimeMs > 0 && firstThrottled < 0) firstThrottled = i;
      }
      assert.ok(firstThrottled > 0, 'Produce v9 answers throttle_time_ms once over the quota, not before');
      assert.ok(throttleTimeMs >= 200);
      // The broker reads nothing more from the throttled connection until the time has passed.
      const sentAt = performance.now();
      await slow.call(ApiKey.PRODUCE, 9, produceBody('quota-topic'));
      const waitedMs = performance.now() - sentAt;
      assert.ok(waitedMs >= throttleTimeMs * 0.8, `muted ${waitedMs.toFixed(0)} ms of ${throttleTimeMs}`);
      for (let i = 0; i < 10; i++) {
        const r = await fast.call(ApiKey.PRODUCE, 9, produceBody('quota-topic'));
        assert.equal(r.throttleTimeMs, 0, 'a client id without a quota is never throttled');
      }
    } finally {
      slow.close();
      fast.close();
    }
  });

  it("counts a Produce request's header and body, not its size prefix (Kafka's request.sizeInBytes)", async () => {
    await admin.alterClientQuotas([
      { entity: { clientId: 'sized-producer' }, ops: [{ key: 'producer_byte_rate', value: 1000 }] },
    ]);
    const body = {
      ...produceBody('quota-topic'),
      topicData: [{ name: 'quota-topic', partitionData: [{ index: 0, records: SMALL_PAYLOAD }] }],
    };
    const frameBytes = WireClient.encode(ApiKey.PRODUCE, 9, 1, body, 'sized-producer').length;
    const client = await WireClient.connect(broker.host, broker.port, 'sized-producer');
    try {
      // A first record on a fresh sensor is spread over (quota.window.num - 1) windows of 1 s: with a bound of
      // 1000 B/s the throttle time is the bytes counted less 1000, to the millisecond.
      const r = await client.call(ApiKey.PRODUCE, 9, body);
      assert.equal(r.throttleTimeMs, frameBytes - 1000);
    } finally {
      client.close();
    }
  });

  it('answers an old Produce version at once and mutes after, as Kafka does since KIP-219', async () => {
    await admin.alterClientQuotas([
      { entity: { clientId: 'old-producer' }, ops: [{ key: 'producer_byte_rate', value: 30000 }] },
    ]);
    // Both connections share the client id's budget: the first uses it up, the second is over it from its start.
    const filler = await WireClient.connect(broker.host, broker.port, 'old-producer');
    const old = await WireClient.connect(broker.host, broker.port, 'old-producer');
    try {
      let fillerThrottleMs = 0;
      for (let i = 0; i < 30 && fillerThrottleMs < 1000; i++)
        fillerThrottleMs = (await filler.call(ApiKey.PRODUCE, 9, produceBody('quota-topic'))).throttleTimeMs;
      assert.ok(fillerThrottleMs >= 1000);
      // Produce v5 predates the client honouring throttle_time_ms; Kafka still answers it at once.
      let sentAt = performance.now();
      const r = await old.call(ApiKey.PRODUCE, 5, produceBody('quota-topic'));
      const answeredMs = performance.now() - sentAt;
      assert.ok(r.throttleTimeMs >= 1000, `throttle ${r.throttleTimeMs} ms`);
      assert.ok(
        answeredMs < r.throttleTimeMs / 2,
        `answered after ${answeredMs.toFixed(0)} of ${r.throttleTimeMs} ms`,
      );
      // Then reads nothing more from the connection for that time.
      sentAt = performance.now();
      await old.call(ApiKey.PRODUCE, 5, produceBody('quota-topic'));
      const mutedMs = performance.now() - sentAt;
      assert.ok(mutedMs >= r.throttleTimeMs * 0.8, `muted ${mutedMs.toFixed(0)} ms of ${r.throttleTimeMs}`);
    } finally {
      filler.close();
      old.close();
    }
  });

  it('throttles a consumer over consumer_byte_rate with an empty Fetch answer and throttle_time_ms', async () => {
    await admin.alterClientQuotas([
      // One batch (about 20 kB) fits in a window's worth; the second fetch goes over.
      { entity: { clientId: 'slow-consumer' }, ops: [{ key: 'consumer_byte_rate', value: 30000 }] },
    ]);
    const consumer = await WireClient.connect(broker.host, broker.port, 'slow-consumer');
    try {
      let throttled = null;
      let fetched = 0;
      for (let i = 0; i < 20 && throttled === null; i++) {
        const r = await consumer.call(ApiKey.FETCH, 12, fetchBody('quota-topic', 0, 0));
        if (r.throttleTimeMs > 0) throttled = r;
        else fetched += r.responses[0].partitions[0].records.length;
      }
      assert.ok(fetched > 0, 'fetches within the quota return data');
      assert.ok(throttled !== null, 'Fetch v12 answers throttle_time_ms once over the quota');
      assert.deepEqual(throttled.responses, [], 'a throttled fetch returns no data');
    } finally {
      consumer.close();
    }
  });

  it("counts a Fetch answer's encoded size, as Kafka's FetchContext.getResponseSize", async () => {
    await createTopic(setup, 'fetch-size-topic', { numPartitions: 1, replicationFactor: 1 });
    await produceBatch(setup, 'fetch-size-topic', SMALL_PAYLOAD);
    await admin.alterClientQuotas([
      { entity: { clientId: 'sized-consumer' }, ops: [{ key: 'consumer_byte_rate', value: 1000 }] },
    ]);
    // The answer the quota'd consumer would get, read by a client id without a quota.
    const reference = await WireClient.connect(broker.host, broker.port, 'sized-reference');
    const sized = await WireClient.connect(broker.host, broker.port, 'sized-consumer');
    try {
      const answer = await reference.call(ApiKey.FETCH, 12, fetchBody('fetch-size-topic', 0, 0));
      assert.equal(answer.responses[0].partitions[0].errorCode, ErrorCode.NONE);
      const w = new Writer();
      getApi(ApiKey.FETCH).encodeResponse(w, 12, answer);
      // Kafka's FetchResponse.sizeOf: 4 bytes and the message. On a fresh sensor with a bound of 1000 B/s over one
      // window of 1 s, the throttle time is the bytes counted less 1000, to the millisecond.
      const r = await sized.call(ApiKey.FETCH, 12, fetchBody('fetch-size-topic', 0, 0));
      assert.equal(r.throttleTimeMs, 4 + w.length - 1000);
    } finally {
      reference.close();
      sized.close();
    }
  });

  it('applies the most specific entity: user/client-id over user over client-id defaults', async () => {
    // ANONYMOUS is the principal of these PLAINTEXT connections.
    await admin.alterClientQuotas([
      { entity: { clientId: null }, ops: [{ key: 'producer_byte_rate', value: 1000 }] },
      { entity: { user: 'ANONYMOUS', clientId: 'vip' }, ops: [{ key: 'producer_byte_rate', value: 1e9 }] },
    ]);
    const vip = await WireClient.connect(broker.host, broker.port, 'vip');
    const other = await WireClient.connect(broker.host, broker.port, 'someone-else');
    try {
      for (let i = 0; i < 5; i++) {
        const r = await vip.call(ApiKey.PRODUCE, 9, produceBody('quota-topic'));
        assert.equal(r.throttleTimeMs, 0, '<user>/<client-id> wins over /config/clients/<default>');
      }
      const r = await other.call(ApiKey.PRODUCE, 9, produceBody('quota-topic'));
      assert.ok(r.throttleTimeMs > 0, 'the client-id default applies to everyone else');
    } finally {
      vip.close();
      other.close();
      await admin.alterClientQuotas([
        { entity: { clientId: null }, ops: [{ key: 'producer_byte_rate', value: null }] },
        { entity: { user: 'ANONYMOUS', clientId: 'vip' }, ops: [{ key: 'producer_byte_rate', value: null }] },
      ]);
    }
  });

  it('refuses topic creation over controller_mutation_rate with THROTTLING_QUOTA_EXCEEDED (v6+)', async () => {
    await admin.alterClientQuotas([
      { entity: { clientId: 'mutator' }, ops: [{ key: 'controller_mutation_rate', value: 1 }] },
    ]);
    const create = async (names: string[], version: number) => {
      // A new connection each time: the broker mutes a throttled one, which would make the test wait it out.
      const client = await WireClient.connect(broker.host, broker.port, 'mutator');
      try {
        return await client.call(ApiKey.CREATE_TOPICS, version, {
          topics: names.map((name) => ({
            name,
            numPartitions: 10,
            replicationFactor: 1,
            assignments: [],
            configs: [],
          })),
          timeoutMs: 10_000,
          validateOnly: false,
        });
      } finally {
        client.close();
      }
    };
    // A burst of 2 tokens (2 windows of 1 s at 1/s): the first topic takes 10 and leaves the bucket at -8, which
    // takes 8 s to refill; the second topic of the same request finds it empty.
    const strict = await create(['mutation-1', 'mutation-2'], 7);
    assert.deepEqual(
      strict.topics.map((t: { errorCode: number }) => t.errorCode),
      [ErrorCode.NONE, ErrorCode.THROTTLING_QUOTA_EXCEEDED],
    );
    assert.ok(strict.throttleTimeMs > 5000, `throttle ${strict.throttleTimeMs} ms for 8 missing tokens`);
    // Before v6 Kafka serves every topic and only throttles.
    const permissive = await create(['mutation-3', 'mutation-4'], 5);
    assert.deepEqual(
      permissive.topics.map((t: { errorCode: number }) => t.errorCode),
      [ErrorCode.NONE, ErrorCode.NONE],
    );
    assert.ok(permissive.throttleTimeMs > strict.throttleTimeMs, 'the debt grew');
  });

  it('answers a strict mutation that empties the bucket without throttle time, as Kafka (KIP-599)', async () => {
    await admin.alterClientQuotas([
      { entity: { clientId: 'strict-mutator' }, ops: [{ key: 'controller_mutation_rate', value: 1 }] },
    ]);
    const create = async (name: string, numPartitions: number) => {
      const client = await WireClient.connect(broker.host, broker.port, 'strict-mutator');
      try {
        const r = await client.call(ApiKey.CREATE_TOPICS, 7, {
          topics: [{ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] }],
          timeoutMs: 10_000,
          validateOnly: false,
        });
        return { errorCode: r.topics[0].errorCode, throttleTimeMs: r.throttleTimeMs };
      } finally {
        client.close();
      }
    };
    // A burst of 2 tokens (2 windows of 1 s at 1/s): 30 partitions are taken from a bucket that is not empty and
    // leave it at -28. Strict quotas check before taking, so this request is neither refused nor throttled.
    assert.deepEqual(await create('strict-1', 30), { errorCode: ErrorCode.NONE, throttleTimeMs: 0 });
    // The next one finds the bucket empty: refused, with the time to refill it (28 s less the time between the two;
    // the slow rate keeps a loaded machine's delay between them from refilling the bucket).
    const refused = await create('strict-2', 1);
    assert.equal(refused.errorCode, ErrorCode.THROTTLING_QUOTA_EXCEEDED);
    assert.ok(
      refused.throttleTimeMs > 18_000 && refused.throttleTimeMs <= 28_000,
      `${refused.throttleTimeMs} ms`,
    );
  });

  it("counts topics auto-created by a client's Metadata against its controller_mutation_rate, as Kafka", async () => {
    await admin.alterClientQuotas([
      { entity: { clientId: 'auto-creator' }, ops: [{ key: 'controller_mutation_rate', value: 1 }] },
    ]);
    const client = await WireClient.connect(broker.host, broker.port, 'auto-creator');
    try {
      // Three topics of one partition (num.partitions) from a bucket of 2 tokens leave it at -1.
      await client.call(ApiKey.METADATA, 9, {
        topics: ['auto-quota-1', 'auto-quota-2', 'auto-quota-3'].map((name) => ({ name, topicId: ZERO_ID })),
        allowAutoTopicCreation: true,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      const r = await client.call(ApiKey.CREATE_TOPICS, 7, {
        topics: [
          { name: 'auto-quota-4', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
        ],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      assert.equal(r.topics[0].errorCode, ErrorCode.THROTTLING_QUOTA_EXCEEDED, 'the bucket was emptied');
    } finally {
      client.close();
    }
  });

  for (const [keyType, internalTopic] of [
    [0, '__consumer_offsets'],
    [1, '__transaction_state'],
  ] as const) {
    it(`counts ${internalTopic} made by a FindCoordinator against the client's controller_mutation_rate`, async () => {
      // Kafka's handleFindCoordinatorRequest creates the topic through AutoTopicCreationManager with the
      // requester's permissive quota: created, the answer not throttled, the partitions recorded.
      const clientId = `coordinator-finder-${keyType}`;
      await admin.alterClientQuotas([
        { entity: { clientId }, ops: [{ key: 'controller_mutation_rate', value: 1 }] },
      ]);
      const client = await WireClient.connect(broker.host, broker.port, clientId);
      try {
        // Three partitions from a bucket of 2 tokens leave it at -1.
        const found = await client.call(ApiKey.FIND_COORDINATOR, 3, { key: 'finder', keyType });
        assert.equal(found.throttleTimeMs, 0);
        const m = await client.call(ApiKey.METADATA, 9, {
          topics: [{ name: internalTopic, topicId: ZERO_ID }],
          allowAutoTopicCreation: false,
          includeClusterAuthorizedOperations: false,
          includeTopicAuthorizedOperations: false,
        });
        assert.equal(m.topics[0].partitions.length, 3, `${internalTopic} was created`);
        const r = await client.call(ApiKey.CREATE_TOPICS, 7, {
          topics: [
            {
              name: `after-finder-${keyType}`,
              numPartitions: 1,
              replicationFactor: 1,
              assignments: [],
              configs: [],
            },
          ],
          timeoutMs: 10_000,
          validateOnly: false,
        });
        assert.equal(r.topics[0].errorCode, ErrorCode.THROTTLING_QUOTA_EXCEEDED, 'the bucket was emptied');
      } finally {
        client.close();
      }
    });
  }

  it('throttles over request_percentage', async () => {
    await admin.alterClientQuotas([
      { entity: { clientId: 'busy' }, ops: [{ key: 'request_percentage', value: 0.01 }] },
    ]);
    const client = await WireClient.connect(broker.host, broker.port, 'busy');
    try {
      let throttleTimeMs = 0;
      for (let i = 0; i < 2000 && throttleTimeMs === 0; i++) {
        const r = await client.call(ApiKey.METADATA, 9, {
          topics: null,
          allowAutoTopicCreation: false,
          includeClusterAuthorizedOperations: false,
          includeTopicAuthorizedOperations: false,
        });
        throttleTimeMs = r.throttleTimeMs;
      }
      assert.ok(
        throttleTimeMs > 0,
        'Metadata answers throttle_time_ms once the handler time exceeds the quota',
      );
      assert.ok(throttleTimeMs <= 1000, 'a request quota throttles for at most one window');
    } finally {
      client.close();
    }
  });

  it("Brook's producer waits out throttle_time_ms and completes", async () => {
    await admin.alterClientQuotas([
      { entity: { clientId: 'brook-slow' }, ops: [{ key: 'producer_byte_rate', value: 50000 }] },
    ]);
    const producer = new Producer({
      bootstrapServers: broker.bootstrap,
      clientId: 'brook-slow',
      lingerMs: 0,
      batchSize: 16384,
    });
    try {
      const value = Buffer.alloc(10_000, 1);
      const startedAt = performance.now();
      // One at a time: a throttle time holds back the requests after the one it answers.
      for (let i = 0; i < 20; i++) await producer.send({ topic: 'quota-topic', value });
      const seconds = (performance.now() - startedAt) / 1000;
      // 200 kB at 50 kB/s, about the first second's worth free: at least about 3 s.
      assert.ok(seconds >= 2, `200 kB at 50 kB/s took ${seconds.toFixed(2)} s`);
    } finally {
      await producer.close();
    }
  });
});
