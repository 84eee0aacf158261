// A small seeded pseudo-random generator (mulberry32) for the chaos harness: the nemesis schedule and every
// random choice the harness makes come from it, so a run is replayed by its seed. The network and the
// processes' timing are not seeded, so a replay repeats what was injected and when, not every interleaving.

import assert from 'node:assert/strict';

export class Rng {
  private state: number;

  constructor(seed: number) {
    assert(Number.isSafeInteger(seed), `seed must be an integer, got ${seed}`);
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    assert(max >= min);
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    assert(items.length > 0, 'pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}
