// kafka-python (Debian's python3-kafka) as an independent implementation: batches and message sets it writes
// must read back here record for record, and what Brook writes must read back there, for every magic and
// codec it supports here, including its xerial snappy framing.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import {
  buildBatch,
  buildMessageSet,
  decodeMessageSet,
  listEntries,
  readRecords,
  validateBatch,
  validateMessageSet,
} from '../../../src/protocol/records/index.js';

const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import sys, json, base64
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record import MemoryRecords

def dec(s):
    return None if s is None else base64.b64decode(s)

def enc(b):
    return None if b is None else base64.b64encode(bytes(b)).decode()

req = json.load(sys.stdin)
built = []
for spec in req["build"]:
    if spec["magic"] == 2:
        b = DefaultRecordBatchBuilder(2, spec["codec"], False, -1, -1, -1, 1 << 24)
        for r in spec["records"]:
            b.append(r["offset"], r["timestamp"], dec(r["key"]), dec(r["value"]),
                     [(h[0], dec(h[1])) for h in r["headers"]])
    else:
        b = LegacyRecordBatchBuilder(spec["magic"], spec["codec"], 1 << 24)
        for r in spec["records"]:
            b.append(r["offset"], r["timestamp"], dec(r["key"]), dec(r["value"]))
    built.append(enc(b.build()))
read = []
for blob in req["read"]:
    mr = MemoryRecords(base64.b64decode(blob))
    out = []
    while True:
        batch = mr.next_batch()
        if batch is None:
            break
        if not batch.validate_crc():
            raise SystemExit("crc mismatch")
        for rec in batch:
            headers = [[k, enc(v)] for (k, v) in getattr(rec, "headers", [])]
            ts = -1 if rec.timestamp is None else rec.timestamp
            out.append({"offset": rec.offset, "timestamp": ts, "key": enc(rec.key),
                        "value": enc(rec.value), "headers": headers})
    read.append(out)
json.dump({"built": built, "read": read}, sys.stdout)
`;

interface PyRecord {
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
}

function python(request: unknown): { built: string[]; read: PyRecord[][] } {
  const result = spawnSync(PYTHON, ['-c', SCRIPT], { input: JSON.stringify(request), encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

const T0 = 1_700_000_000_000;
const b64 = (s: string | null) => (s === null ? null : Buffer.from(s).toString('base64'));

/** Compressible values, so that kafka-python does not fall back to an uncompressed batch. */
function sampleRecords(magic: number): PyRecord[] {
  return Array.from({ length: 40 }, (_, i) => ({
    offset: i,
    timestamp: magic === 0 ? -1 : T0 + i,
    key: b64(i % 4 === 0 ? null : `key-${i}`),
    value: b64(`value number ${i} `.repeat(20 + i)),
    headers: magic === 2 && i % 3 === 0 ? [['h', b64(`hv${i}`)]] : [],
  }));
}

// Every magic and codec, except zstd below magic 2 (Kafka does not allow it) and lz4 at magic 0: kafka-python
// needs the `xxhash` module for its broken-checksum framing, which Debian does not install with it. That framing
// is covered by Kafka's own header bytes in test/protocol/compression.
const CASES: [magic: 0 | 1 | 2, codec: number][] = [];
for (const magic of [0, 1, 2] as const) {
  for (const codec of [0, 1, 2, 3, 4]) {
    if ((magic < 2 && codec === 4) || (magic === 0 && codec === 3)) continue;
    CASES.push([magic, codec]);
  }
}

function asPy(
  records: {
    offset: number;
    timestamp: number;
    key: Buffer | null;
    value: Buffer | null;
    headers?: { key: string; value: Buffer | null }[];
  }[],
): PyRecord[] {
  return records.map((r) => ({
    offset: r.offset,
    timestamp: r.timestamp,
    key: r.key === null ? null : r.key.toString('base64'),
    value: r.value === null ? null : r.value.toString('base64'),
    headers: (r.headers ?? []).map((h): [string, string | null] => [
      h.key,
      h.value === null ? null : h.value.toString('base64'),
    ]),
  }));
}

describe('interoperability with kafka-python', () => {
  const built = python({
    build: CASES.map(([magic, codec]) => ({ magic, codec, records: sampleRecords(magic) })),
    read: [],
  }).built.map((s) => Buffer.from(s, 'base64'));

  CASES.forEach(([magic, codec], i) => {
    it(`reads what kafka-python writes: magic ${magic}, codec ${codec}`, () => {
      const bytes = built[i]!;
      const entries = listEntries(bytes).entries;
      assert.ok(entries.length >= 1);
      if (codec !== 0)
        assert.equal(bytes[magic === 2 ? 22 : 17]! & 0x07, codec, 'the batch really is compressed');
      let got: PyRecord[];
      if (magic === 2) {
        assert.equal(validateBatch(bytes, 0, bytes.length, { deep: true, fromClient: false }), null);
        got = asPy(readRecords(bytes));
      } else {
        assert.equal(validateMessageSet(bytes), null);
        got = asPy(decodeMessageSet(bytes).messages);
      }
      const expected = sampleRecords(magic);
      if (magic === 1 && codec !== 0) {
        // A producer writes its wrapper with offset 0 and inner offsets 0..n-1, leaving offsets to the broker;
        // Kafka's reading rule (wrapper offset - last inner offset + inner offset) then gives -(n-1)..0.
        for (const r of expected) r.offset -= expected.length - 1;
      }
      assert.deepEqual(got, expected);
    });
  });

  it('writes what kafka-python reads, for every magic and codec', () => {
    const blobs = CASES.map(([magic, codec]) => {
      const records = sampleRecords(magic).map((r) => ({
        offset: r.offset,
        timestamp: r.timestamp,
        key: r.key === null ? null : Buffer.from(r.key, 'base64'),
        value: r.value === null ? null : Buffer.from(r.value, 'base64'),
        headers: r.headers.map(([key, value]) => ({
          key,
          value: value === null ? null : Buffer.from(value, 'base64'),
        })),
      }));
      return magic === 2
        ? buildBatch(records, { compression: codec })
        : buildMessageSet(records, { magic, compression: codec });
    });
    const { read } = python({ build: [], read: blobs.map((b) => b.toString('base64')) });
    CASES.forEach(([magic, codec], i) => {
      assert.deepEqual(read[i], sampleRecords(magic), `magic ${magic} codec ${codec}`);
    });
  });
});
