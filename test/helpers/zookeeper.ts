// A throwaway ZooKeeper for a test: Debian's server on a free 127.0.0.1 port in a fresh temporary directory,
// with a short tick so that session expiry can be tested in about a second. stop() kills it by its PID and
// removes the directory; register it with the test's `after` hook (or use withZooKeeper) so that it runs even
// when the test fails. As a last resort, servers still running when the test process exits (an uncaught
// error, a cancelled run) are killed by PID from an exit hook, and a test process killed by a signal (the run's
// timeout, kill -9), which runs no exit hook, takes its servers with it: they are started with the parent-death
// signal (endWithParent). Their temporary directories stay behind then, until the next process that starts a test
// ZooKeeper removes them: each names its owner (owned-temp-dirs.ts), and the first start of a process sweeps the
// directories whose owner is gone and from which no server runs.

import { readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import {
  type LocalZooKeeperTls,
  runningPid,
  startLocalZooKeeper,
  stopLocalZooKeeper,
} from '../../src/controller/store/local-zookeeper.js';
import { makeOwnedTempDir, sweepOwnedTempDirs } from './owned-temp-dirs.js';

const DIR_PREFIX = 'brook-zk-';
/** Whether this process has swept the directories of killed test processes yet (once is enough). */
let swept = false;

/** Directories of servers this process started and has not stopped yet. */
const running = new Set<string>();

process.once('exit', () => {
  // Only synchronous work is possible here: kill by PID (checked to be our server) and remove the directory.
  for (const dir of running) {
    const pid = runningPid(dir);
    if (pid !== null) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

export interface TestZooKeeper {
  readonly connect: string;
  readonly port: number;
  /** The running server's PID (a new one after restart()). */
  readonly pid: number;
  /** kill -9 the server, as a crash does: its data directory stays, the port is free once this answers. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and data directory (after kill()). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Tick of test servers: sessions may be as short as 2 ticks, so 400 ms. */
export const TEST_TICK_MS = 200;

/**
 * A port on 127.0.0.1 that nothing listens on now, for a server a test is about to start. Picked below the kernel's
 * ephemeral range (net.ipv4.ip_local_port_range, from 32768 by default): a port from bind(0) lies in that range, and
 * the outgoing connections of every test running beside this one take their local ports there too, so between this
 * check and the server's own bind one of them could take it (seen in CI: a broker's fourth listener failed with
 * EADDRINUSE). Below the range only another test's pick can collide. Falls back to bind(0) if none is free there.
 */
export async function freePort(): Promise<number> {
  const rangeStart = ephemeralRangeStart();
  for (let attempt = 0; attempt < 50 && rangeStart - PICKED_PORT_MIN > 1000; attempt++) {
    const port = PICKED_PORT_MIN + Math.floor(Math.random() * (rangeStart - PICKED_PORT_MIN));
    if (await canListen(port)) return port;
  }
  return listenOnAnyPort();
}

/** The lowest port tests pick for their servers: above the well-known and registered services most hosts run. */
const PICKED_PORT_MIN = 10_000;

function ephemeralRangeStart(): number {
  try {
    const start = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(start) && start > PICKED_PORT_MIN ? start : PICKED_PORT_MIN;
  } catch {
    return PICKED_PORT_MIN;
  }
}

/** Whether a server could listen on `port` of 127.0.0.1 now (it listens and closes again). */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function listenOnAnyPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(),
      );
    });
  });
}

/**
 * `tls`: serve over TLS only (the port is a secureClientPort), see LocalZooKeeperTls; `saslUsers`: require SASL
 * DIGEST-MD5 with these users (`saslOptional`: offer it without requiring it).
 */
export async function startTestZooKeeper(
  extra: { tls?: LocalZooKeeperTls; saslUsers?: Record<string, string>; saslOptional?: boolean } = {},
): Promise<TestZooKeeper> {
  if (!swept) {
    swept = true;
    sweepOwnedTempDirs(DIR_PREFIX, (dir) => runningPid(dir) !== null);
  }
  const dir = makeOwnedTempDir(DIR_PREFIX);
  let lastError: unknown;
  // Another process may take the free port between our probe and the server's bind; try a few ports.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      const options = {
        port,
        dataDir: dir,
        tickTimeMs: TEST_TICK_MS,
        minSessionTimeoutMs: 2 * TEST_TICK_MS,
        maxSessionTimeoutMs: 60_000,
        tls: extra.tls,
        saslUsers: extra.saslUsers,
        saslOptional: extra.saslOptional,
        endWithParent: true,
      };
      const server = await startLocalZooKeeper(options);
      let pid = server.pid;
      let stopped = false;
      running.add(dir);
      return {
        connect: server.connect,
        port,
        get pid() {
          return pid;
        },
        async kill() {
          const running = runningPid(dir);
          if (running === null) return;
          process.kill(running, 'SIGKILL');
          while (runningPid(dir) !== null) await new Promise((r) => setTimeout(r, 20));
        },
        async restart() {
          pid = (await startLocalZooKeeper(options)).pid;
        },
        async stop() {
          if (stopped) return;
          stopped = true;
          try {
            await stopLocalZooKeeper(dir);
          } finally {
            running.delete(dir);
            rmSync(dir, { recursive: true, force: true });
          }
        },
      };
    } catch (e) {
      lastError = e;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

/** Runs fn with a fresh ZooKeeper that is always stopped afterwards. */
export async function withZooKeeper<T>(fn: (zk: TestZooKeeper) => Promise<T>): Promise<T> {
  const zk = await startTestZooKeeper();
  try {
    return await fn(zk);
  } finally {
    await zk.stop();
  }
}

/** Sends a four-letter word (the test servers allow ruok, srvr, stat, mntr, cons, dump) and answers the reply. */
export function fourLetterWord(port: number, word: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no reply to ${word}`)));
    socket.once('connect', () => socket.write(word));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
    });
    socket.once('end', () => resolve(reply));
    socket.once('error', reject);
  });
}

/** Waits until the server no longer tracks the session (it expired), as its `dump` shows. */
export async function waitForSessionGone(port: number, sessionId: string, timeoutMs = 10_000): Promise<void> {
  const printed = `0x${BigInt(`0x${sessionId}`).toString(16)}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dump = await fourLetterWord(port, 'dump');
    const listed = dump.split(/\s+/).includes(printed);
    if (!listed) return;
    if (Date.now() > deadline) throw new Error(`session ${printed} still alive after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
