// The one error the codecs throw on bad input. `kind` tells the broker which Kafka error code to answer with:
// `corrupt` -> CORRUPT_MESSAGE, `too-large` -> CORRUPT_MESSAGE as well (Kafka has no code for a bomb; the batch
// cannot be valid within our limits), `unsupported` -> UNSUPPORTED_COMPRESSION_TYPE.

export type CompressionErrorKind = 'corrupt' | 'too-large' | 'unsupported';

export class CompressionError extends Error {
  override name = 'CompressionError';
  constructor(
    readonly kind: CompressionErrorKind,
    readonly codec: string,
    message: string,
  ) {
    super(`${codec}: ${message}`);
  }
}

/** Wraps whatever a native library threw on bad bytes, keeping its message for the log. */
export function corrupt(codec: string, cause: unknown): CompressionError {
  const text = cause instanceof Error ? cause.message : String(cause);
  return new CompressionError('corrupt', codec, text);
}

export function tooLarge(codec: string, maxBytes: number): CompressionError {
  return new CompressionError('too-large', codec, `output exceeds the limit of ${maxBytes} bytes`);
}
