// Memory and CPU of a process, read from Linux's /proc: peak resident set (VmHWM, and VmRSS polled, since
// VmHWM can be reset and is gone once the process exits) and CPU seconds (user + system from /proc/<pid>/stat).
// Works for a child (a broker under test) or for this process (process.pid). Linux only; elsewhere the
// readers return undefined and the figures are left out rather than guessed.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { assert } from '../../src/common/assert.js';

export interface ProcessUsage {
  pid: number;
  /** Largest resident set seen, in bytes; 0 if never readable. */
  peakRssBytes: number;
  /** User plus system CPU time consumed since the process started, in seconds. */
  cpuSeconds: number;
  userSeconds: number;
  systemSeconds: number;
  /** How many times /proc was read while watching. */
  samples: number;
}

export interface ProcessMemory {
  rssBytes: number;
  /** High-water mark of the resident set since start (VmHWM). */
  peakRssBytes: number;
}

export interface ProcessCpu {
  userSeconds: number;
  systemSeconds: number;
}

/** Reads VmRSS and VmHWM of `pid`; undefined once the process is gone or where /proc does not exist. */
export function readProcessMemory(pid: number): ProcessMemory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  return parseProcStatus(text);
}

/** Parses the VmRSS and VmHWM lines (in kB) of a /proc/<pid>/status text. */
export function parseProcStatus(text: string): ProcessMemory | undefined {
  const kb = (field: string): number | undefined => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
    return match ? Number(match[1]) * 1024 : undefined;
  };
  const rssBytes = kb('VmRSS');
  if (rssBytes === undefined) return undefined;
  return { rssBytes, peakRssBytes: kb('VmHWM') ?? rssBytes };
}

/** Reads user and system CPU seconds of `pid`; undefined once the process is gone. */
export function readProcessCpu(pid: number): ProcessCpu | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return parseProcStat(text, clockTicksPerSecond());
}

/**
 * Parses utime and stime (fields 14 and 15, in clock ticks) of a /proc/<pid>/stat line. The command name in
 * field 2 is in parentheses and may itself hold spaces and parentheses, so fields are counted after the last ')'.
 */
export function parseProcStat(text: string, ticksPerSecond: number): ProcessCpu | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  // After ')' come field 3 (state) onwards, so utime (14) is at index 11 and stime (15) at index 12.
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return { userSeconds: utime / ticksPerSecond, systemSeconds: stime / ticksPerSecond };
}

let ticksCached: number | undefined;

/** USER_HZ as the system reports it; 100 on every mainstream Linux, which is the fallback. */
function clockTicksPerSecond(): number {
  if (ticksCached === undefined) {
    try {
      ticksCached = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksCached = 100;
    }
  }
  return ticksCached;
}

export interface ProcessWatch {
  /** Takes a last sample and stops polling; the figures are final from here on. */
  stop(): ProcessUsage;
  /** The figures so far, without stopping. */
  current(): ProcessUsage;
}

/**
 * Polls `pid` every `intervalMs` for its resident set and CPU time. Call stop() before the process exits if you
 * can (its last CPU figure is lost with it); if it has exited, the last sample taken stands.
 */
export function watchProcess(pid: number, intervalMs = 100): ProcessWatch {
  assert(Number.isInteger(pid) && pid > 0, `not a pid: ${pid}`);
  assert(intervalMs >= 1, 'poll interval must be at least 1 ms');
  const usage: ProcessUsage = {
    pid,
    peakRssBytes: 0,
    cpuSeconds: 0,
    userSeconds: 0,
    systemSeconds: 0,
    samples: 0,
  };
  const sample = (): void => {
    const memory = readProcessMemory(pid);
    const cpu = readProcessCpu(pid);
    if (memory) usage.peakRssBytes = Math.max(usage.peakRssBytes, memory.rssBytes, memory.peakRssBytes);
    if (cpu) {
      usage.userSeconds = cpu.userSeconds;
      usage.systemSeconds = cpu.systemSeconds;
      usage.cpuSeconds = cpu.userSeconds + cpu.systemSeconds;
    }
    if (memory || cpu) usage.samples++;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  // The watch must never keep a finished benchmark alive.
  timer.unref();
  let stopped = false;
  return {
    stop() {
      if (!stopped) {
        stopped = true;
        clearInterval(timer);
        sample();
      }
      return { ...usage };
    },
    current() {
      return { ...usage };
    },
  };
}
