// The Connect data model and the three converters against Kafka's wire formats: the JSON envelope and schema
// layout Kafka's JsonConverter writes (key order included), Decimal as base64 two's complement ("AJw=" for
// 1.56 at scale 2, as in Kafka's own tests) or NUMERIC, Date/Time/Timestamp encodings, int64 beyond 2^53 kept
// exactly, schemaless JSON, and the errors for data that does not fit.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ByteArrayConverter, JsonConverter, StringConverter } from '../../src/connect/converters/index.js';
import { bigintToTwosComplement, twosComplementToBigint } from '../../src/connect/data/big-decimal.js';
import {
  BigDecimal,
  ConnectDate,
  ConnectTime,
  ConnectTimestamp,
  Decimal,
  SchemaBuilder,
  Schemas,
  Struct,
} from '../../src/connect/data/index.js';
import { DataException } from '../../src/connect/errors.js';

function json(schemasEnable = true, extra: Record<string, string> = {}): JsonConverter {
  const c = new JsonConverter();
  c.configure({ 'schemas.enable': String(schemasEnable), ...extra }, false);
  return c;
}

describe('data model', () => {
  test('a struct checks values against field schemas and fills defaults', () => {
    const schema = SchemaBuilder.struct()
      .name('person')
      .field('id', Schemas.INT32)
      .field('name', Schemas.OPTIONAL_STRING)
      .field('score', SchemaBuilder.int64().defaultValue(7).build())
      .build();
    const s = new Struct(schema).put('id', 1);
    assert.equal(s.get('score'), 7);
    assert.equal(s.get('name'), null);
    assert.throws(() => s.put('id', 'x'), DataException);
    assert.throws(() => s.put('id', 2 ** 31), DataException);
    assert.throws(() => s.put('nope', 1), /nope is not a valid field name/);
    assert.throws(() => new Struct(schema).validate(), /null used for required field: "id"/);
  });

  test("two's complement bytes match Java's BigInteger.toByteArray", () => {
    const cases: [bigint, string][] = [
      [0n, '00'],
      [1n, '01'],
      [127n, '7f'],
      [128n, '0080'],
      [156n, '009c'],
      [-1n, 'ff'],
      [-128n, '80'],
      [-129n, 'ff7f'],
      [-156n, 'ff64'],
      [65535n, '00ffff'],
      [-65536n, 'ff0000'],
    ];
    for (const [n, hex] of cases) {
      assert.equal(bigintToTwosComplement(n).toString('hex'), hex, `encode ${n}`);
      assert.equal(twosComplementToBigint(Buffer.from(hex, 'hex')), n, `decode ${hex}`);
    }
  });

  test('BigDecimal parses, rescales with half-up rounding and prints exactly', () => {
    assert.equal(BigDecimal.parse('12.340').toString(), '12.340');
    assert.equal(BigDecimal.parse('-0.5').setScale(0).toString(), '-1');
    assert.equal(BigDecimal.parse('1e3').toString(), '1000');
    assert.equal(
      BigDecimal.parse('123456789012345678901234567890.12').setScale(3).toString(),
      '123456789012345678901234567890.120',
    );
    assert.throws(() => BigDecimal.parse('abc'), DataException);
  });
});

describe('JsonConverter', () => {
  test("writes the schema envelope in Kafka's layout and reads it back", () => {
    const schema = SchemaBuilder.struct()
      .name('com.example.Row')
      .field('id', Schemas.INT64)
      .field('name', Schemas.OPTIONAL_STRING)
      .field('tags', SchemaBuilder.array(Schemas.STRING).build())
      .build();
    const value = new Struct(schema).put('id', 42).put('name', 'tea').put('tags', ['a', 'b']);
    const bytes = json().fromConnectData('t', schema, value)!;
    assert.equal(
      bytes.toString(),
      '{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},' +
        '{"type":"string","optional":true,"field":"name"},' +
        '{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"}],' +
        '"optional":false,"name":"com.example.Row"},"payload":{"id":42,"name":"tea","tags":["a","b"]}}',
    );
    const back = json().toConnectData('t', bytes);
    assert.ok(back.schema!.equals(schema));
    assert.ok((back.value as Struct).equals(value));
  });

  test('a string schema and payload, as FileStreamSource records look with schemas enabled', () => {
    assert.equal(
      json().fromConnectData('t', Schemas.STRING, 'hello')!.toString(),
      '{"schema":{"type":"string","optional":false},"payload":"hello"}',
    );
    assert.equal(json().fromConnectData('t', null, null), null);
    assert.equal(json().fromConnectData('t', null, 'x')!.toString(), '{"schema":null,"payload":"x"}');
  });

  test('logical types: Decimal base64 and NUMERIC, Date, Time, Timestamp', () => {
    const dec = Decimal.schema(2);
    const bytes = json().fromConnectData('t', dec, new BigDecimal(156n, 2))!;
    assert.equal(
      bytes.toString(),
      '{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,' +
        '"parameters":{"scale":"2"}},"payload":"AJw="}',
    );
    assert.ok((json().toConnectData('t', bytes).value as BigDecimal).equals(new BigDecimal(156n, 2)));
    const numeric = json(true, { 'decimal.format': 'NUMERIC' });
    const n = numeric.fromConnectData('t', dec, BigDecimal.parse('-1234567890123456789.05'))!;
    assert.match(n.toString(), /"payload":-1234567890123456789\.05\}$/);
    assert.equal((numeric.toConnectData('t', n).value as BigDecimal).toString(), '-1234567890123456789.05');

    const day = new Date(Date.UTC(2024, 1, 29));
    assert.match(json().fromConnectData('t', ConnectDate.SCHEMA, day)!.toString(), /"payload":19782\}$/);
    assert.throws(
      () => json().fromConnectData('t', ConnectDate.SCHEMA, new Date(Date.UTC(2024, 1, 29, 1))),
      /Date type/,
    );
    assert.match(
      json().fromConnectData('t', ConnectTime.SCHEMA, new Date(3_600_000))!.toString(),
      /"payload":3600000\}$/,
    );
    const ts = new Date(1_700_000_000_123);
    const tsBytes = json().fromConnectData('t', ConnectTimestamp.SCHEMA, ts)!;
    assert.match(
      tsBytes.toString(),
      /"name":"org.apache.kafka.connect.data.Timestamp","version":1\},"payload":1700000000123\}$/,
    );
    assert.equal((json().toConnectData('t', tsBytes).value as Date).getTime(), ts.getTime());
  });

  test('int64 beyond 2^53 survives a round trip exactly; bytes are base64', () => {
    const big = 9007199254740993n;
    const b = json().fromConnectData('t', Schemas.INT64, big)!;
    assert.equal(b.toString(), '{"schema":{"type":"int64","optional":false},"payload":9007199254740993}');
    assert.equal(json().toConnectData('t', b).value, big);
    const raw = json().fromConnectData('t', Schemas.BYTES, Buffer.from([0, 1, 255]))!;
    assert.match(raw.toString(), /"payload":"AAH\/"/);
    assert.deepEqual(json().toConnectData('t', raw).value, Buffer.from([0, 1, 255]));
  });

  test('maps with string keys are objects, other keys are arrays of pairs; defaults fill nulls', () => {
    const m = SchemaBuilder.map(Schemas.INT32, Schemas.STRING).build();
    const b = json().fromConnectData('t', m, new Map([[1, 'a']]))!;
    assert.match(b.toString(), /"payload":\[\[1,"a"\]\]/);
    assert.deepEqual(json().toConnectData('t', b).value, new Map([[1, 'a']]));
    const withDefault = SchemaBuilder.int32().optional().defaultValue(5).build();
    assert.match(json().fromConnectData('t', withDefault, null)!.toString(), /"default":5.*"payload":5\}$/);
  });

  test('schemas.enable=false writes plain JSON and reads schemaless data', () => {
    const c = json(false);
    const schema = SchemaBuilder.struct().field('a', Schemas.INT32).field('b', Schemas.STRING).build();
    assert.equal(
      c.fromConnectData('t', schema, new Struct(schema).put('a', 1).put('b', 'x'))!.toString(),
      '{"a":1,"b":"x"}',
    );
    const back = c.toConnectData('t', Buffer.from('{"a":1,"b":[true,null],"c":{"d":2.5}}'));
    assert.equal(back.schema, null);
    assert.deepEqual(back.value, { a: 1, b: [true, null], c: { d: 2.5 } });
  });

  test("bad input is a DataException with Kafka's messages", () => {
    assert.throws(
      () => json().toConnectData('t', Buffer.from('{"a":1}')),
      /requires "schema" and "payload" fields/,
    );
    assert.throws(
      () => json().toConnectData('t', Buffer.from('{not json')),
      /Converting byte\[\] to Kafka Connect data failed/,
    );
    assert.throws(
      () =>
        json().toConnectData('t', Buffer.from('{"schema":{"type":"int32","optional":false},"payload":null}')),
      /Invalid null value for required INT32 field/,
    );
    assert.throws(() => json().fromConnectData('t', Schemas.INT32, 'x'), DataException);
    assert.throws(
      () => json().fromConnectData('t', Schemas.INT32, null),
      /null value for field that is required/,
    );
    assert.throws(() => json(true, { 'decimal.format': 'HEX' }), /decimal.format/);
  });
});

describe('StringConverter and ByteArrayConverter', () => {
  test('StringConverter writes text in UTF-8 and reads an optional string', () => {
    const c = new StringConverter();
    c.configure({}, false);
    assert.equal(c.fromConnectData('t', Schemas.STRING, 'héllo')!.toString('utf8'), 'héllo');
    assert.equal(c.fromConnectData('t', Schemas.INT32, 12)!.toString(), '12');
    assert.equal(c.fromConnectData('t', null, null), null);
    const back = c.toConnectData('t', Buffer.from('abc'));
    assert.equal(back.value, 'abc');
    assert.ok(back.schema!.equals(Schemas.OPTIONAL_STRING));
  });

  test('ByteArrayConverter passes bytes through and refuses other data', () => {
    const c = new ByteArrayConverter();
    const bytes = Buffer.from([1, 2, 3]);
    assert.equal(c.fromConnectData('t', Schemas.BYTES, bytes), bytes);
    assert.equal(c.fromConnectData('t', null, null), null);
    assert.throws(
      () => c.fromConnectData('t', Schemas.STRING, 'x'),
      /Invalid schema type for ByteArrayConverter: STRING/,
    );
    assert.throws(() => c.fromConnectData('t', null, 'x'), /not compatible with objects of type/);
    assert.ok(c.toConnectData('t', bytes).schema!.equals(Schemas.OPTIONAL_BYTES));
  });
});
