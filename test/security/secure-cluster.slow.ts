// `brook cluster up --secure`: a development cluster whose only listener is SASL_SSL, between brokers too. The
// admin's settings it writes work unchanged with `brook topics --command-config` and `kcat -F`; a topic created
// with replication factor 2 gets both brokers in its ISR (the follower fetched over SASL_SSL); the passwords are
// not on the brokers' command lines; `brook cluster down` stops everything. Given an authorizer, the brokers' and
// the admin's users are made super users, so the same cluster still replicates and can be administered.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, it } from 'node:test';
import { run } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { canListen, freePort } from '../helpers/zookeeper.js';

/** A port whose next one is free too, for the two brokers' --base-port. */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (await canListen(port + 1)) return port;
  }
}

const BIN = resolve(import.meta.dirname, '../../../bin/brook');
const root = mkdtempSync(join(tmpdir(), 'brook-secure-cluster-'));

after(async () => {
  for (const name of ['cluster', 'acl-cluster']) {
    await run(process.execPath, [BIN, 'cluster', 'down', '--dir', join(root, name)]);
  }
  rmSync(root, { recursive: true, force: true });
});

/** `brook cluster up --secure` with two brokers in `dir`; answers the first broker's port and the output. */
async function upSecured(dir: string, extra: string[] = []): Promise<{ base: number; stdout: string }> {
  const base = await freePortPair();
  const zookeeperPort = await freePort();
  const up = await run(
    process.execPath,
    [
      BIN,
      'cluster',
      'up',
      '--secure',
      '--brokers',
      '2',
      '--base-port',
      String(base),
      '--zookeeper-port',
      String(zookeeperPort),
      '--dir',
      dir,
      ...extra,
    ],
    { timeoutMs: 90_000 },
  );
  assert.equal(up.code, 0, up.stderr + up.stdout);
  assert.match(up.stdout, /secured: SASL_SSL only/);
  return { base, stdout: up.stdout };
}

/**
 * As the admin of the written settings: creates a topic with replication factor 2 (`brook topics
 * --command-config`), produces two records with acks=all and reads them back (`kcat -F`), and waits for both
 * brokers in the ISR (the follower fetched over SASL_SSL).
 */
async function replicatesAsAdmin(dir: string, base: number): Promise<void> {
  const created = await run(process.execPath, [
    BIN,
    'topics',
    '--bootstrap-server',
    `127.0.0.1:${base}`,
    '--command-config',
    join(dir, 'client.properties'),
    '--create',
    '--topic',
    'secured',
    '--partitions',
    '1',
    '--replication-factor',
    '2',
  ]);
  assert.equal(created.code, 0, created.stderr);
  const kcat = (args: string[], input?: string) =>
    run('kcat', ['-b', `127.0.0.1:${base}`, '-F', join(dir, 'kcat.conf'), ...args], {
      input,
      timeoutMs: 20_000,
    });
  const produced = await kcat(['-t', 'secured', '-P', '-X', 'acks=all'], 'one\ntwo\n');
  assert.equal(produced.code, 0, produced.stderr);
  await waitFor('both brokers in the ISR', async () => {
    const listed = await kcat(['-L', '-J', '-t', 'secured']);
    const topic = JSON.parse(listed.stdout).topics[0];
    return topic.partitions[0].isrs.length === 2 ? true : undefined;
  });
  const consumed = await kcat(['-t', 'secured', '-C', '-e', '-o', 'beginning']);
  assert.deepEqual(consumed.stdout.trim().split('\n'), ['one', 'two']);
}

it('brook cluster up --secure serves SASL_SSL only, replicates over it, and writes working client settings', async () => {
  const dir = join(root, 'cluster');
  const { base } = await upSecured(dir);
  await replicatesAsAdmin(dir, base);
  // A plaintext client is not served: the only listener is SASL_SSL.
  const plain = await run('kcat', ['-b', `127.0.0.1:${base}`, '-L', '-m', '3'], { timeoutMs: 20_000 });
  assert.notEqual(plain.code, 0);
  const secrets = JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8')) as Record<string, string>;
  const brokers = JSON.parse(readFileSync(join(dir, 'brokers.json'), 'utf8')) as { pid: number }[];
  for (const b of brokers) {
    const commandLine = readFileSync(`/proc/${b.pid}/cmdline`, 'utf8');
    for (const password of Object.values(secrets)) assert.ok(!commandLine.includes(password));
  }
  const down = await run(process.execPath, [BIN, 'cluster', 'down', '--dir', dir]);
  assert.equal(down.code, 0, down.stderr);
});

it('brook cluster up --secure given an authorizer makes the brokers and the admin super users, so it still replicates', async () => {
  // Kafka grants the brokers nothing implicitly: without super.users for User:broker the follower's fetch is
  // refused, and without User:admin nobody could create a topic or the first ACLs.
  const dir = join(root, 'acl-cluster');
  const { base, stdout } = await upSecured(dir, [
    '--override',
    'authorizer.class.name=kafka.security.authorizer.AclAuthorizer',
  ]);
  assert.match(stdout, /super\.users=User:broker;User:admin/);
  await replicatesAsAdmin(dir, base);
  const down = await run(process.execPath, [BIN, 'cluster', 'down', '--dir', dir]);
  assert.equal(down.code, 0, down.stderr);
});
