// Shared by the broker-level encryption-at-rest tests: scratch directories with a key file, every file under a
// directory (read even while a broker replaces some), and `brook server` run to its exit for startup failures.

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after } from 'node:test';
import { SERVER_NODE_FLAGS } from '../../src/cli/server-node-flags.js';
import type { StartOptions } from '../helpers/broker-process.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A fresh root (removed after the file's tests) with where a data directory and a key file go. */
export function scratch(): { root: string; dataDir: string; keyFile: string } {
  const root = mkdtempSync(join(tmpdir(), 'brook-enc-'));
  roots.push(root);
  return { root, dataDir: join(root, 'data'), keyFile: join(root, 'master.key') };
}

/** Broker-wide encryption with the file provider. */
export function fileProvider(keyFile: string): Record<string, string> {
  return {
    'brook.encryption.enable': 'true',
    'brook.encryption.key.provider': 'file',
    'brook.encryption.key.file': keyFile,
    'log.segment.bytes': String(256 * 1024),
  };
}

export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

/** A file's bytes, or none when it went meanwhile (a checkpoint's temporary file, on a running broker). */
export function readIfPresent(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw err;
  }
}

/** Runs `brook server` to its exit (a startup failure); resolves with the exit code and stderr. */
export function serverExit(
  options: StartOptions & { overrides: Record<string, string> },
): Promise<{ code: number | null; stderr: string }> {
  const args = [...SERVER_NODE_FLAGS, join(REPO_ROOT, 'bin/brook'), 'server'];
  const overrides = {
    'broker.id': '0',
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'log.dirs': options.dataDir!,
    'offsets.topic.replication.factor': '1',
    ...options.overrides,
  };
  for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
  return new Promise((done) => {
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...options.env },
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    // A broker that starts after all is killed: the caller's assertion on the exit code then fails.
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(killer);
      done({ code, stderr });
    });
  });
}
