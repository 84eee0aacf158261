// `brook cluster up|down|status`: a local development cluster. `up` starts a ZooKeeper (Debian's package, see
// `brook zookeeper`) and N broker processes in the background, each with its own port and log directory under
// one cluster directory, and waits until each serves; `down` stops the brokers (SIGTERM, so they shut down
// cleanly) and then ZooKeeper, each by the PID recorded at start; `status` reports which are alive and, for a
// broker the cluster no longer has registered, since when the controller counts it gone and what self-healing
// does about it (its moves' start time, the partitions it is moving, or off).
// `--racks a,b,c` puts broker i in rack racks[i % n] (broker.rack), so rack-aware replica placement and
// follower fetching (replica.selector.class, set with it) can be tried on one machine. `--override key=value`
// (repeatable) passes a broker key to every broker, after the cluster's own settings, so it wins over them; the
// four keys that must differ per broker are the cluster's to set. An authorizer given so comes with super.users
// (unless super.users is given too), as a Kafka operator would configure it: User:ANONYMOUS on a plaintext cluster,
// User:broker and User:admin on a --secure one. The brokers need CLUSTER_ACTION among themselves, and Kafka grants
// it to no principal implicitly.
//
// `restart --rolling` restarts the brokers of a running cluster one at a time, the controller last, as Kafka's
// rolling-restart procedure asks: it checks that the cluster is healthy (every broker registered, no partition
// under-replicated), stops one broker with SIGTERM (a controlled shutdown: its leaderships move first), starts it
// again with the same arguments, waits until it is registered and no partition is under-replicated, and goes on;
// when the cluster does not become healthy within --timeout-ms (default 120000) it stops and says why, leaving
// the other brokers as they are. Not yet for --secure clusters.
//
// `--secure` starts the same cluster with SASL_SSL as its only listener, between brokers too: throw-away
// certificates from `brook certs` under <dir>/certs, SASL PLAIN and SCRAM-SHA-256/512, a broker login and an admin
// user with random passwords, <dir>/client.properties holding the admin's client settings for the tools'
// --command-config and <dir>/kcat.conf the same for kcat -F; the passwords live only in that directory.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Admin } from '../client/admin.js';
import { startLocalZooKeeper, stopLocalZooKeeper } from '../controller/store/local-zookeeper.js';
import { writeDevCertificates } from '../security/dev-certs.js';
import { goneBrokerNote, readStoredBrokerState, selfHealingTimeout } from './self-healing-report.js';
import { SERVER_NODE_FLAGS } from './server-node-flags.js';

const USAGE = `usage: brook cluster up [--brokers N] [--base-port P] [--zookeeper-port Z] [--dir D] [--racks R1,R2,...]
                       [--secure] [--override key=value ...]
       brook cluster down [--dir D]
       brook cluster restart --rolling [--dir D] [--timeout-ms T]
       brook cluster status [--dir D]
`;
const DEFAULTS = { brokers: 3, basePort: 9092, zookeeperPort: 2181, dir: './cluster' };
const BROKERS_MAX = 16;
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;
/** Kafka's rack-aware selector (KIP-392): with racks, consumers that give a client.rack fetch from their rack. */
const RACK_AWARE_SELECTOR = 'org.apache.kafka.common.replica.RackAwareReplicaSelector';
const RACK_NAME = /^[A-Za-z0-9._-]+$/;
/** Set by `up` for each broker, so not settable for all at once. */
const PER_BROKER_KEYS = new Set([
  'broker.id',
  'node.id',
  'listeners',
  'log.dirs',
  'log.dir',
  'zookeeper.connect',
]);
const BIN = fileURLToPath(new URL('../../../bin/brook', import.meta.url));

interface Options {
  action: string;
  brokers: number;
  basePort: number;
  zookeeperPort: number;
  dir: string;
  /** broker.rack of broker i is racks[i % racks.length]; empty for no racks. */
  racks: string[];
  /** --override key=value for every broker, in order. */
  overrides: Map<string, string>;
  /** SASL_SSL everywhere, with development certificates and generated passwords. */
  secure: boolean;
  /** restart: one broker at a time. */
  rolling: boolean;
  /** restart: how long to wait for the cluster to be healthy around each broker. */
  timeoutMs: number;
}

function parse(args: string[]): Options | string {
  const o: Options = {
    action: '',
    ...DEFAULTS,
    racks: [],
    overrides: new Map(),
    secure: false,
    rolling: false,
    timeoutMs: 120_000,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = (): number => Number(args[++i]);
    if (arg === '--brokers') o.brokers = value();
    else if (arg === '--base-port') o.basePort = value();
    else if (arg === '--zookeeper-port') o.zookeeperPort = value();
    else if (arg === '--dir') o.dir = args[++i] ?? '';
    else if (arg === '--racks') o.racks = (args[++i] ?? '').split(',');
    else if (arg === '--secure') o.secure = true;
    else if (arg === '--rolling') o.rolling = true;
    else if (arg === '--timeout-ms') o.timeoutMs = value();
    else if (arg === '--override') {
      const pair = args[++i] ?? '';
      const eq = pair.indexOf('=');
      if (eq <= 0) return `--override expects key=value, got '${pair}'`;
      const key = pair.slice(0, eq).trim();
      if (PER_BROKER_KEYS.has(key)) return `--override ${key} is set per broker by brook cluster`;
      o.overrides.set(key, pair.slice(eq + 1));
    } else if (o.action === '' && !arg.startsWith('-')) o.action = arg;
    else return `unexpected argument '${arg}'`;
  }
  if (!['up', 'down', 'status', 'restart'].includes(o.action)) return 'say up, down, status or restart';
  if (o.action === 'restart' && !o.rolling) return 'restart needs --rolling (one broker at a time)';
  if (!Number.isInteger(o.timeoutMs) || o.timeoutMs < 1) return '--timeout-ms must be a positive integer';
  if (!Number.isInteger(o.brokers) || o.brokers < 1 || o.brokers > BROKERS_MAX)
    return `--brokers must be 1-${BROKERS_MAX}`;
  if (!Number.isInteger(o.basePort) || o.basePort < 1 || o.basePort + o.brokers > 65535)
    return 'bad --base-port';
  if (o.dir === '') return '--dir needs a value';
  if (o.racks.some((r) => !RACK_NAME.test(r)))
    return '--racks takes comma-separated rack names (letters, digits, ., _, -)';
  return o;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** What `up` records of each broker: enough to stop it, and to start it again the same way. */
interface BrokerRecord {
  id: number;
  pid: number;
  /** Absent in records of older versions. */
  port?: number;
  args?: string[];
  secure?: boolean;
}

function brokerPids(dir: string): BrokerRecord[] {
  const file = join(dir, 'brokers.json');
  if (!existsSync(file)) return [];
  return JSON.parse(readFileSync(file, 'utf8')) as BrokerRecord[];
}

async function waitForLine(path: string, pattern: RegExp, pid: number): Promise<boolean> {
  const started = Date.now();
  while (Date.now() - started < START_TIMEOUT_MS) {
    if (existsSync(path) && pattern.test(readFileSync(path, 'utf8'))) return true;
    if (!alive(pid)) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

function rackOverrides(racks: readonly string[], id: number): Record<string, string> {
  if (racks.length === 0) return {};
  return { 'broker.rack': racks[id % racks.length]!, 'replica.selector.class': RACK_AWARE_SELECTOR };
}

/**
 * super.users for a cluster given an authorizer (--override authorizer.class.name=...) without super.users. Kafka
 * grants the brokers nothing implicitly, so without it they could not replicate (CLUSTER_ACTION), and nobody could
 * create the first ACLs. Plaintext: User:ANONYMOUS, the brokers' principal on PLAINTEXT, which every plaintext client
 * shares. Secured (--secure): the brokers' SASL user and the admin user whose settings client.properties holds, as
 * a Kafka operator configures them. A super.users override wins.
 */
function authorizerOverrides(o: Options): Record<string, string> {
  const authorizer = o.overrides.get('authorizer.class.name')?.trim() ?? '';
  if (authorizer === '' || o.overrides.has('super.users')) return {};
  return { 'super.users': o.secure ? 'User:broker;User:admin' : 'User:ANONYMOUS' };
}

/**
 * The keys of a SASL_SSL-only cluster, and client.properties for its admin user. A cluster directory started
 * secured before keeps its passwords, so that the users' settings stay valid.
 */
function securedSettings(dir: string): string {
  const secrets = join(dir, 'secrets.json');
  // New certificates at each start (a cluster that runs is never restarted over them); client.properties points at
  // the new CA.
  const certs = writeDevCertificates({ dir: join(dir, 'certs') });
  const { broker, admin } = existsSync(secrets)
    ? (JSON.parse(readFileSync(secrets, 'utf8')) as { broker: string; admin: string })
    : { broker: randomBytes(18).toString('base64url'), admin: randomBytes(18).toString('base64url') };
  writeFileSync(secrets, JSON.stringify({ broker, admin }), { mode: 0o600 });
  const plain = 'org.apache.kafka.common.security.plain.PlainLoginModule required';
  writeFileSync(
    join(dir, 'client.properties'),
    [
      'security.protocol=SASL_SSL',
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${certs.caCert}`,
      'sasl.mechanism=PLAIN',
      `sasl.jaas.config=${plain} username="admin" password="${admin}";`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  // kcat -F reads librdkafka's names.
  writeFileSync(
    join(dir, 'kcat.conf'),
    [
      'security.protocol=SASL_SSL',
      `ssl.ca.location=${certs.caCert}`,
      'sasl.mechanisms=PLAIN',
      'sasl.username=admin',
      `sasl.password=${admin}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const settings = {
    'listener.security.protocol.map': 'SASL_SSL:SASL_SSL',
    'security.inter.broker.protocol': 'SASL_SSL',
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    'listener.name.sasl_ssl.plain.sasl.jaas.config': `${plain} username="broker" password="${broker}" user_broker="${broker}" user_admin="${admin}";`,
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': certs.brokerKeystorePem,
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': certs.caCert,
  };
  // A config file rather than --override, so that the passwords do not show in the process list.
  const path = join(dir, 'secured.properties');
  const lines = Object.entries(settings).map(([k, v]) => `${k}=${v}`);
  writeFileSync(path, `${lines.join('\n')}\n`, { mode: 0o600 });
  return path;
}

async function up(o: Options): Promise<number> {
  const dir = resolve(o.dir);
  if (brokerPids(dir).some((b) => alive(b.pid))) {
    process.stderr.write(`brook cluster: a cluster from ${dir} is already running\n`);
    return 1;
  }
  mkdirSync(dir, { recursive: true });
  const securedConfig = o.secure ? securedSettings(dir) : null;
  const protocol = o.secure ? 'SASL_SSL' : 'PLAINTEXT';
  const superUsers = authorizerOverrides(o);
  if (superUsers['super.users'] !== undefined) {
    process.stdout.write(
      `authorizer on: super.users=${superUsers['super.users']} (${o.secure ? "the brokers' and the admin's SASL users" : "the brokers' principal on PLAINTEXT, which every plaintext client shares"}; --override super.users=... to choose)\n`,
    );
  }
  const zk = await startLocalZooKeeper({ port: o.zookeeperPort, dataDir: join(dir, 'zookeeper') });
  process.stdout.write(`zookeeper on ${zk.connect} (pid ${zk.pid})\n`);
  const started: BrokerRecord[] = [];
  for (let id = 0; id < o.brokers; id++) {
    const port = o.basePort + id;
    const logDir = join(dir, `broker-${id}`);
    mkdirSync(logDir, { recursive: true });
    const out = join(logDir, 'server.out');
    const fd = openSync(out, 'w');
    const overrides = {
      'broker.id': id,
      listeners: `${protocol}://127.0.0.1:${port}`,
      'log.dirs': logDir,
      'zookeeper.connect': zk.connect,
      'default.replication.factor': Math.min(3, o.brokers),
      'offsets.topic.replication.factor': Math.min(3, o.brokers),
      'transaction.state.log.replication.factor': Math.min(3, o.brokers),
      'transaction.state.log.min.isr': o.brokers >= 3 ? 2 : 1,
      'min.insync.replicas': o.brokers >= 3 ? 2 : 1,
      ...rackOverrides(o.racks, id),
      ...superUsers,
      ...Object.fromEntries(o.overrides),
    };
    const args = [...SERVER_NODE_FLAGS, BIN, 'server'];
    if (securedConfig !== null) args.push('--config', securedConfig);
    for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
    const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', fd, fd] });
    child.unref();
    started.push({ id, pid: child.pid!, port, args, secure: o.secure });
    writeFileSync(join(dir, 'brokers.json'), JSON.stringify(started));
    if (!(await waitForLine(out, /listening on/, child.pid!))) {
      process.stderr.write(`brook cluster: broker ${id} did not start; see ${out}\n`);
      return 1;
    }
    const rack = o.racks.length > 0 ? ` rack ${o.racks[id % o.racks.length]}` : '';
    process.stdout.write(`broker ${id} on 127.0.0.1:${port}${rack} (pid ${child.pid})\n`);
  }
  process.stdout.write(
    `bootstrap servers: ${started.map((b) => `127.0.0.1:${o.basePort + b.id}`).join(',')}\n`,
  );
  if (o.secure) {
    const properties = join(dir, 'client.properties');
    process.stdout.write(
      `secured: SASL_SSL only (PLAIN, SCRAM-SHA-256/512), between brokers too; the admin user's settings are in ${properties}\n` +
        `  bin/brook topics --bootstrap-server 127.0.0.1:${o.basePort} --command-config ${properties} --list\n` +
        `  kcat -b 127.0.0.1:${o.basePort} -F ${join(dir, 'kcat.conf')} -L\n`,
    );
  }
  return 0;
}

async function down(o: Options): Promise<number> {
  const dir = resolve(o.dir);
  for (const b of brokerPids(dir)) {
    if (!alive(b.pid)) continue;
    process.kill(b.pid, 'SIGTERM');
    const started = Date.now();
    while (alive(b.pid) && Date.now() - started < STOP_TIMEOUT_MS)
      await new Promise((r) => setTimeout(r, 100));
    if (alive(b.pid)) process.kill(b.pid, 'SIGKILL');
    process.stdout.write(`broker ${b.id} stopped\n`);
  }
  rmSync(join(dir, 'brokers.json'), { force: true });
  const zk = await stopLocalZooKeeper(join(dir, 'zookeeper'));
  process.stdout.write(zk ? 'zookeeper stopped\n' : 'no zookeeper was running\n');
  return 0;
}

async function status(o: Options): Promise<number> {
  const brokers = brokerPids(resolve(o.dir));
  if (brokers.length === 0) process.stdout.write('no cluster brokers recorded\n');
  const notes = await goneNotes(brokers);
  for (const b of brokers) {
    const note = notes?.get(b.id);
    process.stdout.write(
      `broker ${b.id} pid ${b.pid}: ${alive(b.pid) ? 'running' : 'stopped'}${note ? `; ${note}` : ''}\n`,
    );
  }
  return brokers.some((b) => alive(b.pid)) ? 0 : 1;
}

/**
 * For each broker not registered in the cluster's ZooKeeper: since when the controller counts it gone and what
 * self-healing does, from the controller's own record (self-healing-report.ts). Null when nothing answers.
 */
async function goneNotes(brokers: readonly BrokerRecord[]): Promise<Map<number, string> | null> {
  const connect = brokers
    .flatMap((b) => b.args ?? [])
    .find((a) => a.startsWith('zookeeper.connect='))
    ?.slice('zookeeper.connect='.length);
  const running = brokers.filter((b) => alive(b.pid) && b.port !== undefined);
  if (connect === undefined || running.length === 0) return null;
  const state = await readStoredBrokerState(connect);
  if (state === null) return null;
  let timeoutMs: number | null = null;
  // A secured cluster's admin needs its client settings; there the note goes without the timeout.
  if (!running.some((b) => b.secure)) {
    const admin = new Admin({
      bootstrapServers: running.map((b) => `127.0.0.1:${b.port}`).join(','),
      clientId: 'brook-cluster-status',
    });
    try {
      const controllerId = await admin.describeCluster().then(
        (c) => c.controllerId,
        () => -1,
      );
      timeoutMs = await selfHealingTimeout(admin, controllerId);
    } finally {
      await admin.close();
    }
  }
  const now = Date.now();
  const notes = new Map<number, string>();
  for (const b of brokers) {
    const note = goneBrokerNote(b.id, state, timeoutMs, now);
    if (note !== null) notes.set(b.id, note);
  }
  return notes;
}

async function stopBroker(b: BrokerRecord): Promise<void> {
  if (!alive(b.pid)) return;
  process.kill(b.pid, 'SIGTERM');
  const started = Date.now();
  while (alive(b.pid) && Date.now() - started < STOP_TIMEOUT_MS) await new Promise((r) => setTimeout(r, 100));
  if (alive(b.pid)) process.kill(b.pid, 'SIGKILL');
}

/** Why the cluster is not healthy (a broker not registered, partitions under-replicated), or null when it is. */
async function unhealthy(admin: Admin, ids: readonly number[]): Promise<string | null> {
  try {
    const registered = new Set((await admin.describeCluster()).brokers.map((b) => b.nodeId));
    const missing = ids.filter((id) => !registered.has(id));
    if (missing.length > 0) return `broker ${missing.join(',')} not registered`;
    const under: string[] = [];
    for (const t of await admin.describeTopics())
      for (const p of t.partitions)
        if (p.isr.length < p.replicas.length) under.push(`${t.topic}-${p.partition}`);
    if (under.length > 0)
      return `${under.length} under-replicated partitions (${under.slice(0, 5).join(', ')}${under.length > 5 ? ', ...' : ''})`;
    return null;
  } catch (e) {
    return `the cluster does not answer: ${e instanceof Error ? e.message : String(e)}`;
  }
}

async function waitHealthy(admin: Admin, ids: readonly number[], timeoutMs: number): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const problem = await unhealthy(admin, ids);
    if (problem === null || Date.now() > deadline) return problem;
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function restart(o: Options): Promise<number> {
  const dir = resolve(o.dir);
  const brokers = brokerPids(dir);
  if (brokers.length === 0) {
    process.stderr.write(`brook cluster: no cluster brokers recorded in ${dir}\n`);
    return 1;
  }
  if (brokers.some((b) => b.args === undefined || b.port === undefined)) {
    process.stderr.write(
      'brook cluster: this cluster was started by an older brook; restart it with down and up\n',
    );
    return 1;
  }
  if (brokers.some((b) => b.secure)) {
    process.stderr.write('brook cluster: restart --rolling does not support --secure clusters yet\n');
    return 1;
  }
  const ids = brokers.map((b) => b.id);
  const admin = new Admin({
    bootstrapServers: brokers.map((b) => `127.0.0.1:${b.port}`).join(','),
    clientId: 'brook-cluster-restart',
  });
  try {
    const controllerId = await admin.describeCluster().then(
      (c) => c.controllerId,
      () => -1,
    );
    // The controller last, so that the cluster changes controller once rather than at every step.
    const order = [...brokers].sort(
      (a, b) => Number(a.id === controllerId) - Number(b.id === controllerId) || a.id - b.id,
    );
    for (const b of order) {
      const before = await waitHealthy(admin, ids, o.timeoutMs);
      if (before !== null) {
        process.stderr.write(
          `brook cluster: aborting the rolling restart before broker ${b.id}: ${before}\n`,
        );
        return 1;
      }
      process.stdout.write(`broker ${b.id}: controlled shutdown\n`);
      await stopBroker(b);
      const logDir = join(dir, `broker-${b.id}`);
      const out = join(logDir, 'server.out');
      if (existsSync(out)) renameSync(out, join(logDir, 'server.out.1'));
      const fd = openSync(out, 'w');
      const child = spawn(process.execPath, b.args!, { detached: true, stdio: ['ignore', fd, fd] });
      child.unref();
      b.pid = child.pid!;
      writeFileSync(join(dir, 'brokers.json'), JSON.stringify(brokers));
      if (!(await waitForLine(out, /listening on/, b.pid))) {
        process.stderr.write(`brook cluster: broker ${b.id} did not start again; see ${out}\n`);
        return 1;
      }
      const after = await waitHealthy(admin, ids, o.timeoutMs);
      if (after !== null) {
        process.stderr.write(`brook cluster: aborting the rolling restart after broker ${b.id}: ${after}\n`);
        return 1;
      }
      process.stdout.write(`broker ${b.id} restarted (pid ${b.pid}); no partition under-replicated\n`);
    }
    process.stdout.write('rolling restart done\n');
    return 0;
  } finally {
    await admin.close();
  }
}

export async function runClusterCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const o = parse(args);
  if (typeof o === 'string') {
    process.stderr.write(`brook cluster: ${o}\n${USAGE}`);
    return 2;
  }
  try {
    if (o.action === 'up') return await up(o);
    if (o.action === 'down') return await down(o);
    if (o.action === 'restart') return await restart(o);
    return await status(o);
  } catch (err) {
    process.stderr.write(`brook cluster: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
