// The progress line of long-running tools: drawn in place on a terminal, never written when stderr is not one.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Progress } from '../../src/cli/progress.js';

function fakeStream(isTTY: boolean): { isTTY: boolean; written: string[]; write(t: string): boolean } {
  const written: string[] = [];
  return { isTTY, written, write: (t: string) => written.push(t) > 0 };
}

test('on a terminal the progress line is redrawn in place and erased at the end', () => {
  const stream = fakeStream(true);
  const p = new Progress(stream);
  p.update('reading the offsets of 5000 partitions', true);
  p.update('commit', true);
  p.clear();
  assert.deepEqual(stream.written, [
    '\rreading the offsets of 5000 partitions',
    `\r${'commit'.padEnd(38)}`,
    `\r${' '.repeat(6)}\r`,
  ]);
});

test('updates within the redraw interval are skipped unless forced', () => {
  const stream = fakeStream(true);
  const p = new Progress(stream);
  p.update('1/100 records acknowledged');
  p.update('2/100 records acknowledged');
  assert.equal(stream.written.length, 1);
});

test('without a terminal nothing is written', () => {
  const stream = fakeStream(false);
  const p = new Progress(stream);
  p.update('reading', true);
  p.clear();
  assert.deepEqual(stream.written, []);
});
