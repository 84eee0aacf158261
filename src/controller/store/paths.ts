// Znode path rules shared by both store implementations, so that a path the in-process store accepts is one
// ZooKeeper accepts too: absolute, '/'-separated, no empty, '.' or '..' segments, no trailing '/', and no
// characters ZooKeeper refuses (NUL and the control ranges).

/** Largest path either store accepts; ZooKeeper has no fixed limit, but a bound keeps bad input cheap. */
export const PATH_LENGTH_MAX = 4096;

/** ZooKeeper's sequential suffix is the parent's count of children ever created, printed with ten digits. */
export const SEQUENCE_DIGITS = 10;

export function isValidPath(path: string): boolean {
  if (path.length === 0 || path.length > PATH_LENGTH_MAX || path[0] !== '/') return false;
  if (path === '/') return true;
  if (path.endsWith('/')) return false;
  for (const segment of path.slice(1).split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return false;
  }
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 0 || (c > 0 && c < 0x1f) || (c > 0x7f && c < 0xa0) || (c >= 0xd800 && c <= 0xf8ff))
      return false;
    if (c >= 0xfff0 && c <= 0xffff) return false;
  }
  return true;
}

/** The parent of a valid path other than the root. */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === 0 ? '/' : path.slice(0, slash);
}

/** The last segment of a valid path other than the root. */
export function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function childPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

export function sequenceSuffix(sequence: number): string {
  // ZooKeeper prints a signed 32-bit counter; it wraps after 2^31 children, which no Kafka path nears.
  return String(sequence).padStart(SEQUENCE_DIGITS, '0');
}
