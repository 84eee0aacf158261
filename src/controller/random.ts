// Randomness for the controller and topic administration, injected so that a seeded simulation of the cluster
// replays the same replica assignments and topic ids. Production uses the system generator.

import { randomBytes, randomInt } from 'node:crypto';

export interface Random {
  /** An integer in [0, bound). */
  nextInt(bound: number): number;
  /** `length` random bytes. */
  bytes(length: number): Uint8Array;
}

export const systemRandom: Random = {
  nextInt: (bound) => randomInt(bound),
  bytes: (length) => new Uint8Array(randomBytes(length)),
};

/** A deterministic generator (mulberry32) for tests and the simulation. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next32 = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  return {
    nextInt: (bound) => Math.floor((next32() / 0x1_0000_0000) * bound),
    bytes: (length) => {
      const out = new Uint8Array(length);
      for (let i = 0; i < length; i++) out[i] = next32() & 0xff;
      return out;
    },
  };
}

/**
 * A new Kafka Uuid in its text form (16 bytes, unpadded base64url). Like Kafka's Uuid.randomUuid, it never
 * answers the zero id nor the metadata topic's id (1), nor an id whose text starts with '-', which command
 * line tools would take for an option.
 */
export function newUuid(random: Random): string {
  for (;;) {
    const bytes = random.bytes(16);
    const text = Buffer.from(bytes).toString('base64url');
    const zeroPrefix = bytes.subarray(0, 15).every((b) => b === 0);
    if (zeroPrefix && (bytes[15] === 0 || bytes[15] === 1)) continue;
    if (text.startsWith('-')) continue;
    return text;
  }
}
