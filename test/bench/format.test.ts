// Units, ratios and the human summary table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  mebibytesPerSecond,
  megabytesPerSecond,
  ratio,
  ratioOfSummaries,
} from '../../bench/harness/ratio.js';
import { formatFigure, formatPercent, formatTable } from '../../bench/harness/table.js';

describe('ratios and units', () => {
  it('counts MB as 10^6 bytes and MiB as 2^20', () => {
    assert.equal(megabytesPerSecond(3_000_000, 2), 1.5);
    assert.equal(mebibytesPerSecond(4 * 1024 * 1024, 2), 2);
    assert.throws(() => megabytesPerSecond(1, 0));
  });

  it('divides by a positive limit only, with a conservative range for repeated figures', () => {
    assert.equal(ratio(450, 500), 0.9);
    assert.throws(() => ratio(1, 0));
    const r = ratioOfSummaries(
      { median: 90, min: 80, max: 100, values: [80, 90, 100] },
      { median: 100, min: 95, max: 110, values: [95, 100, 110] },
    );
    assert.equal(r.median, 0.9);
    assert.equal(r.min, 80 / 110);
    assert.equal(r.max, 100 / 95);
  });
});

describe('summary table', () => {
  it('rounds figures to about three significant digits', () => {
    assert.equal(formatFigure(1234.56), '1235');
    assert.equal(formatFigure(12.345), '12.3');
    assert.equal(formatFigure(1.2345), '1.23');
    assert.equal(formatFigure(0), '0');
    assert.equal(formatPercent(0.934), '93.4 %');
  });

  it('aligns numbers right and text left under a rule', () => {
    const table = formatTable(
      ['limit', 'MB/s'],
      [
        ['L_net', '1200'],
        ['L_disk_sync', '95.5'],
      ],
    );
    assert.equal(
      table,
      ['limit        MB/s', '-----------  ----', 'L_net        1200', 'L_disk_sync  95.5'].join('\n'),
    );
  });
});
