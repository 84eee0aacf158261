import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';

// Debian's python3-kafka is importable only from the system interpreter.
const PYTHON = '/usr/bin/python3';
const SCRIPT = resolve(import.meta.dirname, '../../../test/compat/scripts/kafka_python_roundtrip.py');

describe('kafka-python against a Brook broker', () => {
  let broker: BrokerProcess;
  before(async () => {
    broker = await startBroker();
  });
  after(async () => {
    await broker?.stop();
  });

  it('creates topics, produces with every codec, consumes by offset (zstd needs Fetch v10), finds offsets by time, deletes', async () => {
    const r = await run(PYTHON, [SCRIPT, broker.bootstrap, 'kp'], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, `kafka-python failed:\n${r.stderr}\n--- broker log ---\n${broker.log()}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.deepEqual(out.listed, ['kp-gzip', 'kp-lz4', 'kp-none', 'kp-snappy', 'kp-zstd']);
    for (const codec of ['none', 'gzip', 'snappy', 'lz4']) {
      assert.equal(out.counts[codec], 50, `${codec}: every record comes back`);
      assert.equal(out.roundtrip[codec], true, `${codec}: keys, values, headers and offsets match`);
    }
    // Its Fetch v4 cannot be given zstd batches (Kafka's rule): the zstd records are counted by end offsets.
    assert.equal(out.zstd_end_offsets, 50);
    const ends = Object.values(out.end_offsets as Record<string, number>);
    assert.equal(
      ends.reduce((a, b) => a + b, 0),
      50,
    );
    assert.deepEqual(out.offsets_for_times, { '0': 0, '1': 0 });
    assert.deepEqual(out.after_delete, ['kp-gzip', 'kp-lz4', 'kp-snappy', 'kp-zstd']);
  });
});
