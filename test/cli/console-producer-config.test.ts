// The console producer's producer properties against a real broker process: a value that is not a number, one
// outside its range, or a delivery.timeout.ms below linger.ms + request.timeout.ms is refused before anything
// is read from stdin. The tool exits 1 with a first stderr line naming the property and the rule (then its
// usage, as for every usage error), prints no stack trace, and the topic's end offset stays 0. A consistent
// set of values produces as usual. The other tools share the strict reading through --command-config.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useToolBroker } from '../helpers/tool-broker.js';

const tools = useToolBroker('brook-cli-producer-config-');
const brook = tools.brook;
const bs = tools.bootstrapArgs;

async function createTopic(topic: string): Promise<void> {
  const r = await brook(['topics', ...bs(), '--create', '--topic', topic, '--partitions', '1']);
  assert.equal(r.code, 0, r.stderr);
}

/** The end offset of partition 0, from get-offsets (ListOffsets at the broker). */
async function endOffset(topic: string): Promise<number> {
  const r = await brook(['get-offsets', ...bs(), '--topic', topic, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout)[0].offset;
}

function produce(topic: string, producerArgs: string[], input = 'one\ntwo\nthree\n') {
  return brook(['console-producer', ...bs(), '--topic', topic, ...producerArgs], input);
}

/** Exit 1, the first stderr line matching `firstLine`, and no stack trace anywhere. */
function assertRefused(r: { code: number | null; stderr: string }, firstLine: RegExp): void {
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr.split('\n')[0]!, firstLine);
  assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(r.stderr, /TypeError/);
}

test('a delivery.timeout.ms below linger.ms + request.timeout.ms is refused with the rule, and nothing is produced', async () => {
  await createTopic('cfg-inconsistent');
  const r = await produce('cfg-inconsistent', [
    '--producer-property',
    'delivery.timeout.ms=10',
    '--producer-property',
    'request.timeout.ms=30000',
  ]);
  assertRefused(
    r,
    /^delivery\.timeout\.ms \(10\) should be equal to or larger than linger\.ms \+ request\.timeout\.ms \(1000 \+ 30000\)$/,
  );
  assert.equal(await endOffset('cfg-inconsistent'), 0);
});

test('a producer property that is not a number, or below its minimum, is refused naming it, and nothing is produced', async () => {
  await createTopic('cfg-not-a-number');
  const file = join(tools.scratch, 'producer.properties');
  writeFileSync(file, 'delivery.timeout.ms=40000\nbatch.size=16k\n');
  const cases: [string[], RegExp][] = [
    [
      ['--producer-property', 'delivery.timeout.ms=abc'],
      /^Invalid value abc for configuration delivery\.timeout\.ms: Not a number of type INT$/,
    ],
    [
      ['--producer-property', 'request.timeout.ms=abc'],
      /^Invalid value abc for configuration request\.timeout\.ms: Not a number of type INT$/,
    ],
    [
      ['--producer-property', 'linger.ms=-1'],
      /^Invalid value -1 for configuration linger\.ms: Value must be at least 0$/,
    ],
    [['--timeout', 'abc'], /^Invalid value abc for option --timeout: Not a number of type LONG$/],
    [
      ['--producer.config', file],
      /^Invalid value 16k for configuration batch\.size: Not a number of type INT$/,
    ],
  ];
  for (const [args, firstLine] of cases) {
    assertRefused(await produce('cfg-not-a-number', args), firstLine);
  }
  assert.equal(await endOffset('cfg-not-a-number'), 0);
});

test('a consistent delivery.timeout.ms, request.timeout.ms and linger.ms produce the records', async () => {
  await createTopic('cfg-consistent');
  const r = await produce('cfg-consistent', [
    '--producer-property',
    'delivery.timeout.ms=40000',
    '--producer-property',
    'request.timeout.ms=30000',
    '--producer-property',
    'linger.ms=5',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.equal(await endOffset('cfg-consistent'), 3);
  const read = await brook([
    'console-consumer',
    ...bs(),
    '--topic',
    'cfg-consistent',
    '--from-beginning',
    '--max-messages',
    '3',
  ]);
  assert.equal(read.code, 0, read.stderr);
  assert.equal(read.stdout, 'one\ntwo\nthree\n');
});

test('the other tools read --command-config and --consumer-property as strictly, and report client refusals the same way', async () => {
  const file = join(tools.scratch, 'client.properties');
  writeFileSync(file, 'request.timeout.ms=30s\n');
  assertRefused(
    await brook(['topics', ...bs(), '--list', '--command-config', file]),
    /^Invalid value 30s for configuration request\.timeout\.ms: Not a number of type INT$/,
  );
  assertRefused(
    await brook([
      'console-consumer',
      ...bs(),
      '--topic',
      'cfg-consistent',
      '--consumer-property',
      'auto.offset.reset=oldest',
    ]),
    /^auto\.offset\.reset must be earliest, latest or none, not oldest$/,
  );
});
