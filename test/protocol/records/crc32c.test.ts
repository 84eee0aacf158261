import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { crc32c } from '@node-rs/crc32';
import { crc32cImplementation, crc32cRange } from '../../../src/protocol/records/crc32c.js';

// The native addon runs three crc32 streams over blocks of 8 KiB, then of 256 bytes, then 8 bytes at a time, then
// byte by byte: these lengths sit on each side of every hand-over (3 x 8 KiB = 24576, 3 x 256 = 768).
const lengths = [
  0,
  1,
  7,
  8,
  9,
  255,
  767,
  768,
  769,
  775,
  24575,
  24576,
  24577,
  25344,
  25345,
  49152,
  131072,
  131072 + 13,
];

const library = (buf: Buffer, start: number, end: number): number => crc32c(buf.subarray(start, end)) >>> 0;

describe('CRC32C of a byte range', () => {
  it('is the native addon wherever the build compiles it (x86-64 with a C compiler)', (t) => {
    const built = existsSync(new URL('../../../src/native/crc32c.node', import.meta.url));
    // CI installs a C compiler (.ci/install), so there the addon must have been built: a silent fallback would leave
    // the native path untested.
    if (process.env.CI === 'true')
      assert.ok(built, 'CI builds the addon (npm run build, tools/build-native.mjs)');
    if (process.arch !== 'x64' || !built) {
      t.skip(`no addon on ${process.arch}: the library is used`);
      return;
    }
    assert.equal(crc32cImplementation, 'native');
  });

  it('gives the standard check value', () => {
    assert.equal(crc32cRange(Buffer.from('123456789'), 0, 9), 0xe3069283);
  });

  it('agrees with the library at every block hand-over and at unaligned starts', () => {
    const buf = randomBytes(131072 + 64);
    for (const length of lengths) {
      for (const start of [0, 1, 5, 13]) {
        assert.equal(
          crc32cRange(buf, start, start + length),
          library(buf, start, start + length),
          `${length}@${start}`,
        );
      }
    }
  });

  it('agrees with the library on random ranges', () => {
    const buf = randomBytes(200_000);
    for (let i = 0; i < 500; i++) {
      const start = Math.floor(Math.random() * 1000);
      const end = start + Math.floor(Math.random() * (buf.length - start));
      assert.equal(crc32cRange(buf, start, end), library(buf, start, end), `[${start}, ${end})`);
    }
  });

  it('gives the same answers in worker threads, which load the addon again (stream threads do)', async () => {
    const moduleUrl = new URL('../../../src/protocol/records/crc32c.js', import.meta.url).href;
    const source = `
      const { parentPort } = await import('node:worker_threads');
      const { crc32cImplementation, crc32cRange } = await import(${JSON.stringify(moduleUrl)});
      const buf = Buffer.alloc(100_000, 7);
      parentPort.postMessage([crc32cImplementation, crc32cRange(buf, 3, 99_999)]);`;
    const answers = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<unknown>((resolve, reject) => {
            const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`));
            worker.once('message', (message) => {
              void worker.terminate();
              resolve(message);
            });
            worker.once('error', reject);
          }),
      ),
    );
    const buf = Buffer.alloc(100_000, 7);
    for (const answer of answers) assert.deepEqual(answer, [crc32cImplementation, library(buf, 3, 99_999)]);
  });

  it('reads a range past the buffer as subarray does, fewer bytes and no fault', () => {
    const buf = randomBytes(1000);
    assert.equal(crc32cRange(buf, 10, 5000), library(buf, 10, 1000));
    assert.equal(crc32cRange(buf, 10, 4), 0, 'an empty range');
  });
});
