// Runs `bin/brook connect-standalone` (or `connect-distributed`) as a process for Connect tests: writes the
// worker properties (REST on a free 127.0.0.1 port unless given) and connector files into a directory, waits for
// "Kafka Connect started", and gives the REST URL. stop() sends SIGTERM and waits; kill() is SIGKILL. Both end
// only this process.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { waitUntil } from './wait.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
const START_TIMEOUT_MS = 30_000;

export interface ConnectWorker {
  readonly url: string;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  stop(): Promise<number | null>;
  kill(): Promise<void>;
  exited(): Promise<number | null>;
}

export function propertiesText(props: Record<string, string | number | boolean>): string {
  return `${Object.entries(props)
    .map(([k, v]) => `${k}=${String(v).replace(/\\/g, '\\\\')}`)
    .join('\n')}\n`;
}

/**
 * A plugin.path directory `dir`/`subdir` holding one module that re-exports a compiled test fixture
 * (test/helpers/<fixture>.js), as a connector author ships a plugin; returns the directory.
 */
export function pluginDirWith(dir: string, fixture: string, subdir = 'plugins'): string {
  const plugins = join(dir, subdir);
  mkdirSync(plugins, { recursive: true });
  const url = new URL(`./${fixture}.js`, import.meta.url).href;
  writeFileSync(join(plugins, `${fixture}.mjs`), `export * from ${JSON.stringify(url)};\n`);
  return plugins;
}

/** Starts a worker; resolves once it serves, rejects with its output when it exits first. */
export async function startConnectWorker(
  dir: string,
  workerProps: Record<string, string | number | boolean>,
  /** Connector files: a config written as a .properties file, or a string written as it is to a .json file. */
  connectors: (Record<string, string | number | boolean> | string)[] = [],
  options: { expectFailure?: boolean; mode?: 'standalone' | 'distributed' } = {},
): Promise<ConnectWorker> {
  const workerFile = join(dir, `worker-${Date.now()}-${Math.random().toString(36).slice(2)}.properties`);
  writeFileSync(
    workerFile,
    propertiesText({ listeners: 'http://127.0.0.1:0', 'offset.flush.interval.ms': 500, ...workerProps }),
  );
  const connectorFiles = connectors.map((c, i) => {
    const json = typeof c === 'string';
    const f = join(dir, `connector-${i}-${Date.now()}.${json ? 'json' : 'properties'}`);
    writeFileSync(f, json ? c : propertiesText(c));
    return f;
  });
  const child: ChildProcess = spawn(
    process.execPath,
    [BROOK, `connect-${options.mode ?? 'standalone'}`, workerFile, ...connectorFiles],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let exitCode: number | null | undefined;
  exited.then((c) => {
    exitCode = c;
  });
  const handle: ConnectWorker = {
    get url() {
      const m = /REST server listening at (http:\/\/[^/\s]+)/.exec(out);
      return m?.[1] ?? '';
    },
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    exited: () => exited,
  };
  if (options.expectFailure) return handle;
  try {
    await waitUntil(
      () => /Kafka Connect started/.test(out) || exitCode !== undefined,
      START_TIMEOUT_MS,
      () => `worker output:\n${out}\n${err}`,
    );
  } catch (e) {
    await handle.kill();
    throw e;
  }
  if (exitCode !== undefined) throw new Error(`connect worker exited with ${exitCode}:\n${out}\n${err}`);
  return handle;
}

/** JSON over HTTP against a worker: status and parsed body (null when empty). */
export async function rest(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text) };
}

/**
 * A distributed worker's properties on a single broker, the same for every Connect test: REST on a free
 * 127.0.0.1 port, group `<prefix>-cluster` with internal topics `<prefix>-configs`, `-offsets`, `-status` at
 * replication factor 1 with one partition each, a 6 s session with 500 ms heartbeats, string converters and
 * 500 ms offset flushes. `overrides` come last; an undefined value removes the key (the worker's default).
 */
export function distributedWorkerProps(
  bootstrap: string,
  prefix: string,
  overrides: Record<string, string | undefined> = {},
): Record<string, string> {
  const props: Record<string, string | undefined> = {
    'bootstrap.servers': bootstrap,
    listeners: 'http://127.0.0.1:0',
    'group.id': `${prefix}-cluster`,
    'config.storage.topic': `${prefix}-configs`,
    'offset.storage.topic': `${prefix}-offsets`,
    'status.storage.topic': `${prefix}-status`,
    'config.storage.replication.factor': '1',
    'offset.storage.replication.factor': '1',
    'status.storage.replication.factor': '1',
    'offset.storage.partitions': '1',
    'status.storage.partitions': '1',
    'session.timeout.ms': '6000',
    'heartbeat.interval.ms': '500',
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'offset.flush.interval.ms': '500',
    ...overrides,
  };
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(props)) if (v !== undefined) out[k] = v;
  return out;
}
