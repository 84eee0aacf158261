// The options of the benchmarks: flags they parse themselves (`--records 30000`), and checks of values
// parsed by node:util's parseArgs, which answer a message naming the flag instead of running with NaN or 0.
import {
  type CompressionType,
  compressionTypeFromName,
} from '../../src/protocol/compression/compression-type.js';

/** The number after `name` in `args`, or `fallback` when the option or its value is missing. */
export function numberOption(args: readonly string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
}

/** A flag's value that must be a positive integer (a count, a size); throws a message naming the flag otherwise. */
export function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0)
    throw new RangeError(`${flag} needs a positive integer, got '${text}'`);
  return value;
}

/** A flag's value that must be a positive number (a rate, a duration). */
export function positiveNumber(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${flag} needs a positive number, got '${text}'`);
  return value;
}

/** `key=value` pairs of a repeatable flag (`--broker-override`), as an object; throws naming the flag on a bad pair. */
export function parseOverrides(pairs: readonly string[], flag = '--broker-override'): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new RangeError(`${flag} takes key=value, got '${pair}'`);
    overrides[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return overrides;
}

/** A comma-separated list of codec names (none, gzip, snappy, lz4, zstd) as Kafka's codec ids; throws naming the flag. */
export function codecList(flag: string, text: string): CompressionType[] {
  return text.split(',').map((name) => {
    const id = compressionTypeFromName(name.trim());
    if (id === undefined)
      throw new RangeError(`${flag} takes none, gzip, snappy, lz4 or zstd; got '${name}'`);
    return id;
  });
}
