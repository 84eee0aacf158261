// `brook configs --help` lists the valid configs of each entity type under --add-config, as kafka-configs does:
// every topic key, only the broker keys that can change without a restart, the quota keys of users and clients
// (and the SCRAM mechanisms of users), connection_creation_rate for ips.

import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { run } from '../helpers/broker-process.js';

const BROOK = join(resolve(import.meta.dirname, '../../..'), 'bin/brook');

describe('brook configs --help', () => {
  it('names the valid configs of each entity type', async () => {
    const result = await run(process.execPath, [BROOK, 'configs', '--help'], { env: process.env });
    assert.equal(result.code, 0, result.stderr);
    const listed = new Map<string, string[]>();
    for (const m of result.stdout.matchAll(/For entity-type '([a-z]+)': (.*)$/gm)) {
      listed.set(m[1]!, m[2]!.trim().split(' '));
    }
    assert.deepEqual([...listed.keys()], ['topics', 'brokers', 'users', 'clients', 'ips']);
    const topics = listed.get('topics')!;
    for (const key of ['cleanup.policy', 'retention.ms', 'segment.bytes', 'min.insync.replicas']) {
      assert.ok(topics.includes(key), key);
    }
    const brokers = listed.get('brokers')!;
    for (const key of ['log.retention.ms', 'log.cleaner.threads', 'advertised.listeners']) {
      assert.ok(brokers.includes(key), key);
    }
    // Read-only broker keys need a restart: kafka-configs does not offer them.
    for (const key of ['broker.id', 'log.dirs', 'zookeeper.connect']) assert.ok(!brokers.includes(key), key);
    assert.ok(listed.get('users')!.includes('SCRAM-SHA-512'));
    assert.ok(listed.get('clients')!.includes('producer_byte_rate'));
    assert.ok(!listed.get('clients')!.includes('SCRAM-SHA-256'));
    assert.deepEqual(listed.get('ips'), ['connection_creation_rate']);
  });
});
