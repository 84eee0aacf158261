// The parent's side of the storage crash tests (crash.slow.ts, encryption/encrypted-crash.test.ts): runs
// crash-writer.js in a child process and kills it with SIGKILL a while after its first acknowledgement.

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WRITER = join(dirname(fileURLToPath(import.meta.url)), 'crash-writer.js');
/** A writer still alive this long after it started is killed anyway (and the test fails: no SIGKILL of ours). */
const WRITER_GUARD_MS = 20_000;

/**
 * Runs the writer with `args` (its log directory, and for an encrypted log the key file) until `killAfterMs`
 * after its first ack, kills it, and returns the offset it started from and the largest it acknowledged.
 */
export function runWriterAndKill(
  args: string[],
  killAfterMs: number,
): Promise<{ acked: number; started: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let acked = -1;
    let started = -1;
    let buffered = '';
    let stderr = '';
    let timer: NodeJS.Timeout | null = null;
    const guard = setTimeout(() => child.kill('SIGKILL'), WRITER_GUARD_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [word, value] = line.split(' ');
        if (word === 'start') started = Number(value);
        if (word === 'ack') {
          acked = Number(value);
          if (timer === null) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (timer !== null) clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`writer exited with ${code}: ${stderr}`));
      else resolve({ acked, started });
    });
  });
}
