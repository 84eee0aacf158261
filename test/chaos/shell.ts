// Runs the system commands the chaos harness needs (ip, iptables, tc, mount) with a time bound. A command that
// fails throws with its output, except through `tryRun`, which teardown uses so that one failed step does not
// stop the others.

import { spawn } from 'node:child_process';

const COMMAND_TIMEOUT_MS = 15_000;

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function tryRun(command: string, args: readonly string[]): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: `${stderr}${e.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export async function run(command: string, args: readonly string[]): Promise<string> {
  const r = await tryRun(command, args);
  if (r.code !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}
