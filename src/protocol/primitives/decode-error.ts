// A typed error for malformed input. Decoders throw it (and only it) on bad bytes; the network layer turns it
// into a closed connection with a log line, never a crash.

export type DecodeErrorKind =
  | 'truncated'
  | 'negative-length'
  | 'length-exceeds-input'
  | 'bad-varint'
  | 'bad-value'
  | 'unsupported-version'
  | 'unknown-api-key'
  | 'trailing-bytes';

export class DecodeError extends Error {
  override name = 'DecodeError';
  constructor(
    readonly kind: DecodeErrorKind,
    message: string,
    readonly position = -1,
  ) {
    super(position >= 0 ? `${message} at byte ${position}` : message);
  }
}
