// Kafka's single message transforms by their class names, configured as a connector config configures them
// (transforms=..., transforms.<alias>.type and options, predicates and negate), on source and sink records with
// and without schemas; then end to end through a worker: the Connect documentation's HoistField + InsertField
// example on FileStreamSource, a Filter gated by a predicate, and a poison record that goes to the dead letter
// queue with Kafka's context headers under errors.tolerance=all and fails the task under none.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Consumer, Producer } from '../../src/client/index.js';
import { SinkRecord, SourceRecord } from '../../src/connect/api/records.js';
import {
  BigDecimal,
  ConnectTimestamp,
  Decimal,
  SchemaBuilder,
  Schemas,
  Struct,
} from '../../src/connect/data/index.js';
import { builtinPlugins } from '../../src/connect/runtime/builtin-plugins.js';
import { makeTransformChain } from '../../src/connect/runtime/connector-config.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { type ConnectWorker, rest, startConnectWorker } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

const plugins = builtinPlugins();
const T = 'org.apache.kafka.connect.transforms';

function chain(config: Record<string, string>) {
  return makeTransformChain(plugins, config);
}

const personSchema = SchemaBuilder.struct()
  .name('person')
  .field('id', Schemas.INT32)
  .field('name', Schemas.STRING)
  .field('email', Schemas.OPTIONAL_STRING)
  .field('balance', Decimal.schema(2))
  .build();

function person(id: number): Struct {
  return new Struct(personSchema)
    .put('id', id)
    .put('name', `p${id}`)
    .put('email', `p${id}@x`)
    .put('balance', new BigDecimal(1234n, 2));
}

function sinkRecord(value: unknown, valueSchema = personSchema, topic = 'people'): SinkRecord {
  return new SinkRecord({
    topic,
    kafkaPartition: 2,
    kafkaOffset: 41,
    valueSchema,
    value,
    timestamp: Date.UTC(2024, 1, 29, 13, 5),
  });
}

describe('transforms', () => {
  test("the documentation's HoistField + InsertField chain on a schemaless line", () => {
    const c = chain({
      transforms: 'MakeMap, InsertSource',
      'transforms.MakeMap.type': `${T}.HoistField$Value`,
      'transforms.MakeMap.field': 'line',
      'transforms.InsertSource.type': `${T}.InsertField$Value`,
      'transforms.InsertSource.static.field': 'data_source',
      'transforms.InsertSource.static.value': 'test-file-source',
    });
    const r = new SourceRecord({ sourcePartition: null, sourceOffset: null, topic: 't', value: 'foo' });
    assert.deepEqual(c.apply(r)!.value, { line: 'foo', data_source: 'test-file-source' });
  });

  test('InsertField with a schema adds topic, partition, offset, timestamp and a static field', () => {
    const c = chain({
      transforms: 'i',
      'transforms.i.type': `${T}.InsertField$Value`,
      'transforms.i.topic.field': 'topic!',
      'transforms.i.partition.field': 'partition',
      'transforms.i.offset.field': 'offset',
      'transforms.i.timestamp.field': 'ts',
      'transforms.i.static.field': 'origin',
      'transforms.i.static.value': 'brook',
    });
    const out = c.apply(sinkRecord(person(1)))!;
    const v = out.value as Struct;
    assert.deepEqual(
      out.valueSchema!.fields().map((f) => [f.name, f.schema.type, f.schema.optional]),
      [
        ['id', 'int32', false],
        ['name', 'string', false],
        ['email', 'string', true],
        ['balance', 'bytes', false],
        ['topic', 'string', false],
        ['partition', 'int32', true],
        ['offset', 'int64', true],
        ['ts', 'int64', true],
        ['origin', 'string', true],
      ],
    );
    assert.equal(out.valueSchema!.field('ts')!.schema.name, ConnectTimestamp.LOGICAL_NAME);
    assert.deepEqual(
      [
        v.get('topic'),
        v.get('partition'),
        v.get('offset'),
        (v.get('ts') as Date).toISOString(),
        v.get('origin'),
      ],
      ['people', 2, 41, '2024-02-29T13:05:00.000Z', 'brook'],
    );
    assert.equal(v.get('name'), 'p1');
  });

  test('ReplaceField, MaskField and Cast rewrite fields and schemas', () => {
    const replaced = chain({
      transforms: 'r',
      'transforms.r.type': `${T}.ReplaceField$Value`,
      'transforms.r.exclude': 'email',
      'transforms.r.renames': 'name:full_name,id:person_id',
    }).apply(sinkRecord(person(2)))!;
    assert.deepEqual(
      replaced.valueSchema!.fields().map((f) => f.name),
      ['person_id', 'full_name', 'balance'],
    );
    assert.equal((replaced.value as Struct).get('full_name'), 'p2');

    const included = chain({
      transforms: 'r',
      'transforms.r.type': `${T}.ReplaceField$Value`,
      'transforms.r.include': 'id',
    }).apply(sinkRecord(person(2)))!;
    assert.deepEqual(
      included.valueSchema!.fields().map((f) => f.name),
      ['id'],
    );

    const masked = chain({
      transforms: 'm',
      'transforms.m.type': `${T}.MaskField$Value`,
      'transforms.m.fields': 'id,name,balance',
    }).apply(sinkRecord(person(3)))!;
    const mv = masked.value as Struct;
    assert.deepEqual(
      [mv.get('id'), mv.get('name'), (mv.get('balance') as BigDecimal).toString(), mv.get('email')],
      [0, '', '0.00', 'p3@x'],
    );
    const replacedMask = chain({
      transforms: 'm',
      'transforms.m.type': `${T}.MaskField$Value`,
      'transforms.m.fields': 'email',
      'transforms.m.replacement': '***',
    }).apply(sinkRecord(person(3)))!;
    assert.equal((replacedMask.value as Struct).get('email'), '***');

    const cast = chain({
      transforms: 'c',
      'transforms.c.type': `${T}.Cast$Value`,
      'transforms.c.spec': 'id:string,name:string',
    }).apply(sinkRecord(person(4)))!;
    assert.equal(cast.valueSchema!.field('id')!.schema.type, 'string');
    assert.equal((cast.value as Struct).get('id'), '4');
    const whole = chain({
      transforms: 'c',
      'transforms.c.type': `${T}.Cast$Value`,
      'transforms.c.spec': 'int64',
    }).apply(sinkRecord('9007199254740993', Schemas.STRING))!;
    assert.equal(whole.value, 9007199254740993n);
    assert.throws(
      () =>
        chain({ transforms: 'c', 'transforms.c.type': `${T}.Cast$Value`, 'transforms.c.spec': 'id:uuid' }),
      /Invalid type found in casting spec: uuid/,
    );
  });

  test('ValueToKey then ExtractField$Key makes the id the record key', () => {
    const out = chain({
      transforms: 'createKey,extractInt',
      'transforms.createKey.type': `${T}.ValueToKey`,
      'transforms.createKey.fields': 'id',
      'transforms.extractInt.type': `${T}.ExtractField$Key`,
      'transforms.extractInt.field': 'id',
    }).apply(sinkRecord(person(5)))!;
    assert.equal(out.key, 5);
    assert.ok(out.keySchema!.equals(Schemas.INT32));
  });

  test('HoistField and Flatten, with and without schemas', () => {
    const hoisted = chain({
      transforms: 'h',
      'transforms.h.type': `${T}.HoistField$Value`,
      'transforms.h.field': 'inner',
    }).apply(sinkRecord(person(6)))!;
    const nested = chain({
      transforms: 'f',
      'transforms.f.type': `${T}.Flatten$Value`,
      'transforms.f.delimiter': '_',
    }).apply(hoisted)!;
    assert.deepEqual(
      nested.valueSchema!.fields().map((f) => f.name),
      ['inner_id', 'inner_name', 'inner_email', 'inner_balance'],
    );
    assert.equal((nested.value as Struct).get('inner_name'), 'p6');
    const flat = chain({ transforms: 'f', 'transforms.f.type': `${T}.Flatten$Value` }).apply(
      sinkRecord({ a: { b: 1, c: { d: 'x' } }, e: [1] }, null as never),
    )!;
    assert.deepEqual(flat.value, { 'a.b': 1, 'a.c.d': 'x', e: [1] });
  });

  test('TimestampRouter and RegexRouter rename topics', () => {
    const routed = chain({
      transforms: 'ts,re',
      'transforms.ts.type': `${T}.TimestampRouter`,
      'transforms.ts.timestamp.format': 'yyyy.MM.dd-HH',
      'transforms.re.type': `${T}.RegexRouter`,
      'transforms.re.regex': '(.*)-(\\d+)',
      'transforms.re.replacement': 'archive_$1_$2',
    }).apply(sinkRecord(person(7)))!;
    assert.equal(routed.topic, 'archive_people-2024.02.29_13');
  });

  test('Filter with predicates: TopicNameMatches (negated), HasHeaderKey, RecordIsTombstone', () => {
    const keepOnlyPeople = chain({
      transforms: 'drop',
      'transforms.drop.type': `${T}.Filter`,
      'transforms.drop.predicate': 'isPeople',
      'transforms.drop.negate': 'true',
      predicates: 'isPeople',
      'predicates.isPeople.type': `${T}.predicates.TopicNameMatches`,
      'predicates.isPeople.pattern': 'peo.*',
    });
    assert.notEqual(keepOnlyPeople.apply(sinkRecord(person(8))), null);
    assert.equal(keepOnlyPeople.apply(sinkRecord(person(8), personSchema, 'other')), null);
    const dropTombstones = chain({
      transforms: 'drop',
      'transforms.drop.type': 'Filter',
      'transforms.drop.predicate': 't',
      predicates: 't',
      'predicates.t.type': 'RecordIsTombstone',
    });
    assert.equal(dropTombstones.apply(sinkRecord(null)), null);
    assert.notEqual(dropTombstones.apply(sinkRecord(person(9))), null);
    const byHeader = chain({
      transforms: 'drop',
      'transforms.drop.type': `${T}.Filter`,
      'transforms.drop.predicate': 'h',
      predicates: 'h',
      'predicates.h.type': `${T}.predicates.HasHeaderKey`,
      'predicates.h.name': 'skip',
    });
    const withHeader = sinkRecord(person(10)).newRecord({
      headers: [{ key: 'skip', schema: null, value: 'yes' }],
    });
    assert.equal(byHeader.apply(withHeader), null);
    assert.notEqual(byHeader.apply(sinkRecord(person(10))), null);
  });

  test('HeaderFrom moves fields into headers; DropHeaders removes headers', () => {
    const out = chain({
      transforms: 'hf,dh',
      'transforms.hf.type': `${T}.HeaderFrom$Value`,
      'transforms.hf.fields': 'email,name',
      'transforms.hf.headers': 'mail,who',
      'transforms.hf.operation': 'move',
      'transforms.dh.type': `${T}.DropHeaders`,
      'transforms.dh.headers': 'who',
    }).apply(sinkRecord(person(11)))!;
    assert.deepEqual(
      out.valueSchema!.fields().map((f) => f.name),
      ['id', 'balance'],
    );
    assert.deepEqual(
      out.headers.map((h) => [h.key, h.value]),
      [['mail', 'p11@x']],
    );
  });
});

describe('through a worker', () => {
  let broker: BrokerProcess;
  let worker: ConnectWorker;
  let dir: string;

  before(async () => {
    broker = await startBroker({ overrides: { 'num.partitions': 1 } });
    dir = mkdtempSync(join(tmpdir(), 'brook-connect-smt-'));
    worker = await startConnectWorker(dir, {
      'bootstrap.servers': broker.bootstrap,
      'key.converter.schemas.enable': false,
      'value.converter.schemas.enable': false,
      'offset.storage.file.filename': join(dir, 'connect.offsets'),
    });
  });

  after(async () => {
    await worker?.stop();
    await broker?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function read(
    topic: string,
    n: number,
  ): Promise<{ value: string; headers: Record<string, string> }[]> {
    const consumer = new Consumer({ bootstrapServers: broker.bootstrap });
    try {
      consumer.assign([{ topic, partition: 0 }]);
      await consumer.seekToBeginning();
      const out: { value: string; headers: Record<string, string> }[] = [];
      const deadline = Date.now() + 20_000;
      while (out.length < n && Date.now() < deadline) {
        for (const r of await consumer.poll(500)) {
          out.push({
            value: r.value?.toString() ?? 'null',
            headers: Object.fromEntries(r.headers.map((h) => [h.key, h.value?.toString() ?? ''])),
          });
        }
      }
      return out;
    } finally {
      await consumer.close();
    }
  }

  test("the documentation's example: lines become maps with a data_source field; a Filter whose predicate matches nothing keeps every line", async () => {
    const file = join(dir, 'test.txt');
    writeFileSync(file, 'foo\nbar\nskip me\nhello world\n');
    const created = await rest(worker.url, 'PUT', '/connectors/local-file-source/config', {
      'connector.class': 'FileStreamSource',
      'tasks.max': '1',
      file,
      topic: 'connect-test',
      transforms: 'MakeMap, InsertSource, DropSkip',
      'transforms.MakeMap.type': `${T}.HoistField$Value`,
      'transforms.MakeMap.field': 'line',
      'transforms.InsertSource.type': `${T}.InsertField$Value`,
      'transforms.InsertSource.static.field': 'data_source',
      'transforms.InsertSource.static.value': 'test-file-source',
      'transforms.DropSkip.type': `${T}.Filter`,
      'transforms.DropSkip.predicate': 'never',
      predicates: 'never',
      'predicates.never.type': `${T}.predicates.HasHeaderKey`,
      'predicates.never.name': 'no-such-header',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const values = (await read('connect-test', 4)).map((r) => r.value);
    assert.deepEqual(values, [
      '{"line":"foo","data_source":"test-file-source"}',
      '{"line":"bar","data_source":"test-file-source"}',
      '{"line":"skip me","data_source":"test-file-source"}',
      '{"line":"hello world","data_source":"test-file-source"}',
    ]);
    const bad = await rest(worker.url, 'PUT', '/connector-plugins/FileStreamSource/config/validate', {
      name: 'bad-transform',
      'connector.class': 'FileStreamSource',
      topic: 't',
      transforms: 'x',
      'transforms.x.type': 'NoSuchTransform',
    });
    const infos = bad.body as {
      error_count: number;
      configs: { value: { name: string; errors: string[] } }[];
    };
    assert.equal(infos.error_count, 1);
    const errors = infos.configs
      .filter((c) => c.value.errors.length > 0)
      .map((c) => [c.value.name, c.value.errors]);
    assert.deepEqual(errors, [
      [
        'transforms.x.type',
        [
          'Invalid value NoSuchTransform for configuration transforms.x.type: Class NoSuchTransform could not be found as a Transformation.',
        ],
      ],
    ]);
  });

  test('negate without a predicate is an error on the transform type, at validation and at creation (as Kafka)', async () => {
    // Kafka's ConnectorConfig.enrich: the validator of transforms.<alias>.type fails when the alias sets negate
    // and no predicate. Before the fix Brook accepted such a config (and ran the transform on every record).
    const config = {
      'connector.class': 'FileStreamSource',
      topic: 't',
      transforms: 'drop',
      'transforms.drop.type': `${T}.Filter`,
      'transforms.drop.negate': 'true',
    };
    const message =
      "Config 'transforms.drop.negate' was provided but there is no config 'transforms.drop.predicate' defining a predicate to be negated.";
    const validated = await rest(worker.url, 'PUT', '/connector-plugins/FileStreamSource/config/validate', {
      name: 'negate-alone',
      ...config,
    });
    assert.equal(validated.status, 200, JSON.stringify(validated.body));
    const infos = validated.body as {
      error_count: number;
      configs: { value: { name: string; errors: string[] } }[];
    };
    const errors = infos.configs
      .filter((c) => c.value.errors.length > 0)
      .map((c) => [c.value.name, c.value.errors]);
    assert.deepEqual(errors, [['transforms.drop.type', [message]]]);
    assert.equal(infos.error_count, 1);

    const created = await rest(worker.url, 'PUT', '/connectors/negate-alone/config', config);
    assert.equal(created.status, 400, JSON.stringify(created.body));
    assert.match((created.body as { message: string }).message, /contains the following 1 error/);
    assert.ok((created.body as { message: string }).message.includes(message));
    assert.equal((await rest(worker.url, 'GET', '/connectors/negate-alone')).status, 404);

    // Missing its type as well: both errors, the missing type's first (Kafka parses before it validates).
    const untyped = await rest(worker.url, 'PUT', '/connector-plugins/FileStreamSource/config/validate', {
      name: 'negate-untyped',
      'connector.class': 'FileStreamSource',
      topic: 't',
      transforms: 'x',
      'transforms.x.negate': 'false',
    });
    const untypedErrors = (untyped.body as typeof infos).configs
      .filter((c) => c.value.errors.length > 0)
      .map((c) => [c.value.name, c.value.errors]);
    assert.deepEqual(untypedErrors, [
      [
        'transforms.x.type',
        [
          'Missing required configuration "transforms.x.type" which has no default value.',
          "Config 'transforms.x.negate' was provided but there is no config 'transforms.x.predicate' defining a predicate to be negated.",
        ],
      ],
    ]);
  });

  test('a poison record goes to the dead letter queue with context headers (all) and fails the task (none)', async () => {
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    try {
      for (const v of ['{"n":1}', '{not json', '{"n":3}'])
        await producer.send({ topic: 'poison', value: Buffer.from(v) });
    } finally {
      await producer.close();
    }
    const out = join(dir, 'poison.out');
    const tolerant = await rest(worker.url, 'PUT', '/connectors/tolerant/config', {
      'connector.class': 'FileStreamSink',
      topics: 'poison',
      file: out,
      'errors.tolerance': 'all',
      'errors.log.enable': 'true',
      'errors.deadletterqueue.topic.name': 'poison-dlq',
      'errors.deadletterqueue.topic.replication.factor': '1',
      'errors.deadletterqueue.context.headers.enable': 'true',
    });
    assert.equal(tolerant.status, 201, JSON.stringify(tolerant.body));
    const [dead] = await read('poison-dlq', 1);
    assert.equal(dead?.value, '{not json');
    assert.equal(dead?.headers['__connect.errors.topic'], 'poison');
    assert.equal(dead?.headers['__connect.errors.partition'], '0');
    assert.equal(dead?.headers['__connect.errors.offset'], '1');
    assert.equal(dead?.headers['__connect.errors.connector.name'], 'tolerant');
    assert.equal(dead?.headers['__connect.errors.task.id'], '0');
    assert.equal(dead?.headers['__connect.errors.stage'], 'VALUE_CONVERTER');
    assert.equal(dead?.headers['__connect.errors.exception.class.name'], 'DataException');
    assert.match(
      dead?.headers['__connect.errors.exception.message'] ?? '',
      /Converting byte\[\] to Kafka Connect data failed/,
    );
    const status = (await rest(worker.url, 'GET', '/connectors/tolerant/status')).body as {
      tasks: { state: string }[];
    };
    assert.equal(status.tasks[0]?.state, 'RUNNING');
    assert.match(worker.stderr(), /Error encountered in task tolerant-0\. Executing stage 'VALUE_CONVERTER'/);

    const strict = await rest(worker.url, 'PUT', '/connectors/strict/config', {
      'connector.class': 'FileStreamSink',
      topics: 'poison',
      file: join(dir, 'strict.out'),
    });
    assert.equal(strict.status, 201);
    let task: { state: string; trace?: string } | undefined;
    const deadline = Date.now() + 20_000;
    while (task?.state !== 'FAILED' && Date.now() < deadline) {
      await sleep(200);
      task = (
        (await rest(worker.url, 'GET', '/connectors/strict/status')).body as {
          tasks: { state: string; trace?: string }[];
        }
      ).tasks[0];
    }
    assert.equal(task?.state, 'FAILED');
    assert.match(task?.trace ?? '', /Tolerance exceeded in error handler/);
    assert.match(
      task?.trace ?? '',
      /Caused by: DataException: Converting byte\[\] to Kafka Connect data failed/,
    );
    const restarted = await rest(
      worker.url,
      'POST',
      '/connectors/strict/restart?includeTasks=true&onlyFailed=true',
    );
    assert.equal(restarted.status, 202);
    assert.deepEqual(
      (restarted.body as { tasks: { state: string }[] }).tasks.map((t) => t.state),
      ['RESTARTING'],
    );
  });
});
