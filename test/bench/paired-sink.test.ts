// The L_sink repetitions the broker bench pairs with Brook's: a real sink process writing a real file, kept in
// the cell's folder; and the ratios taken pair by pair.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CellResult, CellSpec, ProduceRepetition } from '../../bench/broker/cell.js';
import {
  formatPairedSinks,
  type PairedSinkRepetition,
  pairedRatios,
  runPairedSink,
} from '../../bench/broker/paired-sink.js';
import { Histogram } from '../../bench/harness/histogram.js';
import { withTempDir } from '../../bench/harness/temp-dir.js';

const spec: CellSpec = {
  recordBytes: 1024,
  partitions: 1,
  acks: 1,
  durability: 'D0',
  batchBytes: 128 * 1024,
  partitionsPerRequest: 1,
  inFlight: 5,
  connections: 1,
};

function brookWith(wireMBPerSecond: number[]): CellResult {
  return {
    spec,
    repetitions: wireMBPerSecond.map(
      (wire) =>
        ({
          wireMBPerSecond: wire,
          brokerCpuSeconds: 2,
          brokerSystemCpuSeconds: 1,
          loadAverage1m: 1,
        }) as ProduceRepetition,
    ),
    produceLatency: new Histogram('us'),
    endToEndLatency: new Histogram('us'),
    backlogMBPerSecond: [],
    backlogRecordsPerSecond: [],
    brokerPeakRssBytes: 0,
    rssSeriesMiB: [],
  };
}

function sinkAt(mbPerSecond: number): PairedSinkRepetition {
  return { mbPerSecond, sinkCpuSeconds: 4, sinkSystemCpuSeconds: 3, bytesWritten: 1, loadAverage1m: 1 };
}

describe('paired L_sink', () => {
  it('writes its repetition into a file of its own that stays after it, and counts the kernel part of its CPU', async () => {
    await withTempDir(tmpdir(), 'brook-paired-sink-test-', async (cellDir) => {
      const first = await runPairedSink(spec, cellDir, 200, () => {}, 0);
      const second = await runPairedSink(spec, cellDir, 200, () => {}, 1);
      for (const [i, r] of [first, second].entries()) {
        const file = join(cellDir, `sink-${i}`, 'sink.log');
        assert.ok(existsSync(file), `repetition ${i}'s file is gone`);
        assert.equal(statSync(file).size, r.bytesWritten);
        assert.ok(r.bytesWritten > 0 && r.mbPerSecond > 0);
        assert.ok(r.sinkSystemCpuSeconds >= 0 && r.sinkSystemCpuSeconds <= r.sinkCpuSeconds);
      }
    });
  });

  it('divides each Brook repetition by the sink repetition that ran after it', () => {
    const result = { brook: brookWith([300, 100, 50]), sink: [sinkAt(600), sinkAt(100), sinkAt(25)] };
    assert.deepEqual(pairedRatios(result), [0.5, 1, 2]);
    const table = formatPairedSinks([result]);
    assert.match(table, /1024B-1p-acks1-D0 +100 \(50\.0-300\) +100 \(25\.0-600\) +1\.00 \(0\.50-2\.00\)/);
    assert.match(table, /50\.0 \(50\.0-50\.0\) +75\.0 \(75\.0-75\.0\)/);
  });

  it('refuses to pair repetitions that do not match one to one', () => {
    assert.throws(() => pairedRatios({ brook: brookWith([1, 2, 3]), sink: [sinkAt(1), sinkAt(2)] }));
  });
});
