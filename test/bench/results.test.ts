// The result line format and the result file's name and contents.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { formatResultLine, ResultWriter, recordedArgs, resultFileName } from '../../bench/harness/results.js';

describe('result lines', () => {
  it('names the file by UTC date and benchmark', () => {
    assert.equal(resultFileName('limits', new Date('2026-11-29T23:59:59.999Z')), '2026-11-29-limits.jsonl');
    assert.equal(
      resultFileName('produce-g1', new Date('2026-12-01T00:00:00Z')),
      '2026-12-01-produce-g1.jsonl',
    );
    assert.throws(() => resultFileName('../escape', new Date()));
  });

  it('records arguments without the paths of the machine that ran them', () => {
    assert.deepEqual(
      recordedArgs(['--quick', '--results-dir', '/var/tmp/r1', '--dir=/srv/x', '--records', '1024']),
      ['--quick', '--results-dir', '<path>', '--dir=<path>', '--records', '1024'],
    );
  });

  it('writes one JSON object per line, head fields first', () => {
    const text = formatResultLine({
      unit: 'MB/s',
      name: 'L_net',
      time: '2026-11-29T00:00:00.000Z',
      runId: 'r1',
      bench: 'limits',
      median: 1.5,
      details: { note: 'a\nb' },
    });
    assert.ok(text.endsWith('\n'));
    assert.equal(text.indexOf('\n'), text.length - 1, 'a result line holds exactly one newline, at its end');
    assert.deepEqual(Object.keys(JSON.parse(text)), [
      'time',
      'runId',
      'bench',
      'name',
      'unit',
      'median',
      'details',
    ]);
  });

  it('refuses values JSON would turn into null, however deep', () => {
    const head = { time: 't', runId: 'r', bench: 'b', name: 'n' };
    assert.throws(() => formatResultLine({ ...head, median: Number.NaN }));
    assert.throws(() => formatResultLine({ ...head, repetitions: [{ seconds: Number.POSITIVE_INFINITY }] }));
    assert.throws(() => formatResultLine({ ...head, offset: 1n }));
  });

  it('appends a run header and figures sharing one run id to the day file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-results-test-'));
    try {
      const now = () => new Date('2026-11-29T12:00:00Z');
      const writer = new ResultWriter({ bench: 'limits', dir, args: ['--quick'], now });
      writer.figure('L_net', 'MB/s', { median: 2, min: 1, max: 3, values: [1, 2, 3] }, { bytes: 10 });
      writer.latency('produce-latency', {
        unit: 'us',
        count: 3,
        min: 1,
        mean: 2,
        p50: 2,
        p99: 3,
        p999: 3,
        max: 3,
      });
      assert.equal(writer.path, join(dir, '2026-11-29-limits.jsonl'));
      const lines = readFileSync(writer.path, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        lines.map((l) => l.name),
        ['run', 'L_net', 'produce-latency'],
      );
      assert.ok(lines.every((l) => l.runId === writer.runId && l.bench === 'limits'));
      assert.deepEqual(lines[0].args, ['--quick']);
      assert.equal(lines[0].host.node, process.version);
      assert.deepEqual(
        { unit: lines[1].unit, median: lines[1].median, n: lines[1].n, bytes: lines[1].bytes },
        { unit: 'MB/s', median: 2, n: 3, bytes: 10 },
      );
      assert.equal(lines[2].p99, 3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
