// L_null: G1 against the null broker yields a positive records/s with every record acknowledged, and the
// limit is in the registry, so `npm run bench -- limits` measures it.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { defaultNullWorkload, nullBrokerLimit } from '../../bench/limits/null-broker.js';
import { findLimit } from '../../bench/limits/registry.js';

describe('L_null', { timeout: 20_000 }, () => {
  it('measures a positive records/s over 16 partitions, with the wire figures beside it', async () => {
    const limit = nullBrokerLimit({
      ...defaultNullWorkload,
      recordBytes: 100,
      partitions: 16,
      partitionsPerRequest: 4,
    });
    const sample = await limit.measureOnce({ durationMs: 400, workDir: tmpdir(), log: () => {} }, 0);
    assert.ok(sample.value > 0, `records/s ${sample.value}`);
    assert.ok((sample.details.wireMBPerSecond as number) > 0);
    assert.equal(sample.details.partitions, 16);
  });

  it('is registered as L_null in records/s', () => {
    const limit = findLimit('L_null');
    assert.ok(limit);
    assert.equal(limit.unit, 'records/s');
  });
});
