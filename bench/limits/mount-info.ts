// Which filesystem a path lives on, from /proc/self/mounts, recorded beside disk limits: a figure measured on
// tmpfs or overlayfs is not a disk figure, and the reader of a result file should be able to tell.
import { readFileSync, realpathSync } from 'node:fs';

export interface MountInfo {
  mountPoint: string;
  fsType: string;
  device: string;
}

/** The mount holding `path` (the longest mount point that is a prefix of it); undefined off Linux. */
export function mountOf(path: string): MountInfo | undefined {
  let text: string;
  let real: string;
  try {
    text = readFileSync('/proc/self/mounts', 'utf8');
    real = realpathSync(path);
  } catch {
    return undefined;
  }
  return longestMountPrefix(text, real);
}

/** Picks from a /proc/mounts text the mount whose point is the longest prefix of the absolute path `real`. */
export function longestMountPrefix(mountsText: string, real: string): MountInfo | undefined {
  let best: MountInfo | undefined;
  for (const line of mountsText.split('\n')) {
    const [device, rawPoint, fsType] = line.split(' ');
    if (!device || !rawPoint || !fsType) continue;
    // /proc/mounts escapes spaces and a few other characters as octal.
    const mountPoint = rawPoint.replace(/\\([0-7]{3})/g, (_, o: string) =>
      String.fromCharCode(Number.parseInt(o, 8)),
    );
    const inside = mountPoint === '/' || real === mountPoint || real.startsWith(`${mountPoint}/`);
    if (inside && (best === undefined || mountPoint.length >= best.mountPoint.length))
      best = { mountPoint, fsType, device };
  }
  return best;
}
