// Java .properties parsing: separators, comments, continuations, escapes, whitespace.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  formatProperties,
  PropertiesSyntaxError,
  parseProperties,
} from '../../../src/broker/config/properties-parser.js';

/** A small seeded generator so that a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const ALPHABET = [
  'a',
  'Z',
  '0',
  '.',
  ' ',
  '\t',
  '=',
  ':',
  '#',
  '!',
  '\\',
  '\n',
  '\r',
  '\f',
  'é',
  '\u0001',
  'u',
];

function randomText(next: () => number, lengthMax: number): string {
  let text = '';
  const length = Math.floor(next() * (lengthMax + 1));
  for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(next() * ALPHABET.length)];
  return text;
}

describe('properties parser', () => {
  test('reads key=value, key:value and key value separators', () => {
    const props = parseProperties('a=1\nb:2\nc 3\nd\t=\t4\ne :5\n');
    assert.deepEqual(
      [...props],
      [
        ['a', '1'],
        ['b', '2'],
        ['c', '3'],
        ['d', '4'],
        ['e', '5'],
      ],
    );
  });

  test('skips # and ! comments, also after leading whitespace, and blank lines', () => {
    const props = parseProperties('# comment\n  ! another\n\n   \nkey=value # not a comment\n');
    assert.deepEqual([...props], [['key', 'value # not a comment']]);
  });

  test('a key with no value maps to the empty string', () => {
    assert.equal(parseProperties('empty\n').get('empty'), '');
    assert.equal(parseProperties('empty=\n').get('empty'), '');
  });

  test("continues a line ending in an odd number of backslashes and drops the next line's indentation", () => {
    const props = parseProperties('listeners=PLAINTEXT://a:1,\\\n    SSL://b:2\nnext=x\n');
    assert.equal(props.get('listeners'), 'PLAINTEXT://a:1,SSL://b:2');
    assert.equal(props.get('next'), 'x');
  });

  test('an even number of trailing backslashes is an escaped backslash, not a continuation', () => {
    const props = parseProperties('path=C:\\\\dir\\\\\nother=1\n');
    assert.equal(props.get('path'), 'C:\\dir\\');
    assert.equal(props.get('other'), '1');
  });

  test('a continued line starting with # is value, not a comment', () => {
    assert.equal(parseProperties('a=x\\\n#y\n').get('a'), 'x#y');
  });

  test('a comment line ending in a backslash does not swallow the next line', () => {
    assert.equal(parseProperties('# note \\\nreal=1\n').get('real'), '1');
  });

  test('decodes \\t \\n \\r \\f \\uXXXX and keeps other escaped characters', () => {
    const props = parseProperties('k=a\\tb\\nc\\rd\\fe\\u00e9\\=\\:\\ \\#\n');
    assert.equal(props.get('k'), 'a\tb\nc\rd\fe\u00e9=: #');
  });

  test('escaped separators and spaces belong to the key', () => {
    const props = parseProperties('my\\=key\\ name=v\n');
    assert.equal(props.get('my=key name'), 'v');
  });

  test('keeps trailing whitespace of values, as java.util.Properties does', () => {
    assert.equal(parseProperties('k=v  \n').get('k'), 'v  ');
  });

  test('accepts \\r\\n and \\r line endings', () => {
    const props = parseProperties('a=1\r\nb=2\rc=3');
    assert.deepEqual([...props.values()], ['1', '2', '3']);
  });

  test('a leading byte order mark is not part of the first key', () => {
    assert.deepEqual([...parseProperties('\uFEFFbroker.id=1\n').keys()], ['broker.id']);
  });

  test('the last occurrence of a key wins', () => {
    assert.equal(parseProperties('k=1\nk=2\n').get('k'), '2');
  });

  test('a backslash at the end of the file ends the value', () => {
    assert.equal(parseProperties('k=v\\').get('k'), 'v');
  });

  test('a malformed \\u escape is an error that names the line', () => {
    assert.throws(
      () => parseProperties('ok=1\nbad=\\u12G4\n'),
      (e: unknown) => e instanceof PropertiesSyntaxError && e.line === 2,
    );
  });

  test('formatProperties output parses back to the same map, for many random keys and values', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const props = new Map<string, string>();
      const count = 1 + Math.floor(next() * 5);
      for (let i = 0; i < count; i++) props.set(randomText(next, 8), randomText(next, 12));
      assert.deepEqual(parseProperties(formatProperties(props)), props, `seed ${seed}`);
    }
  });

  test('arbitrary text either parses or fails with a PropertiesSyntaxError', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const text = randomText(random(seed), 60);
      try {
        parseProperties(text);
      } catch (e) {
        assert.ok(e instanceof PropertiesSyntaxError, `seed ${seed}: ${String(e)}`);
      }
    }
  });
});
