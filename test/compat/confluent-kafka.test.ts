import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';

// Debian's python3-confluent-kafka is importable only from the system interpreter.
const PYTHON = '/usr/bin/python3';
const SCRIPT = resolve(import.meta.dirname, '../../../test/compat/scripts/confluent_roundtrip.py');

describe('confluent-kafka-python (librdkafka) against a Brook broker', () => {
  let broker: BrokerProcess;
  before(async () => {
    broker = await startBroker();
  });
  after(async () => {
    await broker?.stop();
  });

  it('creates topics, produces idempotently with every codec, consumes by offset, lists offsets', async () => {
    const r = await run(PYTHON, [SCRIPT, broker.bootstrap, 'ck'], { timeoutMs: 120_000 });
    assert.equal(
      r.code,
      0,
      `confluent-kafka failed:\n${r.stdout}\n${r.stderr}\n--- broker log ---\n${broker.log()}`,
    );
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.deepEqual(out.listed, ['ck-gzip', 'ck-lz4', 'ck-none', 'ck-snappy', 'ck-zstd']);
    assert.equal(out.partitions, 3);
    for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
      assert.equal(out.counts[codec], 100, `${codec}: every record comes back`);
      assert.equal(out.roundtrip[codec], true, `${codec}: keys, values and offsets match`);
    }
    assert.deepEqual(out.offsets_for_times, [0, 0, 0]);
    assert.deepEqual(out.watermarks0, [0, out.count0]);
    assert.deepEqual(out.after_delete, ['ck-gzip', 'ck-lz4', 'ck-snappy', 'ck-zstd']);
  });
});
