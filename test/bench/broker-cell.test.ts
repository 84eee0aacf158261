// One cell of the broker benchmark against a real broker: each repetition carries its own produce and
// end-to-end p99 (so repetitions of two servers or settings run alternately can be paired), and the cell's
// histograms are the union of its repetitions'.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { type CellSpec, runCell } from '../../bench/broker/cell.js';

const spec: CellSpec = {
  recordBytes: 1024,
  partitions: 1,
  acks: 1,
  durability: 'D0',
  batchBytes: 16 * 1024,
  partitionsPerRequest: 1,
  inFlight: 2,
  connections: 1,
  requestsPerSecond: 200,
};

// With a tail, each window is long enough for the consumer to match batches on a loaded machine too (at 400 ms a
// repetition under a load of 16 once matched none and reported no p99).
function options(tail: boolean) {
  const durationMs = tail ? 1500 : 400;
  return { repetitions: 2, durationMs, tail, backlog: false, parentDir: tmpdir(), log: () => {} };
}

describe('broker bench cell', () => {
  it('reports each repetition its own produce and end-to-end p99, within the range the cell merges', async () => {
    const result = await runCell(spec, options(true));
    assert.equal(result.repetitions.length, 2);
    const merged = { produce: result.produceLatency.summary(), e2e: result.endToEndLatency.summary() };
    assert.ok(merged.e2e.count > 0, 'the tail consumer matched batches in the windows');
    for (const [name, p99s, cell] of [
      ['produce', result.repetitions.map((r) => r.produceP99Ms), merged.produce],
      ['e2e', result.repetitions.map((r) => r.endToEndP99Ms), merged.e2e],
    ] as const) {
      for (const p99 of p99s) assert.ok(p99 > 0 && p99 * 1000 <= cell.max, `${name} p99 ${p99} ms`);
      // A mixture's percentile lies between its parts' (histogram buckets are within 1 %).
      const cellP99Ms = cell.p99 / 1000;
      assert.ok(cellP99Ms >= Math.min(...p99s) * 0.99 && cellP99Ms <= Math.max(...p99s) * 1.01, name);
    }
  });

  it('has no end-to-end p99 without a tail consumer', async () => {
    const result = await runCell(spec, options(false));
    assert.deepEqual(
      result.repetitions.map((r) => r.endToEndP99Ms),
      [-1, -1],
    );
    assert.ok(result.repetitions.every((r) => r.produceP99Ms > 0));
    assert.equal(result.endToEndLatency.count, 0);
  });
});
