// Assertions guard programmer errors (broken invariants). They stay on in production and in tests.
// Operating errors (bad input, full disks, unreachable peers) are explicit results, never assertions.

export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function assert(condition: unknown, message = 'assertion failed'): asserts condition {
  if (!condition) throw new AssertionError(message);
}

export function unreachable(value: never, message = 'unreachable'): never {
  throw new AssertionError(`${message}: ${String(value)}`);
}
