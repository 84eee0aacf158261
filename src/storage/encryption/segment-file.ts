// Offline reading of a whole encrypted segment (tools: `brook dump-log`): every chunk the tags cover is verified
// and decrypted; reading stops at the first chunk that fails, and says where.

import { closeSync, fstatSync, openSync } from 'node:fs';
import { ENC_CHUNK_BYTES, SegmentCipher, SegmentIntegrityError, type SegmentKeys } from './segment-cipher.js';

export function readEncryptedSegment(
  logPath: string,
  encPath: string,
  baseOffset: number,
  keys: SegmentKeys,
): { bytes: Buffer; note?: string } {
  const cipher = SegmentCipher.open(encPath, baseOffset, keys);
  const fd = openSync(logPath, 'r');
  try {
    const size = fstatSync(fd).size;
    const authenticated = cipher.authenticatedLength();
    const parts: Buffer[] = [];
    let note: string | undefined;
    if (authenticated > size)
      note = `${logPath}: ${size} bytes, but its tags cover ${authenticated}: truncated`;
    else if (authenticated < size)
      note = `${logPath}: ${size - authenticated} bytes past the authenticated end are not shown`;
    for (let position = 0; position < Math.min(size, authenticated); position += ENC_CHUNK_BYTES) {
      try {
        parts.push(cipher.readSync(fd, position, Math.min(ENC_CHUNK_BYTES, authenticated - position)));
      } catch (err) {
        if (!(err instanceof SegmentIntegrityError)) throw err;
        note = `stopped at position ${position}: ${err.message}`;
        break;
      }
    }
    return note === undefined ? { bytes: Buffer.concat(parts) } : { bytes: Buffer.concat(parts), note };
  } finally {
    closeSync(fd);
    cipher.close();
  }
}
