// Temporary directories of test servers that a test process killed by a signal leaves behind (SIGKILL and SIGTERM
// run no exit hook, so nothing of that process removes them): each directory names its owner, the test process's
// PID and start time, in a file of its own, and the next process to make one of the same kind removes those
// whose owner is gone. A directory is removed only when its owner is not running (the same PID with another
// start time is another process: PIDs are reused), the caller says nothing runs from it, and, for a directory
// without an owner file (made before owners were written, or being made right now), nothing in it changed for an
// hour. Each sweep looks at a bounded number of directories.

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const OWNER_FILE = 'brook-test-owner';
/** A directory without an owner is left alone until nothing in it changed for this long. */
export const UNOWNED_QUIET_MS = 60 * 60 * 1000;
/** The six characters mkdtemp puts after the prefix. */
const MKDTEMP_SUFFIX = /^[A-Za-z0-9]{6}$/;
/** Directories looked at per sweep: a machine with many more is not cleaned in one start, but in a few. */
const SWEEP_DIRS_MAX = 256;

/** A fresh directory under the temporary directory, `prefix` then random characters, owned by this process. */
export function makeOwnedTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, OWNER_FILE), `${process.pid} ${startTimeOf(process.pid) ?? ''}\n`);
  return dir;
}

/**
 * Removes the directories makeOwnedTempDir(prefix) names under the temporary directory whose owner is gone and that `inUse` says
 * nothing runs from; answers the ones removed.
 */
export function sweepOwnedTempDirs(
  prefix: string,
  inUse: (dir: string) => boolean,
  now: number = Date.now(),
): string[] {
  const removed: string[] = [];
  // Without /proc no owner can be told running: every directory would look abandoned.
  if (startTimeOf(process.pid) === null) return removed;
  let names: string[];
  try {
    // Exactly mkdtemp's names for the prefix: another kind of directory that starts the same way
    // ("brook-zk-acl-...", a test's own) is not looked at.
    names = readdirSync(tmpdir()).filter(
      (name) => name.startsWith(prefix) && MKDTEMP_SUFFIX.test(name.slice(prefix.length)),
    );
  } catch {
    return removed;
  }
  for (const name of names.slice(0, SWEEP_DIRS_MAX)) {
    const dir = join(tmpdir(), name);
    try {
      if (!statSync(dir).isDirectory() || !ownerGone(dir, now) || inUse(dir)) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // Removed meanwhile by another sweeping process, or unreadable: not ours to worry about.
    }
  }
  return removed;
}

/** Whether the directory's owner is not running: by its owner file, else by an hour of quiet. */
function ownerGone(dir: string, now: number): boolean {
  let owner: string;
  try {
    owner = readFileSync(join(dir, OWNER_FILE), 'utf8');
  } catch {
    return quietSince(dir) < now - UNOWNED_QUIET_MS;
  }
  const [pidText, startTime] = owner.trim().split(' ');
  const pid = Number(pidText);
  // A file being written (or written by something else) is not proof the owner is gone.
  if (!Number.isSafeInteger(pid) || pid <= 0) return quietSince(dir) < now - UNOWNED_QUIET_MS;
  const running = startTimeOf(pid);
  return running === null || (startTime !== undefined && startTime !== '' && running !== startTime);
}

/** The latest change to the directory or anything directly in it. */
function quietSince(dir: string): number {
  let latest = statSync(dir).mtimeMs;
  for (const name of readdirSync(dir)) {
    try {
      latest = Math.max(latest, statSync(join(dir, name)).mtimeMs);
    } catch {
      // Gone meanwhile.
    }
  }
  return latest;
}

/**
 * A running process's start time (field 22 of /proc/<pid>/stat, in clock ticks since boot), which tells a PID's
 * processes apart; null when no such process runs (a zombie has exited).
 */
function startTimeOf(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: the fields counted start after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z') return null;
  return fields[19] ?? null;
}
