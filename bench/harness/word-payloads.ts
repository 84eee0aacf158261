// Compressible record payloads: slices of a text of random words (like log lines), so that the LZ codecs find
// matches as they do on real data. Random bytes would not compress at all, and a codec would only copy them.

import { randomBytes } from 'node:crypto';

const TEXT_BYTES = 1024 * 1024;
const VOCABULARY_WORDS = 2000;

/** A text of words drawn at random from a vocabulary of random lowercase words of 3 to 10 letters. */
function wordText(): Buffer {
  const vocabulary = Array.from({ length: VOCABULARY_WORDS }, () => {
    const letters = randomBytes(3 + (randomBytes(1)[0]! % 8));
    return Array.from(letters, (b) => String.fromCharCode(0x61 + (b % 26))).join('');
  });
  const picks = randomBytes(TEXT_BYTES / 2);
  const words: string[] = [];
  let length = 0;
  for (let i = 0; length < TEXT_BYTES; i += 2) {
    const pick = (picks[i % picks.length]! << 8) | picks[(i + 1) % picks.length]!;
    const word = vocabulary[pick % VOCABULARY_WORDS]!;
    words.push(word);
    length += word.length + 1;
  }
  return Buffer.from(words.join(' ')).subarray(0, TEXT_BYTES);
}

let text: Buffer | undefined;

/** `bytes` of word text from a random place (a view of one shared text; callers must not write to it). */
export function wordPayload(bytes: number): Buffer {
  text ??= wordText();
  if (bytes >= text.length) throw new RangeError(`word payloads are at most ${text.length - 1} bytes`);
  const start = randomBytes(4).readUInt32BE(0) % (text.length - bytes);
  return text.subarray(start, start + bytes);
}
