// processing.exception.handler (KIP-1033, Kafka Streams 3.9) through a broker: a processor's error reaches the
// handler with the record and its place; LogAndContinue drops the record, counts it as dropped, and the
// application goes on; a punctuator's error reaches it without a record, in the punctuation's context; the
// default (LogAndFail) ends the thread with Kafka's "Exception caught in process" StreamsException. The fine
// points (a sibling still gets the record, a handler that throws, the config's names) run in the test driver.
// A processor below a cached store that throws while the cache flushes at commit goes to the same handler; its
// FAIL reaches the uncaught exception handler as Kafka 3.9's periodic commit lets it: the FailedProcessingException
// itself, not wrapped (TaskExecutor.commitTasksAndMaybeUpdateCommittableOffsets calls prepareCommit unguarded and
// ProcessorStateManager.flushCache keeps a StreamsException as it is).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Consumed,
  type ErrorHandlerContext,
  KafkaStreams,
  Produced,
  Serdes,
  StreamsBuilder,
  StreamsConfigError,
  Record as StreamsRecord,
  TopologyTestDriver,
} from '../../src/streams/index.js';
import type { ProcessorContext } from '../../src/streams/processor.js';
import { waitUntil } from '../helpers/wait.js';
import { appConfig, produceValues, TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

/** in -> mapValues (throws on "boom") -> out. */
function upperCasing(input: string, output: string): StreamsBuilder {
  const builder = new StreamsBuilder();
  builder
    .stream(input, Consumed.with(S, S))
    .mapValues((v) => {
      if (v === 'boom') throw new Error('boom');
      return v.toUpperCase();
    })
    .to(output, Produced.with(S, S));
  return builder;
}

interface Reported {
  context: ErrorHandlerContext;
  record: { key: unknown; value: unknown; timestamp: number } | null;
  error: string;
}

function reported(
  context: ErrorHandlerContext,
  record: StreamsRecord<unknown, unknown> | null,
  error: Error,
): Reported {
  return {
    context: { ...context, headers: [...context.headers] },
    record: record === null ? null : { key: record.key, value: record.value, timestamp: record.timestamp },
    error: error.message,
  };
}

describe('processing.exception.handler through a broker', () => {
  const broker = useStreamsBroker(
    { 'peh-in-1': 1, 'peh-out-1': 1, 'peh-in-2': 1, 'peh-out-2': 1, 'peh-in-3': 1, 'peh-out-3': 1 },
    3,
  );

  it('a processor error answered CONTINUE drops the record, is counted, and processing goes on', async () => {
    const seen: Reported[] = [];
    const streams = new KafkaStreams(
      upperCasing('peh-in-1', 'peh-out-1').build(),
      appConfig(broker.bootstrap, 'peh-continue', broker.dirs[0]!, {
        'processing.exception.handler': (
          c: ErrorHandlerContext,
          r: StreamsRecord<unknown, unknown> | null,
          e: Error,
        ) => {
          seen.push(reported(c, r, e));
          return 'CONTINUE';
        },
      }),
    );
    const errors: Error[] = [];
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(e);
      return 'SHUTDOWN_CLIENT';
    });
    const follower = new TopicFollower(broker.bootstrap, 'peh-out-1', 1);
    follower.start();
    try {
      await streams.start();
      await produceValues(broker.bootstrap, 'peh-in-1', ['a', 'boom', 'b'], 1000, (v) => ({ h: v }));
      await waitUntil(
        () => follower.records.length >= 2,
        60_000,
        () => `out ${follower.records.map((r) => r.value).join(',')}; errors ${errors.map((e) => e.message)}`,
      );
      assert.deepEqual(
        follower.records.map((r) => r.value?.toString()),
        ['A', 'B'],
      );
      assert.deepEqual(seen, [
        {
          context: {
            topic: 'peh-in-1',
            partition: 0,
            offset: 1,
            headers: [{ key: 'h', value: Buffer.from('boom') }],
            processorNodeId: 'KSTREAM-MAPVALUES-0000000001',
            taskId: '0_0',
            timestamp: 1001,
          },
          record: { key: 'k', value: 'boom', timestamp: 1001 },
          error: 'boom',
        },
      ]);
      assert.equal(streams.droppedRecords(), 1);
      assert.equal(streams.state(), 'RUNNING');
      assert.deepEqual(errors, []);
    } finally {
      await streams.close();
      await follower.stop();
    }
  });

  it("a punctuator's error reaches the handler without a record, in the punctuation's context", async () => {
    const seen: Reported[] = [];
    const builder = new StreamsBuilder();
    builder
      .stream('peh-in-2', Consumed.with(S, S))
      .process<string, string>(() => {
        let ctx: ProcessorContext<string, string>;
        let punctuations = 0;
        return {
          init(c) {
            ctx = c;
            c.schedule(1000, 'STREAM_TIME', () => {
              punctuations++;
              if (punctuations === 1) throw new Error('punctuator failed');
              ctx.forward(new StreamsRecord('p', `punctuation ${punctuations}`, 0));
            });
          },
          process(r) {
            ctx.forward(r);
          },
        };
      })
      .to('peh-out-2', Produced.with(S, S));
    const streams = new KafkaStreams(
      builder.build(),
      appConfig(broker.bootstrap, 'peh-punctuate', broker.dirs[1]!, {
        'processing.exception.handler': (
          c: ErrorHandlerContext,
          r: StreamsRecord<unknown, unknown> | null,
          e: Error,
        ) => {
          seen.push(reported(c, r, e));
          return 'CONTINUE';
        },
      }),
    );
    const follower = new TopicFollower(broker.bootstrap, 'peh-out-2', 1);
    follower.start();
    try {
      await streams.start();
      await produceValues(broker.bootstrap, 'peh-in-2', ['a'], 5000, (v) => ({ h: v }));
      await produceValues(broker.bootstrap, 'peh-in-2', ['b'], 7000, (v) => ({ h: v }));
      await waitUntil(
        () => follower.records.length >= 3,
        60_000,
        () => follower.records.map((r) => r.value).join(','),
      );
      assert.deepEqual(
        follower.records.map((r) => r.value?.toString()),
        ['a', 'b', 'punctuation 2'],
      );
      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0], {
        context: {
          topic: null,
          partition: -1,
          offset: -1,
          headers: [],
          processorNodeId: 'KSTREAM-PROCESSOR-0000000001',
          taskId: '0_0',
          timestamp: 5000,
        },
        record: null,
        error: 'punctuator failed',
      });
      assert.equal(streams.droppedRecords(), 1);
    } finally {
      await streams.close();
      await follower.stop();
    }
  });

  it("LogAndFail, the default, ends the thread with Kafka's StreamsException, the error its cause", async () => {
    const streams = new KafkaStreams(
      upperCasing('peh-in-3', 'peh-out-3').build(),
      appConfig(broker.bootstrap, 'peh-fail', broker.dirs[2]!),
    );
    const errors: Error[] = [];
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(e);
      return 'SHUTDOWN_CLIENT';
    });
    try {
      await streams.start();
      await produceValues(broker.bootstrap, 'peh-in-3', ['a', 'boom'], 1000, (v) => ({ h: v }));
      await waitUntil(
        () => streams.state() === 'ERROR',
        60_000,
        () => `${streams.state()} ${errors.map((e) => e.message)}`,
      );
      assert.equal(errors.length, 1);
      assert.equal(errors[0]!.name, 'StreamsException');
      assert.equal(
        errors[0]!.message,
        'Exception caught in process. taskId=0_0, processor=KSTREAM-SOURCE-0000000000, topic=peh-in-3, partition=0, offset=1',
      );
      assert.equal((errors[0]!.cause as Error).message, 'boom');
      assert.equal(streams.droppedRecords(), 0);
    } finally {
      await streams.close();
    }
  });
});

/** in -> count (cached) -> toStream -> mapValues (throws on the count 2) -> out. */
function countingFailingAtTwo(input: string, output: string): StreamsBuilder {
  const builder = new StreamsBuilder();
  builder
    .stream(input, Consumed.with(S, S))
    .groupByKey()
    .count()
    .toStream()
    .mapValues((n) => {
      if (Number(n) === 2) throw new Error('flush boom');
      return String(n);
    })
    .to(output, Produced.with(S, S));
  return builder;
}

describe('processing.exception.handler while a cache flushes at commit', () => {
  const broker = useStreamsBroker({ 'pehf-in-1': 1, 'pehf-out-1': 1, 'pehf-in-2': 1, 'pehf-out-2': 1 }, 2);

  it("LogAndFail: the uncaught exception handler gets Kafka's FailedProcessingException, unwrapped", async () => {
    const streams = new KafkaStreams(
      countingFailingAtTwo('pehf-in-1', 'pehf-out-1').build(),
      appConfig(broker.bootstrap, 'pehf-fail', broker.dirs[0]!),
    );
    const errors: Error[] = [];
    streams.setUncaughtExceptionHandler((e) => {
      errors.push(e);
      return 'SHUTDOWN_CLIENT';
    });
    try {
      await streams.start();
      await produceValues(broker.bootstrap, 'pehf-in-1', ['a', 'b'], 1000);
      await waitUntil(
        () => streams.state() === 'ERROR',
        60_000,
        () => `${streams.state()} ${errors.map((e) => e.message)}`,
      );
      assert.equal(errors.length, 1);
      assert.equal(errors[0]!.name, 'FailedProcessingException');
      assert.equal((errors[0]!.cause as Error).message, 'flush boom');
    } finally {
      await streams.close();
    }
  });

  it('CONTINUE: the flushed record is dropped with its cached context, and the commit and processing go on', async () => {
    const seen: Reported[] = [];
    const streams = new KafkaStreams(
      countingFailingAtTwo('pehf-in-2', 'pehf-out-2').build(),
      appConfig(broker.bootstrap, 'pehf-continue', broker.dirs[1]!, {
        'processing.exception.handler': (
          c: ErrorHandlerContext,
          r: StreamsRecord<unknown, unknown> | null,
          e: Error,
        ) => {
          seen.push(reported(c, r, e));
          return 'CONTINUE';
        },
      }),
    );
    const follower = new TopicFollower(broker.bootstrap, 'pehf-out-2', 1);
    follower.start();
    try {
      await streams.start();
      await produceValues(broker.bootstrap, 'pehf-in-2', ['a', 'b'], 1000);
      await waitUntil(
        () => seen.length >= 1,
        60_000,
        () => streams.state(),
      );
      await produceValues(broker.bootstrap, 'pehf-in-2', ['c'], 2000);
      await waitUntil(
        () => follower.records.some((r) => r.value?.toString() === '3'),
        60_000,
        () => `${streams.state()} out ${follower.records.map((r) => r.value).join(',')}`,
      );
      assert.ok(!follower.records.some((r) => r.value?.toString() === '2'));
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.error, 'flush boom');
      assert.deepEqual(
        {
          topic: seen[0]!.context.topic,
          offset: seen[0]!.context.offset,
          node: seen[0]!.context.processorNodeId,
        },
        { topic: 'pehf-in-2', offset: 1, node: 'KSTREAM-MAPVALUES-0000000004' },
      );
      assert.equal(streams.state(), 'RUNNING');
      assert.equal(streams.droppedRecords(), 1);
    } finally {
      await streams.close();
      await follower.stop();
    }
  });
});

describe('processing.exception.handler in the test driver', () => {
  it('CONTINUE drops the record at the failing processor only: its sibling still gets it', () => {
    const builder = new StreamsBuilder();
    const source = builder.stream('in', Consumed.with(S, S));
    source
      .mapValues((v) => {
        if (v === 'boom') throw new Error('boom');
        return v;
      })
      .to('failing', Produced.with(S, S));
    source.to('sibling', Produced.with(S, S));
    const driver = new TopologyTestDriver(builder.build(), {
      'processing.exception.handler':
        'org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler',
    });
    try {
      driver.createInputTopic('in', S, S).pipeValueList(['a', 'boom', 'b']);
      assert.deepEqual(driver.createOutputTopic('failing', S, S).readValuesToList(), ['a', 'b']);
      assert.deepEqual(driver.createOutputTopic('sibling', S, S).readValuesToList(), ['a', 'boom', 'b']);
    } finally {
      driver.close();
    }
  });

  it('a handler that throws, or answers neither CONTINUE nor FAIL, is a fatal user code error', () => {
    for (const handler of [
      () => {
        throw new Error('handler broke');
      },
      // A handler written without the types (JavaScript) may answer anything.
      (() => 'MAYBE') as never,
    ]) {
      const driver = new TopologyTestDriver(upperCasing('in', 'out').build(), {
        'processing.exception.handler': handler,
      });
      try {
        assert.throws(
          () => driver.createInputTopic('in', S, S).pipeInput('k', 'boom'),
          (e: Error) =>
            e.name === 'StreamsException' &&
            e.message === 'Fatal user code error in processing error callback' &&
            /handler broke|Invalid ProcessingExceptionHandler response/.test((e.cause as Error).message),
        );
      } finally {
        driver.close();
      }
    }
  });

  it("takes Kafka's handler names and refuses others", () => {
    const topology = upperCasing('in', 'out').build();
    for (const name of ['LogAndFailProcessingExceptionHandler', 'LogAndContinueProcessingExceptionHandler'])
      new TopologyTestDriver(topology, { 'processing.exception.handler': name }).close();
    assert.throws(
      () => new TopologyTestDriver(topology, { 'processing.exception.handler': 'NoSuchHandler' }),
      StreamsConfigError,
    );
  });
});
