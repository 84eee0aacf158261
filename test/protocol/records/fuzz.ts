// Mutation fuzzing shared by the fast test (a few thousand cases) and the slow suite (many more): valid
// batches and message sets with every codec, damaged at random, some with their CRC fixed up afterwards so
// that the damage reaches the decompressors and record decoders behind the checksum. Every entry point must
// answer with a verdict or a typed error, never another exception.

import assert from 'node:assert/strict';
import { CompressionError, CompressionType, decompress } from '../../../src/protocol/compression/index.js';
import { DecodeError } from '../../../src/protocol/primitives/index.js';
import {
  BatchFaultError,
  buildBatch,
  buildEndTxnMarkerBatch,
  buildMessageSet,
  decodeMessageSet,
  decodeRecordsBlob,
  downConvertRecords,
  listEntries,
  readRecords,
  upConvertRecords,
  validateBatch,
  validateMessageSet,
  writeBatchCrc,
} from '../../../src/protocol/records/index.js';

/** mulberry32: a small seeded generator, so a failing case can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function corpus(): Buffer[] {
  const records = Array.from({ length: 12 }, (_, i) => ({
    key: i % 3 === 0 ? null : `k${i}`,
    value: `value ${i} `.repeat(i + 2),
    headers: i % 2 ? [{ key: 'h', value: `x${i}` }] : [],
    timestamp: 1_700_000_000_000 + i,
  }));
  const legacy = records.map((r, i) => ({
    offset: i,
    timestamp: r.timestamp,
    key: r.key === null ? null : Buffer.from(r.key),
    value: Buffer.from(r.value),
  }));
  const out: Buffer[] = [];
  for (const codec of [0, 1, 2, 3, 4]) {
    out.push(buildBatch(records, { compression: codec, producerId: 3, producerEpoch: 0, baseSequence: 0 }));
    if (codec !== CompressionType.Zstd) {
      out.push(buildMessageSet(legacy, { magic: 1, compression: codec }));
      out.push(buildMessageSet(legacy, { magic: 0, compression: codec }));
    }
  }
  out.push(buildEndTxnMarkerBatch({ commit: false, coordinatorEpoch: 2, producerId: 3, producerEpoch: 0 }));
  return out;
}

function mutate(input: Buffer, random: () => number): Buffer {
  let bytes = Buffer.from(input);
  const edits = 1 + Math.floor(random() * 4);
  for (let e = 0; e < edits; e++) {
    const pos = Math.floor(random() * bytes.length);
    const kind = random();
    if (kind < 0.45) bytes[pos] = Math.floor(random() * 256);
    else if (kind < 0.6 && pos + 4 <= bytes.length)
      bytes.writeInt32BE(Math.floor(random() * 2 ** 32) | 0, pos);
    else if (kind < 0.7 && pos + 8 <= bytes.length) {
      // int64 extremes, where offsets and timestamps stop being exact numbers.
      bytes.writeBigInt64BE(random() < 0.5 ? 2n ** 63n - 1n : -(2n ** 62n), pos);
    } else if (kind < 0.85) bytes = bytes.subarray(0, pos);
    else bytes = Buffer.concat([bytes, Buffer.from([Math.floor(random() * 256)])]);
  }
  // Half the time, make the CRC right again so the damage is looked at by what lies behind it.
  if (random() < 0.5 && bytes.length >= 61 && bytes[16] === 2 && bytes.readInt32BE(8) + 12 <= bytes.length) {
    if (bytes.readInt32BE(8) >= 49) writeBatchCrc(bytes);
  }
  return bytes;
}

function typed(e: unknown): boolean {
  return e instanceof BatchFaultError || e instanceof DecodeError || e instanceof CompressionError;
}

export interface FuzzTally {
  /** Calls that returned normally. */
  answered: number;
  /** Calls that threw a typed error. */
  refused: number;
  /** Damaged v2 batches that still passed deep validation and were read (the damage was outside the CRC). */
  readAfterValid: number;
  /** Faults found behind a fixed-up CRC: damage that only the records or codec layers could see. */
  deepFaults: number;
}

/** Runs `cases` mutations from `seed`; throws on the first untyped exception. */
export function fuzzRecords(seed: number, cases: number): FuzzTally {
  const tally: FuzzTally = { answered: 0, refused: 0, readAfterValid: 0, deepFaults: 0 };
  const check = (label: string, fn: () => unknown): void => {
    try {
      fn();
      tally.answered++;
    } catch (e) {
      assert.ok(typed(e), `${label}: ${e instanceof Error ? e.stack : String(e)}`);
      tally.refused++;
    }
  };
  const random = seededRandom(seed);
  const inputs = corpus();
  const options = { maxDecompressedBytes: 1 << 20 };
  for (let i = 0; i < cases; i++) {
    const bytes = mutate(inputs[i % inputs.length]!, random);
    const label = `seed ${seed} case ${i}`;
    check(label, () => {
      const { entries } = listEntries(bytes);
      for (const entry of entries) {
        if (entry.magic !== 2) continue;
        const fault = validateBatch(bytes, entry.position, entry.position + entry.sizeInBytes, {
          deep: true,
          ...options,
        });
        // A batch that passed deep validation must also read without any error.
        if (fault === null) {
          readRecords(bytes, entry.position, options);
          tally.readAfterValid++;
        } else if (fault.kind !== 'crc-mismatch' && fault.kind !== 'truncated') {
          tally.deepFaults++;
        }
      }
    });
    check(label, () => validateMessageSet(bytes, 0, bytes.length, options));
    check(label, () => decodeMessageSet(bytes, 0, bytes.length, options));
    check(label, () => decodeRecordsBlob(bytes, 0, bytes.length, options));
    check(label, () => downConvertRecords(bytes, 0, 0, bytes.length, options));
    check(label, () => upConvertRecords(bytes, 0, bytes.length, { ...options, offsets: 'sequential' }));
    for (const codec of [1, 2, 3, 4]) check(label, () => decompress(codec, bytes.subarray(61), 1 << 20));
  }
  return tally;
}
