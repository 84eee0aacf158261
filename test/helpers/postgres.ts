// A real PostgreSQL server for tests, from Debian's packages (installed by .ci/install): initdb into a fresh
// temporary directory, then `postgres` on a free 127.0.0.1 port with its socket in that directory, stopped
// (fast shutdown, by its PID) and removed afterwards. PostgreSQL refuses to run as root, so as root both run
// as the `postgres` user through setpriv (which execs, so the PID is the server's own). Durability is off
// (fsync=off): tests restart nothing here that relies on it. wal_level=logical leaves room for CDC tests.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { freePort } from './zookeeper.js';

const START_TIMEOUT_MS = 30_000;

export interface PostgresServer {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** connection.url as the JDBC connectors take it. */
  readonly jdbcUrl: string;
  /** A postgres:// URL for the pg package. */
  readonly url: string;
  log(): string;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) throw new Error('PostgreSQL is not installed (bash .ci/install installs it)');
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error(`no PostgreSQL server binaries under ${root}`);
  return join(root, versions[0]!, 'bin');
}

/** The command prefix that runs a PostgreSQL binary as a non-root user. */
function asUser(): { prefix: string[]; uid?: number; gid?: number } {
  if (userInfo().uid !== 0) return { prefix: [] };
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { prefix: ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'], uid, gid };
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'brook-pg-'));
  const user = asUser();
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid!);
  const data = join(dir, 'data');
  const run = (args: string[]) => {
    const [cmd, ...rest] = [...user.prefix, ...args];
    execFileSync(cmd!, rest, { stdio: 'pipe', cwd: dir });
  };
  run([
    join(bin, 'initdb'),
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--no-sync',
    '--locale=C',
  ]);
  const port = await freePort();
  const [cmd, ...args] = [
    ...user.prefix,
    join(bin, 'postgres'),
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'wal_level=logical',
    '-c',
    'max_connections=50',
  ];
  const child: ChildProcess = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => {
    log += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    log += d.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`PostgreSQL did not start in time:\n${log}`)),
        START_TIMEOUT_MS,
      );
      const check = () => {
        if (/database system is ready to accept connections/.test(log)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stderr!.on('data', check);
      child.stdout!.on('data', check);
      exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`PostgreSQL exited before it was ready:\n${log}`));
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    cleanup();
    throw err;
  }
  return {
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    jdbcUrl: `jdbc:postgresql://127.0.0.1:${port}/postgres`,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    log: () => log,
    async stop() {
      // SIGINT is PostgreSQL's fast shutdown: sessions are ended, then it exits.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
      cleanup();
    },
  };
}

/** A server for the tests of a file: started before them, stopped after them whatever happened. */
export function usePostgres(): { readonly server: PostgresServer } {
  let server: PostgresServer | undefined;
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server?.stop();
  });
  return {
    get server() {
      if (server === undefined) throw new Error('PostgreSQL is used before the before hook started it');
      return server;
    },
  };
}
