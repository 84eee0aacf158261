// What a result line needs to say about where it was measured: the same code on another machine, kernel or
// Node version is another experiment. Gathered once per run, outside any measurement.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface HostInfo {
  node: string;
  platform: string;
  kernel: string;
  cpuCount: number;
  cpuModel: string;
  memoryBytes: number;
  /** 1, 5 and 15 minute load averages when the run started: above the core count, figures are suspect. */
  loadAverage: number[];
  /** Commit of the checkout being measured, if it is a git checkout. */
  commit?: string;
}

export function describeHost(): HostInfo {
  const cpus = os.cpus();
  const info: HostInfo = {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    kernel: os.release(),
    cpuCount: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryBytes: os.totalmem(),
    loadAverage: os.loadavg(),
  };
  try {
    info.commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: 'pipe' }).trim();
  } catch {
    // Not a git checkout (an unpacked release): the other fields still identify the setup.
  }
  return info;
}
