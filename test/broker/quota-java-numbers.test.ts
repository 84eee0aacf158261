// Quota values read as Kafka's Scala reads them from ZooKeeper (src/broker/quota/java-numbers.ts): Long.parseLong
// and Integer.parseInt take a sign and digits only; Double.parseDouble trims blanks and takes exponents, an f/d
// suffix, NaN and Infinity. What they refuse answers null.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { javaDouble, javaInt, javaLong } from '../../src/broker/quota/java-numbers.js';

describe("quota values read as Kafka's toLong, toInt and toDouble", () => {
  it('toLong: a sign and digits within 64 bits', () => {
    assert.equal(javaLong('1048576'), 1048576);
    assert.equal(javaLong('+5'), 5);
    assert.equal(javaLong('-5'), -5);
    for (const refused of ['', ' 5', '5 ', '1e3', '1.5', '0x10', '9223372036854775808', 'NaN'])
      assert.equal(javaLong(refused), null, JSON.stringify(refused));
  });

  it('toInt: the same within 32 bits', () => {
    assert.equal(javaInt('2147483647'), 2147483647);
    assert.equal(javaInt('2147483648'), null);
    assert.equal(javaInt('1.0'), null);
  });

  it('toDouble: blanks trimmed, exponents, suffixes, NaN and Infinity; not the empty string', () => {
    assert.equal(javaDouble(' 12.5 '), 12.5);
    assert.equal(javaDouble('1e3'), 1000);
    assert.equal(javaDouble('.5'), 0.5);
    assert.equal(javaDouble('5.'), 5);
    assert.equal(javaDouble('2d'), 2);
    assert.equal(javaDouble('-Infinity'), Number.NEGATIVE_INFINITY);
    assert.ok(Number.isNaN(javaDouble('NaN')));
    for (const refused of ['', '.', 'e3', '1e', 'lots', '0x10', 'infinity'])
      assert.equal(javaDouble(refused), null, JSON.stringify(refused));
  });
});
