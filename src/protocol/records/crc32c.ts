// CRC32C of a byte range: the native addon (src/native/crc32c.c, three crc32 streams at once) when it was built
// and the CPU has SSE4.2, else @node-rs/crc32. Both give the standard CRC32C; the choice is made once, at load.
// BROOK_DEBUG_PORTABLE_CRC32C=1 forces the library, to compare the two in one sitting
// (`npm run bench -- broker --compare-env BROOK_DEBUG_PORTABLE_CRC32C=1`).

import { createRequire } from 'node:module';
import { crc32c as libraryCrc32c } from '@node-rs/crc32';

interface NativeCrc32c {
  readonly supported: boolean;
  crc32cRange(buffer: Uint8Array, start: number, end: number): number;
}

function loadNative(): NativeCrc32c | null {
  if (process.env.BROOK_DEBUG_PORTABLE_CRC32C === '1') return null;
  try {
    // Built beside the compiled sources (dist/src/native) by tools/build-native.mjs; absent when it was skipped.
    const addon = createRequire(import.meta.url)('../../native/crc32c.node') as NativeCrc32c;
    return addon.supported ? addon : null;
  } catch {
    return null;
  }
}

const native = loadNative();

/** Which implementation this process uses: 'native' or 'library'. */
export const crc32cImplementation: 'native' | 'library' = native !== null ? 'native' : 'library';

const libraryRange = (buf: Buffer, start: number, end: number): number =>
  libraryCrc32c(buf.subarray(start, end)) >>> 0;

/**
 * The CRC32C of buf.subarray(start, end), as an unsigned 32-bit number. A range that is not within buf (a batch
 * whose length field runs past the bytes read) takes the library path, so it means what subarray makes of it, as
 * before the addon: a CRC of fewer bytes, which then does not match.
 */
export const crc32cRange: (buf: Buffer, start: number, end: number) => number =
  native !== null
    ? (buf, start, end) =>
        start >= 0 && start <= end && end <= buf.length
          ? native.crc32cRange(buf, start, end)
          : libraryRange(buf, start, end)
    : libraryRange;
