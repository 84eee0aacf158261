// The consumer's async iterator against a scripted loop (the wire path is in client.test.ts's for-await test):
// records of successive polls in order, stop() and errors end it, and a poll is never started twice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type IteratedLoop, RecordIterator } from '../../src/client/record-iterator.js';

/** A loop whose polls return `batches` in turn, then null; counts polls and what runs at once. */
function scripted(batches: (number[] | Error)[]) {
  const state = { running: false, polls: 0, inFlight: 0, maxInFlight: 0 };
  const loop: IteratedLoop<number> = {
    start: () => {
      state.running = true;
    },
    running: () => state.running,
    poll: async () => {
      state.polls++;
      state.inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      await new Promise((r) => setTimeout(r, 5));
      state.inFlight--;
      const next = batches.shift();
      if (next instanceof Error) throw next;
      return next ?? null;
    },
  };
  return { loop, state };
}

describe('the consumer iterator', () => {
  it('hands out the records of each poll in order, polling only when a poll is used up', async () => {
    const { loop, state } = scripted([[1, 2], [3], [4, 5, 6]]);
    const seen: number[] = [];
    for await (const r of new RecordIterator(loop)) seen.push(r);
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
    assert.equal(state.polls, 4, 'three polls with records and the one that ended the loop');
  });

  it('starts the loop with the first next(), not when it is made', async () => {
    const { loop, state } = scripted([[1]]);
    const iterator = new RecordIterator(loop);
    assert.equal(state.running, false);
    assert.deepEqual(await iterator.next(), { value: 1, done: false });
    assert.equal(state.running, true);
  });

  it('ends at the next record once the loop is stopped, without polling again', async () => {
    const { loop, state } = scripted([[1, 2, 3], [4]]);
    const seen: number[] = [];
    for await (const r of new RecordIterator(loop)) {
      seen.push(r);
      if (r === 2) state.running = false;
    }
    assert.deepEqual(seen, [1, 2]);
    assert.equal(state.polls, 1);
  });

  it('rejects with a poll error once, then is done', async () => {
    const { loop } = scripted([[1], new Error('broken')]);
    const iterator = new RecordIterator(loop);
    assert.deepEqual(await iterator.next(), { value: 1, done: false });
    await assert.rejects(iterator.next(), /broken/);
    assert.deepEqual(await iterator.next(), { value: undefined, done: true });
  });

  it('answers next() calls made while a poll waits after it, in order, with one poll at a time', async () => {
    const { loop, state } = scripted([[1, 2], [3]]);
    const iterator = new RecordIterator(loop);
    const results = await Promise.all([iterator.next(), iterator.next(), iterator.next(), iterator.next()]);
    assert.deepEqual(
      results.map((r) => r.value),
      [1, 2, 3, undefined],
    );
    assert.equal(results[3]!.done, true);
    assert.equal(state.maxInFlight, 1);
  });

  it('return() (a break) ends it: later calls are done and nothing more is polled', async () => {
    const { loop, state } = scripted([[1, 2], [3]]);
    const iterator = new RecordIterator(loop);
    await iterator.next();
    assert.deepEqual(await iterator.return(), { value: undefined, done: true });
    assert.deepEqual(await iterator.next(), { value: undefined, done: true });
    assert.equal(state.polls, 1);
  });
});
