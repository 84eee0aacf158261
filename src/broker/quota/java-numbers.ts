// Quota values read from ZooKeeper documents as Kafka's Scala reads them (`toLong`, `toInt`, `toDouble`): a value
// those refuse (NumberFormatException) is refused here too, answered as null, where JavaScript's Number() would
// take blanks, exponents, hexadecimal and the empty string.

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

/** Java's Long.parseLong, as a number: a sign and decimal digits, nothing else (no blank, no fraction). */
export function javaLong(text: string): number | null {
  if (!/^[+-]?\d+$/.test(text)) return null;
  const value = BigInt(text.startsWith('+') ? text.slice(1) : text);
  return value < LONG_MIN || value > LONG_MAX ? null : Number(value);
}

/** Java's Integer.parseInt: a sign and decimal digits within 32 bits, nothing else. */
export function javaInt(text: string): number | null {
  if (!/^[+-]?\d+$/.test(text)) return null;
  const value = Number(text);
  return value < INT_MIN || value > INT_MAX ? null : value;
}

/**
 * Java's Double.parseDouble for decimal text: blanks around it ignored, a sign, digits with an optional point and
 * exponent, an optional f/d suffix, or NaN and Infinity. Java's hexadecimal form (0x1.8p1) is not read.
 */
export function javaDouble(text: string): number | null {
  const trimmed = javaTrim(text);
  const special = /^([+-]?)(NaN|Infinity)$/.exec(trimmed);
  if (special !== null) return special[2] === 'NaN' ? Number.NaN : Number(`${special[1]}Infinity`);
  const decimal = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[fFdD]?$/.exec(trimmed);
  return decimal === null ? null : Number(decimal[1]);
}

/** Java's String.trim: every character up to U+0020 off both ends. */
function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}
