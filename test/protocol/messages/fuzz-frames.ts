// Mutated-frame fuzzing shared by the quick fuzz test and the slow suite: valid encodings of every
// (API, version) pair, mutated with a seeded generator, fed to the decoders. Every failure must be a
// DecodeError; anything else (a TypeError, a RangeError, a hang) is a bug.

import { apiPairs, loadMessages } from '../../../src/protocol/generator/generate.js';
import type { MessageSchema } from '../../../src/protocol/generator/schema.js';
import { DecodeError, Reader, Writer } from '../../../src/protocol/primitives/index.js';
import { findApi } from '../../../src/protocol/registry.js';
import { SampleBuilder } from './sample-values.js';

export interface Seed {
  readonly what: string;
  readonly version: number;
  readonly bytes: Buffer;
  readonly decode: (r: Reader, version: number) => unknown;
}

/** A small deterministic generator (mulberry32), so a failing frame can be reproduced from its seed. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function encode(
  message: MessageSchema,
  version: number,
  encoder: (w: Writer, v: number, x: unknown) => void,
) {
  const value = new SampleBuilder({ nulls: false, arrayLength: 2 }).struct(message.root, version);
  const w = new Writer();
  encoder(w, version, value);
  return w.toBuffer();
}

/** One valid frame per (API, version, direction). */
export function seedFrames(): Seed[] {
  const seeds: Seed[] = [];
  for (const { request, response } of apiPairs(loadMessages())) {
    const api = findApi(request.apiKey!)!;
    for (let version = api.minVersion; version <= api.maxVersion; version++) {
      seeds.push({
        what: `${request.name} v${version}`,
        version,
        bytes: encode(request, version, api.encodeRequest),
        decode: api.decodeRequest,
      });
      seeds.push({
        what: `${response.name} v${version}`,
        version,
        bytes: encode(response, version, api.encodeResponse),
        decode: api.decodeResponse,
      });
    }
  }
  return seeds;
}

const INTERESTING = [0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe];

/** A copy of `bytes` with one to four random changes: flipped bits, set bytes, cuts and insertions. */
export function mutate(bytes: Buffer, next: () => number): Buffer {
  let out = Buffer.from(bytes);
  const changes = 1 + Math.floor(next() * 4);
  for (let c = 0; c < changes; c++) {
    const at = Math.floor(next() * Math.max(out.length, 1));
    const kind = Math.floor(next() * 5);
    if (kind === 0 && out.length > 0) out[at] = out[at]! ^ (1 << Math.floor(next() * 8));
    else if (kind === 1 && out.length > 0) out[at] = INTERESTING[Math.floor(next() * INTERESTING.length)]!;
    else if (kind === 2) out = out.subarray(0, at);
    else if (kind === 3) {
      const extra = Buffer.alloc(
        1 + Math.floor(next() * 4),
        INTERESTING[Math.floor(next() * INTERESTING.length)]!,
      );
      out = Buffer.concat([out.subarray(0, at), extra, out.subarray(at)]);
    } else if (out.length >= 4)
      out.writeInt32BE(Math.floor(next() * 2 ** 32) - 2 ** 31, Math.min(at, out.length - 4));
  }
  return out;
}

export interface FuzzResult {
  readonly frames: number;
  readonly rejected: number;
}

/**
 * Runs `perSeed` mutations of every seed through its decoder. Throws (with the seed and frame) at the first
 * exception that is not a DecodeError.
 */
export function fuzz(seeds: Seed[], perSeed: number, seed: number): FuzzResult {
  const next = random(seed);
  let frames = 0;
  let rejected = 0;
  for (const s of seeds) {
    for (let i = 0; i < perSeed; i++) {
      const frame = mutate(s.bytes, next);
      frames++;
      try {
        s.decode(new Reader(frame), s.version);
      } catch (e) {
        if (!(e instanceof DecodeError)) {
          throw new Error(`${s.what}: ${String(e)} on frame ${frame.toString('hex')} (seed ${seed})`);
        }
        rejected++;
      }
    }
  }
  return { frames, rejected };
}
