// default.production.exception.handler (Kafka Streams 3.9) through a broker: a send the broker refuses
// (MESSAGE_TOO_LARGE, Kafka's RecordTooLargeException) reaches the handler with the serialized record and the
// sink's context; CONTINUE skips it and the application goes on, the default FAILs the thread with Kafka's
// message; a sink's serializer error reaches handleSerializationException. Next to it, the errors Kafka keeps
// from the processing exception handler (a missing serde, found by Kafka before any record) and the error a
// processor throws while a cache flushes at commit, which reaches the uncaught exception handler as Kafka's
// FailedProcessingException. The fine points run in the test driver.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import {
  ClientStateError,
  ConnectionError,
  DeliveryTimeoutError,
  KafkaProtocolError,
} from '../../src/client/errors.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  Consumed,
  type ErrorHandlerContext,
  KafkaStreams,
  Produced,
  type ProducedRecord,
  type ProductionErrorHandlerContext,
  type Serde,
  Serdes,
  StreamsBuilder,
  StreamsConfigError,
  type Record as StreamsRecord,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import { sendErrorKind } from '../../src/streams/production-exception-handler.js';
import { waitUntil } from '../helpers/wait.js';
import { appConfig, produceValues, TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

/** A string serde whose serializer refuses the value "bad". */
const refusingBad: Serde<string> = {
  serialize: (topic, data) => {
    if (data === 'bad') throw new Error(`cannot write "bad" to ${topic}`);
    return S.serialize(topic, data);
  },
  deserialize: (topic, data) => S.deserialize(topic, data),
};

/** in -> mapValues (identity) -> out, out written with `valueSerde`. */
function passing(input: string, output: string, valueSerde: Serde<string> = S): StreamsBuilder {
  const builder = new StreamsBuilder();
  builder
    .stream(input, Consumed.with(S, S))
    .mapValues((v) => v)
    .to(output, Produced.with(S, valueSerde));
  return builder;
}

/** A topic whose max.message.bytes refuses the big records of these tests. */
const SMALL_TOPIC_MAX_BYTES = '1024';
const BIG_VALUE = 'x'.repeat(4000);

describe('default.production.exception.handler through a broker', () => {
  const broker = useStreamsBroker(
    { 'pxh-in-1': 1, 'pxh-in-2': 1, 'pxh-in-3': 1, 'pxh-out-3': 1, 'pxh-in-4': 1, 'pxh-out-4': 1 },
    4,
  );

  before(async () => {
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    try {
      for (const topic of ['pxh-small-1', 'pxh-small-2']) {
        const [r] = await admin.createTopics([
          {
            topic,
            numPartitions: 1,
            replicationFactor: 1,
            configs: { 'max.message.bytes': SMALL_TOPIC_MAX_BYTES },
          },
        ]);
        assert.equal(r!.error, null);
      }
    } finally {
      await admin.close();
    }
  });

  it('a record the broker refuses as too large reaches the handler; CONTINUE skips it and processing goes on', async () => {
    const seen: {
      context: ProductionErrorHandlerContext;
      record: ProducedRecord<Buffer | null, Buffer | null>;
      error: Error;
    }[] = [];
    const streams = new KafkaStreams(
      passing('pxh-in-1', 'pxh-small-1').build(),
      appConfig(broker.bootstrap, 'pxh-continue', broker.dirs[0]!, {
        'default.production.exception.handler': {
          handle: (
            context: ProductionErrorHandlerContext,
            record: ProducedRecord<Buffer | null, Buffer | null>,
            error: Error,
          ) => {
            seen.push({ context, record, error });
            return 'CONTINUE';
          },
        },
      }),
    );
    const errors: Error[] = [];
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(e);
      return 'SHUTDOWN_CLIENT';
    });
    const follower = new TopicFollower(broker.bootstrap, 'pxh-small-1', 1);
    follower.start();
    try {
      await streams.start();
      await produceValues(broker.bootstrap, 'pxh-in-1', ['a', BIG_VALUE, 'b'], 1000, (v) => ({
        h: v.slice(0, 8),
      }));
      await waitUntil(
        () => follower.records.length >= 2 && seen.length >= 1,
        60_000,
        () => `out ${follower.records.map((r) => r.value).join(',')}; errors ${errors.map((e) => e.message)}`,
      );
      assert.deepEqual(
        follower.records.map((r) => r.value?.toString()),
        ['a', 'b'],
      );
      assert.equal(seen.length, 1);
      const { context, record, error } = seen[0]!;
      assert.deepEqual(
        { ...context, headers: [...context.headers] },
        {
          topic: 'pxh-in-1',
          partition: 0,
          offset: 1,
          headers: [{ key: 'h', value: Buffer.from('xxxxxxxx') }],
          processorNodeId: 'KSTREAM-SINK-0000000002',
          taskId: '0_0',
          timestamp: 1001,
        },
      );
      assert.equal(record.topic, 'pxh-small-1');
      assert.equal(record.timestamp, 1001);
      assert.deepEqual(record.key, Buffer.from('k'));
      assert.equal(record.value?.toString(), BIG_VALUE);
      assert.ok(error instanceof KafkaProtocolError);
      assert.equal(error.code, ErrorCode.MESSAGE_TOO_LARGE);
      assert.equal(streams.droppedRecords(), 1);
      assert.equal(streams.state(), 'RUNNING');
      assert.deepEqual(errors, []);
    } finally {
      await streams.close();
      await follower.stop();
    }
  });

  it("the default handler FAILs: the thread ends with Kafka's send error message", async () => {
    const streams = new KafkaStreams(
      passing('pxh-in-2', 'pxh-small-2').build(),
      appConfig(broker.bootstrap, 'pxh-fail', broker.dirs[1]!),
    );
    const errors: Error[] = [];
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(e);
      return 'SHUTDOWN_CLIENT';
    });
    try {
      await streams.start();
      await produceValues(broker.bootstrap, 'pxh-in-2', ['a', BIG_VALUE], 1000, (v) => ({
        h: v.slice(0, 8),
      }));
      await waitUntil(
        () => streams.state() === 'ERROR',
        60_000,
        () => `${streams.state()} ${errors.map((e) => e.message)}`,
      );
      assert.equal(errors.length, 1);
      assert.equal(errors[0]!.name, 'StreamsException');
      assert.match(
        errors[0]!.message,
        /^Error encountered sending record to topic pxh-small-2 for task 0_0 due to:\nMESSAGE_TOO_LARGE.*\nException handler choose to FAIL the processing, no more records would be sent\.$/s,
      );
      assert.equal((errors[0]!.cause as KafkaProtocolError).code, ErrorCode.MESSAGE_TOO_LARGE);
      assert.equal(streams.droppedRecords(), 0);
    } finally {
      await streams.close();
    }
  });

  it("a sink's serializer error reaches handleSerializationException; CONTINUE skips the record", async () => {
    const seen: { record: ProducedRecord<unknown, unknown>; origin: string; node: string | null }[] = [];
    const streams = new KafkaStreams(
      passing('pxh-in-3', 'pxh-out-3', refusingBad).build(),
      appConfig(broker.bootstrap, 'pxh-serialize', broker.dirs[2]!, {
        'default.production.exception.handler': {
          handle: () => 'FAIL',
          handleSerializationException: (
            context: ProductionErrorHandlerContext,
            record: ProducedRecord<unknown, unknown>,
            _error: Error,
            origin: string,
          ) => {
            seen.push({ record, origin, node: context.processorNodeId });
            return 'CONTINUE';
          },
        },
      }),
    );
    const follower = new TopicFollower(broker.bootstrap, 'pxh-out-3', 1);
    follower.start();
    try {
      await streams.start();
      await produceValues(broker.bootstrap, 'pxh-in-3', ['a', 'bad', 'b'], 1000, (v) => ({
        h: v.slice(0, 8),
      }));
      await waitUntil(
        () => follower.records.length >= 2,
        60_000,
        () => `${streams.state()} out ${follower.records.map((r) => r.value).join(',')}`,
      );
      assert.deepEqual(
        follower.records.map((r) => r.value?.toString()),
        ['a', 'b'],
      );
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.origin, 'VALUE');
      assert.equal(seen[0]!.node, 'KSTREAM-SINK-0000000002');
      assert.deepEqual(
        { ...seen[0]!.record, headers: undefined },
        { topic: 'pxh-out-3', partition: null, timestamp: 1001, key: 'k', value: 'bad', headers: undefined },
      );
      assert.equal(streams.droppedRecords(), 1);
      assert.equal(streams.state(), 'RUNNING');
    } finally {
      await streams.close();
      await follower.stop();
    }
  });

  it("a missing serde passes by the processing exception handler: Kafka's serde initialization error ends the thread", async () => {
    const builder = new StreamsBuilder();
    builder
      .stream('pxh-in-4', Consumed.with(S, S))
      .mapValues((v) => ({ v }))
      .to('pxh-out-4');
    let asked = 0;
    const streams = new KafkaStreams(
      builder.build(),
      appConfig(broker.bootstrap, 'pxh-missing-serde', broker.dirs[3]!, {
        'processing.exception.handler': () => {
          asked++;
          return 'CONTINUE';
        },
      }),
    );
    const errors: Error[] = [];
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(e);
      return 'SHUTDOWN_CLIENT';
    });
    try {
      await streams.start();
      await produceValues(broker.bootstrap, 'pxh-in-4', ['a'], 1000, (v) => ({ h: v.slice(0, 8) }));
      await waitUntil(
        () => streams.state() === 'ERROR',
        60_000,
        () => `${streams.state()} ${errors.map((e) => e.message)}`,
      );
      assert.equal(asked, 0);
      assert.equal(errors.length, 1);
      assert.equal(errors[0]!.name, 'StreamsException');
      assert.equal(
        errors[0]!.message,
        'Failed to initialize value serdes for sink node KSTREAM-SINK-0000000002',
      );
      const cause = errors[0]!.cause as Error;
      assert.equal(cause.name, 'ConfigException');
      assert.equal(
        cause.message,
        'Please specify a value serde or set one through StreamsConfig#DEFAULT_VALUE_SERDE_CLASS_CONFIG',
      );
    } finally {
      await streams.close();
    }
  });
});

describe('default.production.exception.handler in the test driver', () => {
  it("the default FAILs a serialization error with Kafka's StreamsException, the serializer's error its cause", () => {
    const builder = new StreamsBuilder();
    builder.stream('in', Consumed.with(S, S)).to('out', Produced.with(S, refusingBad));
    const driver = new TopologyTestDriver(builder.build());
    try {
      assert.throws(
        () => driver.createInputTopic('in', S, S).pipeInput('k', 'bad', 5),
        (e: Error) =>
          e.name === 'StreamsException' &&
          e.message ===
            'Unable to serialize record. ProducerRecord(topic=[out], partition=[null], timestamp=[5]' &&
          (e.cause as Error).message === 'cannot write "bad" to out',
      );
    } finally {
      driver.close();
    }
  });

  it("a FAIL below a processor reaches that processor's processing exception handler, as in Kafka 3.9", () => {
    const errors: string[] = [];
    const driver = new TopologyTestDriver(passing('in', 'out', refusingBad).build(), {
      'processing.exception.handler': (_c: ErrorHandlerContext, _r: unknown, e: Error) => {
        errors.push(e.message);
        return 'CONTINUE';
      },
    });
    try {
      const input = driver.createInputTopic('in', S, S);
      for (const [i, v] of ['a', 'bad', 'b'].entries()) input.pipeInput('k', v, 100 + i);
      assert.deepEqual(driver.createOutputTopic('out', S, S).readValuesToList(), ['a', 'b']);
      assert.deepEqual(errors, [
        'Unable to serialize record. ProducerRecord(topic=[out], partition=[null], timestamp=[101]',
      ]);
    } finally {
      driver.close();
    }
  });

  it('a production handler that throws, or answers neither CONTINUE nor FAIL, is a fatal user code error', () => {
    for (const answer of [
      () => {
        throw new Error('handler broke');
      },
      () => 'MAYBE',
    ]) {
      const builder = new StreamsBuilder();
      builder.stream('in', Consumed.with(S, S)).to('out', Produced.with(S, refusingBad));
      const driver = new TopologyTestDriver(builder.build(), {
        'default.production.exception.handler': {
          handle: () => 'FAIL',
          handleSerializationException: answer as never,
        },
      });
      try {
        assert.throws(
          () => driver.createInputTopic('in', S, S).pipeInput('k', 'bad'),
          (e: Error) =>
            e.name === 'StreamsException' &&
            e.message === 'Fatal user code error in production error callback' &&
            /handler broke|Invalid ProductionExceptionHandler response/.test((e.cause as Error).message),
        );
      } finally {
        driver.close();
      }
    }
  });

  it('a ConfigException thrown by a processor goes to the processing exception handler, as any error of process()', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('in', Consumed.with(S, S))
      .mapValues((v) => {
        if (v === 'boom') throw new StreamsConfigError('processor found its setting wrong');
        return v;
      })
      .to('out', Produced.with(S, S));
    const seen: string[] = [];
    const driver = new TopologyTestDriver(builder.build(), {
      'processing.exception.handler': (
        _c: ErrorHandlerContext,
        _r: StreamsRecord<unknown, unknown> | null,
        e: Error,
      ) => {
        seen.push(`${e.name}: ${e.message}`);
        return 'CONTINUE';
      },
    });
    try {
      driver.createInputTopic('in', S, S).pipeValueList(['a', 'boom', 'b']);
      assert.deepEqual(driver.createOutputTopic('out', S, S).readValuesToList(), ['a', 'b']);
      assert.deepEqual(seen, ['ConfigException: processor found its setting wrong']);
    } finally {
      driver.close();
    }
  });

  it("takes Kafka's handler name and refuses others", () => {
    const topology = passing('in', 'out').build();
    for (const name of [
      'DefaultProductionExceptionHandler',
      'org.apache.kafka.streams.errors.DefaultProductionExceptionHandler',
    ])
      new TopologyTestDriver(topology, { 'default.production.exception.handler': name }).close();
    assert.throws(
      () => new TopologyTestDriver(topology, { 'default.production.exception.handler': 'NoSuchHandler' }),
      StreamsConfigError,
    );
  });

  it("asks the handler about Kafka's send errors only: not fatal, fenced or retriable ones", () => {
    const kinds = (codes: number[]) => codes.map((c) => sendErrorKind(new KafkaProtocolError(c)));
    assert.deepEqual(
      kinds([ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_RECORD]),
      ['handled', 'handled', 'handled'],
    );
    assert.deepEqual(
      kinds([
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        ErrorCode.UNKNOWN_SERVER_ERROR,
        ErrorCode.OFFSET_METADATA_TOO_LARGE,
      ]),
      ['fatal', 'fatal', 'fatal', 'fatal'],
    );
    assert.deepEqual(
      kinds([
        ErrorCode.PRODUCER_FENCED,
        ErrorCode.INVALID_PRODUCER_EPOCH,
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
      ]),
      ['fenced', 'fenced', 'fenced'],
    );
    assert.deepEqual(kinds([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_ENOUGH_REPLICAS]), [
      'retriable',
      'retriable',
    ]);
    assert.equal(sendErrorKind(new DeliveryTimeoutError('expired')), 'retriable');
    assert.equal(sendErrorKind(new ConnectionError('lost')), 'retriable');
    assert.equal(sendErrorKind(new ClientStateError('the producer is closed')), 'fatal');
  });
});
