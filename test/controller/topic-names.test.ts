import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasCollisionChars, topicNameProblem, topicsCollide } from '../../src/controller/topic-names.js';

test('legal topic names pass and illegal ones are refused with Kafka messages', () => {
  for (const ok of ['orders', 'a.b_c-D9', 'x'.repeat(249), '__consumer_offsets'])
    assert.equal(topicNameProblem(ok), null);
  assert.match(topicNameProblem('')!, /can't be empty/);
  assert.match(topicNameProblem('.')!, /cannot be "\." or "\.\."/);
  assert.match(topicNameProblem('..')!, /cannot be "\." or "\.\."/);
  assert.match(topicNameProblem('x'.repeat(250))!, /longer than 249 characters/);
  for (const bad of ['a b', 'a/b', 'é', 'a:b', 'a*'])
    assert.match(topicNameProblem(bad)!, /illegal, it contains a character/);
});

test("'.' and '_' collide, and a name does not collide with itself", () => {
  assert.equal(hasCollisionChars('a.b'), true);
  assert.equal(hasCollisionChars('ab-c'), false);
  assert.equal(topicsCollide('a.b', 'a_b'), true);
  assert.equal(topicsCollide('a_b', 'a_b'), false);
  assert.equal(topicsCollide('a.b', 'a-b'), false);
});
