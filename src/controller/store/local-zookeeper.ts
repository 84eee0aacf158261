// Runs a standalone ZooKeeper from Debian's `zookeeper` package as a background process, for development
// (`brook zookeeper start|stop`) and for tests (test/helpers/zookeeper.ts).
//
// Owns: one data directory holding `zoo.cfg`, `zookeeper.pid`, `zookeeper.out` (the server's output) and the
// server's own data under `data/`. The process is started detached so that it outlives the command that
// started it; it is stopped by the PID in the pid file, after checking that the PID still belongs to a
// ZooKeeper started with this directory's zoo.cfg (PIDs get reused). The server listens on 127.0.0.1 only and
// its admin HTTP server is disabled, so that several can run side by side on free ports.

import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import tls from 'node:tls';
import { endingWithParent } from '../../common/end-with-parent.js';

export const ZOOKEEPER_CLASSPATH = '/etc/zookeeper/conf:/usr/share/java/zookeeper.jar';
/**
 * Debian's zookeeper.jar lists netty-handler but not netty-codec in its Class-Path, and the Netty TLS handler
 * needs it (NoClassDefFoundError: io/netty/handler/codec/ByteToMessageDecoder at the first TLS connection).
 */
const NETTY_CODEC_JAR = '/usr/share/java/netty-codec.jar';
const MAIN_CLASS = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';
const PID_FILE = 'zookeeper.pid';
const CONFIG_FILE = 'zoo.cfg';
const OUTPUT_FILE = 'zookeeper.out';

export interface LocalZooKeeperOptions {
  readonly port: number;
  /** Holds the config, pid file, output and the server's data; created if missing. */
  readonly dataDir: string;
  /** ZooKeeper's tick; session timeouts are clamped to [2, 20] ticks unless set below. Default 2000. */
  readonly tickTimeMs?: number;
  readonly minSessionTimeoutMs?: number;
  readonly maxSessionTimeoutMs?: number;
  /** How long to wait for the port to answer. Default 20000. */
  readonly startTimeoutMs?: number;
  readonly javaCommand?: string;
  /**
   * Serve clients over TLS only: `port` becomes the secureClientPort of Netty's connection factory, with no
   * plaintext client port.
   */
  readonly tls?: LocalZooKeeperTls;
  /**
   * SASL DIGEST-MD5: users (name to password) of the JAAS `Server` section; every client must authenticate with
   * SASL (enforce.auth.schemes=sasl) before anything else succeeds, unless saslOptional.
   */
  readonly saslUsers?: Readonly<Record<string, string>>;
  /**
   * With saslUsers: SASL is offered but not enforced, so an unauthenticated client connects and only the znodes'
   * ACLs decide what it may do (how secure ACLs are tested). Default false.
   */
  readonly saslOptional?: boolean;
  /**
   * End the server (SIGKILL) when the process that started it ends, however it ends (SIGKILL and SIGTERM
   * included, which run no exit hook): Linux's parent-death signal, set by util-linux's setpriv just before it
   * runs java. For tests, whose servers must not outlive a killed test process; the CLI's servers outlive their
   * command. The parent is the thread that spawned it, so call this from the main thread. Default false.
   */
  readonly endWithParent?: boolean;
}

export interface LocalZooKeeperTls {
  /** PEM file with the server's private key and certificate chain (ssl.keyStore.location). */
  readonly keyStorePem: string;
  /** PEM file of the CA certificates client certificates are checked against (ssl.trustStore.location). */
  readonly trustStorePem: string;
  /** ssl.clientAuth: need (a trusted client certificate is required), want, none. */
  readonly clientAuth: 'need' | 'want' | 'none';
  /** How the readiness probe connects (CA, and a client certificate when clientAuth is need). */
  readonly probe: tls.ConnectionOptions;
}

export interface LocalZooKeeper {
  readonly pid: number;
  readonly port: number;
  /** zookeeper.connect for this server. */
  readonly connect: string;
  readonly dataDir: string;
}

export function zooKeeperConfig(options: LocalZooKeeperOptions): string {
  const tickTimeMs = options.tickTimeMs ?? 2000;
  const lines = [
    '# Written by brook zookeeper start.',
    `tickTime=${tickTimeMs}`,
    `dataDir=${join(resolve(options.dataDir), 'data')}`,
    ...portLines(options),
    'maxClientCnxns=0',
    'admin.enableServer=false',
    '4lw.commands.whitelist=ruok,srvr,stat,mntr,cons,dump',
  ];
  if (options.minSessionTimeoutMs !== undefined)
    lines.push(`minSessionTimeout=${options.minSessionTimeoutMs}`);
  if (options.maxSessionTimeoutMs !== undefined)
    lines.push(`maxSessionTimeout=${options.maxSessionTimeoutMs}`);
  if (options.saslUsers !== undefined) {
    lines.push('authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider');
    if (options.saslOptional !== true) lines.push('enforce.auth.enabled=true', 'enforce.auth.schemes=sasl');
  }
  return `${lines.join('\n')}\n`;
}

function portLines(options: LocalZooKeeperOptions): string[] {
  if (options.tls === undefined) return [`clientPort=${options.port}`, 'clientPortAddress=127.0.0.1'];
  const t = options.tls;
  return [
    `secureClientPort=${options.port}`,
    'secureClientPortAddress=127.0.0.1',
    'serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory',
    `ssl.keyStore.location=${resolve(t.keyStorePem)}`,
    'ssl.keyStore.type=PEM',
    `ssl.trustStore.location=${resolve(t.trustStorePem)}`,
    'ssl.trustStore.type=PEM',
    `ssl.clientAuth=${t.clientAuth}`,
    // Host names are checked by clients (the servers of a standalone node have no quorum peers to check).
    'ssl.hostnameVerification=false',
  ];
}

/** The JAAS `Server` section of ZooKeeper's DigestLoginModule, one user_<name>="<password>" per user. */
function serverJaas(users: Readonly<Record<string, string>>): string {
  const quote = (v: string) => `"${v.replace(/(["\\])/g, '\\$1')}"`;
  const entries = Object.entries(users).map(([name, password]) => `  user_${name}=${quote(password)}`);
  return `Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n${entries.join('\n')};\n};\n`;
}

/** Starts the server and waits until it serves clients; throws with its output if it does not. */
export async function startLocalZooKeeper(options: LocalZooKeeperOptions): Promise<LocalZooKeeper> {
  const dataDir = resolve(options.dataDir);
  const running = runningPid(dataDir);
  if (running !== null)
    throw new Error(`a ZooKeeper started from ${dataDir} is already running (pid ${running})`);
  mkdirSync(join(dataDir, 'data'), { recursive: true });
  const configPath = join(dataDir, CONFIG_FILE);
  writeFileSync(configPath, zooKeeperConfig(options));
  const outputFd = openSync(join(dataDir, OUTPUT_FILE), 'w');
  const classpath =
    options.tls === undefined ? ZOOKEEPER_CLASSPATH : `${ZOOKEEPER_CLASSPATH}:${NETTY_CODEC_JAR}`;
  const jvm = ['-Xmx256m'];
  if (options.saslUsers !== undefined) {
    const jaasPath = join(dataDir, 'jaas.conf');
    writeFileSync(jaasPath, serverJaas(options.saslUsers), { mode: 0o600 });
    jvm.push(`-Djava.security.auth.login.config=${jaasPath}`);
  }
  const java = [options.javaCommand ?? 'java', ...jvm, '-cp', classpath, MAIN_CLASS, configPath];
  // setpriv execs java in the same process, so the PID below is still the server's.
  const command = options.endWithParent === true ? endingWithParent(java) : java;
  const child = spawn(command[0]!, command.slice(1), {
    detached: true,
    stdio: ['ignore', outputFd, outputFd],
  });
  closeSync(outputFd);
  const spawned = await new Promise<number | Error>((done) => {
    child.once('spawn', () => done(child.pid!));
    child.once('error', done);
  });
  if (spawned instanceof Error) throw new Error(`cannot start ${command[0]}: ${spawned.message}`);
  let exitCode: number | null = null;
  child.once('exit', (code) => {
    exitCode = code ?? -1;
  });
  child.unref();
  writeFileSync(join(dataDir, PID_FILE), `${spawned}\n`);
  const deadline = Date.now() + (options.startTimeoutMs ?? 20_000);
  while (Date.now() < deadline) {
    if (exitCode !== null) break;
    if (await serving(options.port, options.tls?.probe))
      return { pid: spawned, port: options.port, connect: `127.0.0.1:${options.port}`, dataDir };
    await sleep(50);
  }
  await stopLocalZooKeeper(dataDir);
  const output = readOutputTail(dataDir);
  throw new Error(`ZooKeeper on port ${options.port} did not start (exit ${exitCode ?? 'none'}):\n${output}`);
}

/** Stops the server started from dataDir, if it runs; answers whether there was one to stop. */
export async function stopLocalZooKeeper(dataDir: string, timeoutMs = 10_000): Promise<boolean> {
  const dir = resolve(dataDir);
  const pid = runningPid(dir);
  rmSync(join(dir, PID_FILE), { force: true });
  if (pid === null) return false;
  signal(pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await sleep(50);
  }
  signal(pid, 'SIGKILL');
  while (alive(pid)) await sleep(20);
  return true;
}

/** The PID in dataDir's pid file, if that process is alive and is the ZooKeeper of this directory. */
export function runningPid(dataDir: string): number | null {
  const dir = resolve(dataDir);
  const pidPath = join(dir, PID_FILE);
  if (!existsSync(pidPath)) return null;
  const pid = Number.parseInt(readFileSync(pidPath, 'utf8').trim(), 10);
  if (!Number.isSafeInteger(pid) || pid <= 0 || !alive(pid)) return null;
  return isOurServer(pid, join(dir, CONFIG_FILE)) ? pid : null;
}

function isOurServer(pid: number, configPath: string): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return args.includes(MAIN_CLASS) && args.includes(configPath);
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped by its parent) still answers signal 0 but serves nothing.
  try {
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}

/**
 * Whether the server serves sessions yet. It binds its port a good while before it does, so a TCP connect is
 * not enough; `srvr` (whitelisted in the config written above) answers "Zookeeper version: ..." only then.
 */
function serving(port: number, overTls?: tls.ConnectionOptions): Promise<boolean> {
  return new Promise((done) => {
    const socket =
      overTls === undefined
        ? connect({ host: '127.0.0.1', port })
        : tls.connect({ ...overTls, host: '127.0.0.1', port });
    let reply = '';
    const finish = (ready: boolean) => {
      socket.destroy();
      done(ready);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once(overTls === undefined ? 'connect' : 'secureConnect', () => socket.write('srvr'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
    });
    socket.once('end', () => finish(reply.startsWith('Zookeeper version')));
    socket.once('error', () => finish(false));
  });
}

function readOutputTail(dataDir: string): string {
  try {
    return readFileSync(join(dataDir, OUTPUT_FILE), 'utf8').slice(-4000);
  } catch {
    return '(no output)';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
