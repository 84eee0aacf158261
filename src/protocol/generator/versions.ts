// Version ranges as Kafka's specifications write them: "3", "0-7", "9+" or "none". A range is inclusive on both
// ends; an open range ("9+") ends at the largest int16, which is what the protocol can carry.

export const VERSION_MAX = 0x7fff;

export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

/** The empty range: `contains` is false for every version. */
export const NO_VERSIONS: VersionRange = { min: 1, max: 0 };

export function parseVersions(text: string | undefined): VersionRange {
  if (text === undefined || text === 'none') return NO_VERSIONS;
  const trimmed = text.trim();
  let match = /^(\d+)\+$/.exec(trimmed);
  if (match) return { min: Number(match[1]), max: VERSION_MAX };
  match = /^(\d+)-(\d+)$/.exec(trimmed);
  if (match) return checked({ min: Number(match[1]), max: Number(match[2]) }, text);
  match = /^(\d+)$/.exec(trimmed);
  if (match) return { min: Number(match[1]), max: Number(match[1]) };
  throw new Error(`bad version range "${text}"`);
}

function checked(range: VersionRange, text: string): VersionRange {
  if (range.min > range.max) throw new Error(`empty version range "${text}"`);
  return range;
}

export function isEmpty(range: VersionRange): boolean {
  return range.min > range.max;
}

export function contains(range: VersionRange, version: number): boolean {
  return version >= range.min && version <= range.max;
}

export function intersect(a: VersionRange, b: VersionRange): VersionRange {
  const min = Math.max(a.min, b.min);
  const max = Math.min(a.max, b.max);
  return min > max ? NO_VERSIONS : { min, max };
}

/** True when `inner` holds every version of `outer` (an empty outer is covered by anything). */
export function covers(inner: VersionRange, outer: VersionRange): boolean {
  return isEmpty(outer) || (inner.min <= outer.min && inner.max >= outer.max);
}

export function formatVersions(range: VersionRange): string {
  if (isEmpty(range)) return 'none';
  if (range.max === VERSION_MAX) return `${range.min}+`;
  return range.min === range.max ? `${range.min}` : `${range.min}-${range.max}`;
}
