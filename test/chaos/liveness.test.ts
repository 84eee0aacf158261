// The report's "leaders from outside the ISR" on made-up `leaders` samples: a real unclean election is listed,
// a stale view from a deposed leader (its own metadata at its old epoch, seen in a long-profile run as six
// false elections) is not, and a clean election is not.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Op } from './history.js';
import { leadersOutsideIsr } from './liveness.js';

type Sample = Record<string, { leader: number; leaderEpoch?: number; isr: number[] }>;

function history(...samples: Sample[]): Op[] {
  return samples.map((value, i) => ({
    index: i,
    time: i * 5000,
    type: 'ok',
    process: 'harness',
    f: 'leaders',
    value,
  }));
}

describe('leadersOutsideIsr', () => {
  it('lists a leader elected from outside the previous ISR at a higher epoch', () => {
    const found = leadersOutsideIsr(
      history({ 0: { leader: 2, leaderEpoch: 5, isr: [2] } }, { 0: { leader: 1, leaderEpoch: 6, isr: [1] } }),
    );
    assert.equal(found.length, 1);
    assert.match(found[0]!.text, /leader 1 .* not in the ISR \[2\] of leader 2/);
    assert.doesNotMatch(found[0]!.text, /not seen/);
  });

  it('ignores a deposed leader describing itself at its old epoch', () => {
    // Broker 2 was elected at epoch 6 from ISR [1,2]; broker 1, cut off from the controller, still answers
    // Metadata as leader at epoch 5 with the ISR it last knew; then the cluster's view is back.
    const found = leadersOutsideIsr(
      history(
        { 0: { leader: 1, leaderEpoch: 5, isr: [1, 2] } },
        { 0: { leader: 2, leaderEpoch: 6, isr: [2] } },
        { 0: { leader: 1, leaderEpoch: 5, isr: [2, 1] } },
        { 0: { leader: 2, leaderEpoch: 6, isr: [2, 1] } },
      ),
    );
    assert.deepEqual(found, []);
  });

  it('follows an ISR that grows within one leader epoch before the next election', () => {
    // ISR changes keep the leader epoch: the view at the same epoch with a larger ISR must replace the last one.
    const found = leadersOutsideIsr(
      history(
        { 0: { leader: 1, leaderEpoch: 5, isr: [1] } },
        { 0: { leader: 1, leaderEpoch: 5, isr: [1, 0] } },
        { 0: { leader: 0, leaderEpoch: 6, isr: [0] } },
      ),
    );
    assert.deepEqual(found, []);
  });

  it('does not list a clean election, and says when elections were missed between samples', () => {
    assert.deepEqual(
      leadersOutsideIsr(
        history(
          { 0: { leader: 1, leaderEpoch: 5, isr: [1, 2] } },
          { 0: { leader: 2, leaderEpoch: 6, isr: [2] } },
        ),
      ),
      [],
    );
    const missed = leadersOutsideIsr(
      history(
        { 0: { leader: 2, leaderEpoch: 5, isr: [2] } },
        { 0: { leader: 0, leaderEpoch: 8, isr: [0, 1] } },
      ),
    );
    assert.equal(missed.length, 1);
    assert.match(missed[0]!.text, /2 election\(s\) between the two samples not seen/);
  });

  it('compares every change in histories recorded without epochs', () => {
    const found = leadersOutsideIsr(
      history(
        { 0: { leader: 1, isr: [1, 2] } },
        { 0: { leader: 2, isr: [2] } },
        { 0: { leader: 1, isr: [2] } },
      ),
    );
    assert.equal(found.length, 1);
    assert.equal(found[0]!.time, 10000);
  });
});
