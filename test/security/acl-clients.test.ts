// Real clients against a broker with ACLs, over SASL_PLAINTEXT with PLAIN: kcat (librdkafka), kafkajs and
// confluent-kafka-python get Kafka's TOPIC_AUTHORIZATION_FAILED for a topic they may not write or read while their
// other topic keeps working; a running kafkajs consumer loses access when its READ ACL is removed.

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { AclOperation as Op, ResourceType as RT } from '../../src/security/authorizer/acl-types.js';
import { ACL_USERS, type AclBroker, addAcls, removeAcls, startAclBroker } from '../helpers/acl-broker.js';
import { run } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { createTopic, type WireClient } from '../helpers/wire-client.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = resolve(import.meta.dirname, '../../../test/compat/scripts/confluent_acl.py');
let b: AclBroker;
let admin: WireClient;

function kafkajs(user: 'alice' | 'bob') {
  return new Kafka({
    clientId: `acl-${user}`,
    brokers: [`127.0.0.1:${b.saslPort}`],
    sasl: { mechanism: 'plain', username: user, password: ACL_USERS[user] },
    logLevel: logLevel.NOTHING,
    retry: { retries: 2, initialRetryTime: 100 },
  });
}

/** kafkajs's error type, on the error or on the protocol error it wraps (cause, or originalError of its retrier). */
function kafkajsType(err: unknown): string | undefined {
  const e = err as { type?: string; cause?: { type?: string }; originalError?: { type?: string } };
  return e.type ?? e.cause?.type ?? e.originalError?.type;
}

function kcat(args: string[], input?: string) {
  return run(
    'kcat',
    [
      '-b',
      `127.0.0.1:${b.saslPort}`,
      '-X',
      'security.protocol=sasl_plaintext',
      '-X',
      'sasl.mechanism=PLAIN',
      '-X',
      'sasl.username=alice',
      '-X',
      `sasl.password=${ACL_USERS.alice}`,
      ...args,
    ],
    { input, timeoutMs: 30_000 },
  );
}

before(async () => {
  b = await startAclBroker();
  admin = await b.admin();
  for (const t of ['rc-ok', 'rc-forbidden', 'rc-live']) await createTopic(admin, t);
  // alice may use rc-ok and her group; rc-forbidden she may only see (so clients reach the partition and are
  // refused there, as a Kafka user with DESCRIBE but no READ/WRITE is).
  await addAcls(admin, [
    { resourceType: RT.TOPIC, resourceName: 'rc-ok', principal: 'User:alice', operation: Op.ALL },
    { resourceType: RT.TOPIC, resourceName: 'rc-forbidden', principal: 'User:alice', operation: Op.DESCRIBE },
    {
      resourceType: RT.GROUP,
      resourceName: 'rc-',
      patternType: 4,
      principal: 'User:alice',
      operation: Op.READ,
    },
  ]);
});

after(async () => {
  admin?.close();
  await b?.broker.stop();
});

describe('real clients with ACLs', () => {
  it('kcat: the forbidden topic fails with Topic authorization failed, the other works', async () => {
    const ok = await kcat(['-t', 'rc-ok', '-P'], 'a\nb\n');
    assert.equal(ok.code, 0, ok.stderr);
    const refused = await kcat(['-t', 'rc-forbidden', '-P'], 'a\n');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Topic authorization failed/i);
    const consumed = await kcat(['-t', 'rc-ok', '-C', '-o', 'beginning', '-e']);
    assert.equal(consumed.code, 0, consumed.stderr);
    assert.deepEqual(consumed.stdout.trim().split('\n'), ['a', 'b']);
    const unread = await kcat(['-t', 'rc-forbidden', '-C', '-o', 'beginning', '-e']);
    assert.match(unread.stderr, /Topic authorization failed/i);
  });

  it('kafkajs: TOPIC_AUTHORIZATION_FAILED for the forbidden topic, the other works', async () => {
    const producer = kafkajs('alice').producer();
    await producer.connect();
    try {
      await producer.send({ topic: 'rc-ok', messages: [{ value: 'k1' }] });
      await assert.rejects(
        producer.send({ topic: 'rc-forbidden', messages: [{ value: 'no' }] }),
        (err: Error & { type?: string }) =>
          err.type === 'TOPIC_AUTHORIZATION_FAILED' || /authoriz/i.test(err.message),
      );
      await producer.send({ topic: 'rc-ok', messages: [{ value: 'k2' }] });
    } finally {
      await producer.disconnect();
    }
    const bob = kafkajs('bob').producer();
    await bob.connect();
    try {
      await assert.rejects(
        bob.send({ topic: 'rc-ok', messages: [{ value: 'x' }] }),
        (err) => kafkajsType(err) === 'TOPIC_AUTHORIZATION_FAILED',
      );
    } finally {
      await bob.disconnect();
    }
  });

  it('confluent-kafka-python: TOPIC_AUTHORIZATION_FAILED for the forbidden topic, the other works', async () => {
    const r = await run(
      PYTHON,
      [SCRIPT, `127.0.0.1:${b.saslPort}`, 'alice', ACL_USERS.alice, 'rc-ok', 'rc-forbidden'],
      {
        timeoutMs: 90_000,
      },
    );
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.equal(out.produce_ok, null);
    assert.equal(out.produce_forbidden, 'TOPIC_AUTHORIZATION_FAILED');
    assert.equal(out.consume_ok, null);
    assert.equal(out.consume_forbidden, 'TOPIC_AUTHORIZATION_FAILED');
  });

  it('a running kafkajs consumer loses access when its READ ACL is removed', async () => {
    await addAcls(admin, [
      { resourceType: RT.TOPIC, resourceName: 'rc-live', principal: 'User:alice', operation: Op.READ },
      { resourceType: RT.TOPIC, resourceName: 'rc-live', principal: 'User:alice', operation: Op.WRITE },
    ]);
    const kafka = kafkajs('alice');
    const producer = kafka.producer();
    await producer.connect();
    const consumer = kafka.consumer({
      groupId: 'rc-live-group',
      retry: { retries: 0 },
      maxWaitTimeInMs: 200,
    });
    const received: string[] = [];
    let crash: (Error & { type?: string }) | null = null;
    consumer.on(consumer.events.CRASH, (e) => {
      crash = e.payload.error as Error & { type?: string };
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: 'rc-live', fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          received.push(message.value!.toString());
        },
      });
      await producer.send({ topic: 'rc-live', messages: [{ value: 'before' }] });
      await waitUntil(
        () => received.includes('before'),
        20_000,
        () => `received ${received.join(',')}`,
      );
      const removed = await removeAcls(admin, RT.TOPIC, 'rc-live', 3);
      assert.equal(removed, 2);
      await waitUntil(
        () => crash !== null,
        20_000,
        () => `no crash; received ${received.join(',')}`,
      );
      const failure = crash as unknown as Error;
      assert.equal(kafkajsType(failure), 'TOPIC_AUTHORIZATION_FAILED', `${failure.name}: ${failure.message}`);
    } finally {
      await consumer.disconnect().catch(() => {});
      await producer.disconnect().catch(() => {});
    }
  });
});
