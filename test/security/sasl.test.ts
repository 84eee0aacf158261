// SASL through the wire with real clients: kcat (librdkafka) over SASL_PLAINTEXT and SASL_SSL with PLAIN,
// SCRAM-SHA-256 and SCRAM-SHA-512, kafkajs with each mechanism; SCRAM users created with
// AlterUserScramCredentials and described with DescribeUserScramCredentials. Negative cases on the wire: a wrong
// password and an unknown user get the same answer, a mechanism not enabled, a Produce before authentication,
// SaslAuthenticate before the handshake, an oversized token, an authorization id other than the user (SCRAM and
// PLAIN); and the v0 handshake followed by a bare token.

import assert from 'node:assert/strict';
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { Admin } from '../../src/client/admin.js';
import { ErrorCode, errorByCode } from '../../src/protocol/errors.js';
import { loadMessages } from '../../src/protocol/generator/generate.js';
import { decodeResponseHeader } from '../../src/protocol/headers.js';
import { Reader } from '../../src/protocol/primitives/index.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey, findApi, getApi } from '../../src/protocol/registry.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { encodeRequest } from '../helpers/raw-client.js';
import { waitUntil } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import { SampleBuilder } from '../protocol/messages/sample-values.js';

const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";';
const MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];
const dir = mkdtempSync(join(tmpdir(), 'brook-sasl-'));
let certs: DevCertFiles;
let broker: BrokerProcess;
let plainPort: number;
let saslPort: number;
let saslSslPort: number;

function kcat(port: number, args: string[], input?: string) {
  return run('kcat', ['-b', `127.0.0.1:${port}`, ...args], { input, timeoutMs: 20_000 });
}

function saslArgs(
  protocol: 'sasl_plaintext' | 'sasl_ssl',
  mechanism: string,
  user: string,
  password: string,
) {
  const tls = protocol === 'sasl_ssl' ? ['-X', `ssl.ca.location=${certs.caCert}`] : [];
  return [
    '-X',
    `security.protocol=${protocol}`,
    '-X',
    `sasl.mechanism=${mechanism}`,
    '-X',
    `sasl.username=${user}`,
    '-X',
    `sasl.password=${password}`,
    ...tls,
  ];
}

async function upsertScram(client: WireClient, name: string, password: string): Promise<void> {
  const upsertions = [1, 2].map((mechanism) => {
    const salt = randomBytes(16);
    const saltedPassword = pbkdf2Sync(
      password,
      salt,
      4096,
      mechanism === 1 ? 32 : 64,
      mechanism === 1 ? 'sha256' : 'sha512',
    );
    return { name, mechanism, iterations: 4096, salt, saltedPassword };
  });
  const response = await client.call(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, { deletions: [], upsertions });
  assert.deepEqual(response.results, [{ user: name, errorCode: 0, errorMessage: null }]);
}

/** A connection to the SASL_PLAINTEXT listener that has done a SaslHandshake v1 for `mechanism`. */
async function handshaken(mechanism: string): Promise<WireClient> {
  const client = await WireClient.connect('127.0.0.1', saslPort);
  const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism });
  assert.equal(handshake.errorCode, ErrorCode.NONE);
  return client;
}

/** Whether an error code field anywhere in a decoded response (top level or nested) is `code`. */
function carriesError(value: unknown, code: number): boolean {
  if (Array.isArray(value)) return value.some((v) => carriesError(v, code));
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return false;
  return Object.entries(value).some(
    ([key, v]) => (/errorCode$/i.test(key) && v === code) || carriesError(v, code),
  );
}

before(async () => {
  certs = writeDevCertificates({ dir });
  [plainPort, saslPort, saslSslPort] = [await freePort(), await freePort(), await freePort()];
  broker = await startBroker({
    port: plainPort,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort},SASL_SSL://127.0.0.1:${saslSslPort}`,
      'inter.broker.listener.name': 'PLAINTEXT',
      'sasl.enabled.mechanisms': MECHANISMS.join(','),
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
      'listener.name.sasl_ssl.plain.sasl.jaas.config': JAAS,
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.brokerKeystorePem,
    },
  });
  const admin = await WireClient.connect('127.0.0.1', plainPort);
  try {
    await upsertScram(admin, 'carol', 'carol-scram');
  } finally {
    admin.close();
  }
});

after(async () => {
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('SASL with real clients', () => {
  it('kcat produces with PLAIN and consumes with SCRAM-SHA-256 and SCRAM-SHA-512 over SASL_PLAINTEXT', async () => {
    const produced = await kcat(
      saslPort,
      [...saslArgs('sasl_plaintext', 'PLAIN', 'alice', 'alice-secret'), '-t', 'sasl-kcat', '-P'],
      'a\nb\n',
    );
    assert.equal(produced.code, 0, produced.stderr);
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512']) {
      const consumed = await kcat(saslPort, [
        ...saslArgs('sasl_plaintext', mechanism, 'carol', 'carol-scram'),
        '-t',
        'sasl-kcat',
        '-C',
        '-e',
        '-o',
        'beginning',
      ]);
      assert.equal(consumed.code, 0, consumed.stderr);
      assert.deepEqual(consumed.stdout.trim().split('\n'), ['a', 'b']);
    }
  });

  it('kcat authenticates over SASL_SSL with PLAIN and SCRAM, and learns the SASL_SSL endpoints', async () => {
    for (const [mechanism, user, password] of [
      ['PLAIN', 'bob', 'bob-secret'],
      ['SCRAM-SHA-512', 'carol', 'carol-scram'],
    ] as const) {
      const listed = await kcat(saslSslPort, [
        ...saslArgs('sasl_ssl', mechanism, user, password),
        '-L',
        '-J',
      ]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(JSON.parse(listed.stdout).brokers, [{ id: 0, name: `127.0.0.1:${saslSslPort}` }]);
    }
  });

  it('kafkajs produces with plain, scram-sha-256 and scram-sha-512', async () => {
    const logins = [
      { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
      { mechanism: 'scram-sha-256', username: 'carol', password: 'carol-scram' },
      { mechanism: 'scram-sha-512', username: 'carol', password: 'carol-scram' },
    ] as const;
    for (const sasl of logins) {
      const kafka = new Kafka({
        brokers: [`127.0.0.1:${saslSslPort}`],
        logLevel: logLevel.NOTHING,
        ssl: { ca: [readFileSync(certs.caCert, 'utf8')], servername: 'localhost' },
        sasl: { ...sasl },
      });
      const producer = kafka.producer({ allowAutoTopicCreation: true });
      await producer.connect();
      const [meta] = await producer.send({ topic: 'sasl-kafkajs', messages: [{ value: sasl.mechanism }] });
      assert.equal(meta?.errorCode, 0);
      await producer.disconnect();
    }
  });

  it('confluent-kafka-python produces over SASL_SSL with SCRAM-SHA-256', async () => {
    const script = [
      'import sys',
      'from confluent_kafka import Producer',
      'p = Producer({"bootstrap.servers": sys.argv[1], "security.protocol": "SASL_SSL", "ssl.ca.location": sys.argv[2],',
      '  "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "carol", "sasl.password": "carol-scram"})',
      'errors = []',
      'p.produce("sasl-python", b"py", on_delivery=lambda e, m: errors.append(e))',
      'p.flush(15)',
      'print("delivered" if errors == [None] else "failed %r" % errors)',
    ].join('\n');
    const result = await run('/usr/bin/python3', ['-c', script, `127.0.0.1:${saslSslPort}`, certs.caCert]);
    assert.equal(result.stdout.trim(), 'delivered', result.stderr);
  });

  it('brook configs --entity-type users sets, describes and deletes SCRAM credentials as kafka-configs does', async () => {
    const brook = (...args: string[]) =>
      run(process.execPath, [
        join(import.meta.dirname, '../../../bin/brook'),
        'configs',
        '--bootstrap-server',
        `127.0.0.1:${plainPort}`,
        ...args,
      ]);
    const added = await brook(
      '--alter',
      '--entity-type',
      'users',
      '--entity-name',
      'dave',
      '--add-config',
      'SCRAM-SHA-512=[iterations=8192,password=dave-pw]',
    );
    assert.equal(added.stdout.trim(), 'Completed updating config for user dave.', added.stderr);
    const described = await brook('--describe', '--entity-type', 'users', '--entity-name', 'dave');
    assert.equal(
      described.stdout.trim(),
      "SCRAM credential configs for user-principal 'dave' are SCRAM-SHA-512=iterations=8192",
    );
    const listed = await kcat(saslPort, [
      ...saslArgs('sasl_plaintext', 'SCRAM-SHA-512', 'dave', 'dave-pw'),
      '-L',
    ]);
    assert.equal(listed.code, 0, listed.stderr);
    const deleted = await brook(
      '--alter',
      '--entity-type',
      'users',
      '--entity-name',
      'dave',
      '--delete-config',
      'SCRAM-SHA-512',
    );
    assert.equal(deleted.code, 0, deleted.stderr);
    const refused = await kcat(saslPort, [
      ...saslArgs('sasl_plaintext', 'SCRAM-SHA-512', 'dave', 'dave-pw'),
      '-L',
      '-m',
      '3',
    ]);
    assert.notEqual(refused.code, 0);
  });

  it("Brook's client authenticates with PLAIN and SCRAM, and reports a wrong password", async () => {
    for (const sasl of [
      { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
      { mechanism: 'scram-sha-512', username: 'carol', password: 'carol-scram' },
    ] as const) {
      const admin = new Admin({
        bootstrapServers: `127.0.0.1:${saslSslPort}`,
        tls: { ca: readFileSync(certs.caCert), servername: 'localhost' },
        sasl,
      });
      try {
        assert.ok((await admin.listTopics()).includes('sasl-kcat'));
      } finally {
        await admin.close();
      }
    }
    const wrong = new Admin({
      bootstrapServers: `127.0.0.1:${saslPort}`,
      retries: 0,
      sasl: { mechanism: 'scram-sha-256', username: 'carol', password: 'nope' },
    });
    try {
      await assert.rejects(wrong.listTopics(), /SASL_AUTHENTICATION_FAILED/);
    } finally {
      await wrong.close();
    }
  });

  it('brook topics reads security.protocol, ssl.truststore.* and sasl.* from --command-config', async () => {
    const config = join(dir, 'client.properties');
    writeFileSync(
      config,
      [
        'security.protocol=SASL_SSL',
        'ssl.truststore.type=PEM',
        `ssl.truststore.location=${certs.caCert}`,
        'sasl.mechanism=SCRAM-SHA-256',
        'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="carol" password="carol-scram";',
      ].join('\n'),
    );
    const listed = await run(process.execPath, [
      join(import.meta.dirname, '../../../bin/brook'),
      'topics',
      '--bootstrap-server',
      `127.0.0.1:${saslSslPort}`,
      '--command-config',
      config,
      '--list',
    ]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(listed.stdout.split('\n').includes('sasl-kcat'), listed.stdout);
  });

  it('kafkajs with a wrong password is refused with the broker message', async () => {
    const kafka = new Kafka({
      brokers: [`127.0.0.1:${saslPort}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
      sasl: { mechanism: 'scram-sha-256', username: 'carol', password: 'nope' },
    });
    const admin = kafka.admin();
    await assert.rejects(admin.connect(), /invalid credentials with SASL mechanism SCRAM-SHA-256/);
  });

  it('DescribeUserScramCredentials lists mechanisms and iterations, not keys', async () => {
    const client = await WireClient.connect('127.0.0.1', plainPort);
    try {
      const described = await client.call(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {
        users: [{ name: 'carol' }, { name: 'nobody' }],
      });
      assert.deepEqual(
        described.results.map((r: { user: string; errorCode: number; credentialInfos: unknown[] }) => [
          r.user,
          r.errorCode,
          r.credentialInfos,
        ]),
        [
          [
            'carol',
            0,
            [
              { mechanism: 1, iterations: 4096 },
              { mechanism: 2, iterations: 4096 },
            ],
          ],
          ['nobody', ErrorCode.RESOURCE_NOT_FOUND, []],
        ],
      );
    } finally {
      client.close();
    }
  });
});

describe('SASL failures on the wire', () => {
  it('a wrong password and an unknown user get the same PLAIN answer, and the connection closes', async () => {
    const answers = [];
    for (const token of ['\0alice\0wrong', '\0mallory\0alice-secret']) {
      const client = await handshaken('PLAIN');
      const answer = await client.call(ApiKey.SASL_AUTHENTICATE, 2, { authBytes: Buffer.from(token) });
      answers.push([answer.errorCode, answer.errorMessage]);
      assert.equal(await client.raw.waitClosed(), true);
    }
    assert.deepEqual(answers[0], [
      ErrorCode.SASL_AUTHENTICATION_FAILED,
      'Authentication failed: Invalid username or password',
    ]);
    assert.deepEqual(answers[1], answers[0]);
  });

  it('a failure is answered only after connection.failed.authentication.delay.ms (100), and nothing sent after it is served', async () => {
    const refusals = [
      {
        client: await WireClient.connect('127.0.0.1', saslPort),
        apiKey: ApiKey.SASL_HANDSHAKE,
        body: { mechanism: 'GSSAPI' },
      },
      {
        client: await handshaken('PLAIN'),
        apiKey: ApiKey.SASL_AUTHENTICATE,
        body: { authBytes: Buffer.from('\0alice\0wrong') },
      },
    ];
    for (const { client, apiKey, body } of refusals) {
      const sentMs = performance.now();
      // In one write, so that the broker reads both at once: the request pipelined behind the failure is never
      // served (Kafka stops reading the connection), and does not cost the client the failure's answer.
      client.raw.socket.cork();
      client.send(apiKey, 1, body);
      client.send(ApiKey.API_VERSIONS, 0, {});
      client.raw.socket.uncork();
      const answer = await client.receive();
      const elapsedMs = performance.now() - sentMs;
      assert.notEqual(answer.errorCode, ErrorCode.NONE);
      // Timers may fire a little early against this clock; without the delay the answer comes within a few ms.
      assert.ok(elapsedMs >= 90, `answered after ${elapsedMs.toFixed(1)} ms`);
      await assert.rejects(client.receive(3000), /closed/);
    }
  });

  it('a wrong SCRAM password and an unknown SCRAM user fail alike with kcat', async () => {
    const wrong = await kcat(saslPort, [
      ...saslArgs('sasl_plaintext', 'SCRAM-SHA-512', 'carol', 'bad'),
      '-L',
      '-m',
      '3',
    ]);
    const unknown = await kcat(saslPort, [
      ...saslArgs('sasl_plaintext', 'SCRAM-SHA-512', 'mallory', 'bad'),
      '-L',
      '-m',
      '3',
    ]);
    assert.notEqual(wrong.code, 0);
    assert.notEqual(unknown.code, 0);
    const message = (stderr: string) => /SASL authentication error: ([^(]*)/.exec(stderr)?.[1];
    assert.equal(
      message(wrong.stderr),
      'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 ',
    );
    assert.equal(message(unknown.stderr), message(wrong.stderr));
  });

  it('a mechanism not enabled is UNSUPPORTED_SASL_MECHANISM with the enabled list, then the connection closes', async () => {
    const client = await WireClient.connect('127.0.0.1', saslPort);
    const answer = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'GSSAPI' });
    assert.equal(answer.errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    assert.deepEqual(answer.mechanisms, MECHANISMS);
    assert.equal(await client.raw.waitClosed(), true);
  });

  it('a Produce after the handshake: ILLEGAL_SASL_STATE per partition, then closed; nothing changes', async () => {
    // Kafka's SaslServerAuthenticator answers any request but SaslAuthenticate after a SaslHandshake v1 with that
    // API's error response, then fails the authentication. Before any handshake it closes without an answer.
    const produce = await handshaken('PLAIN');
    produce.send(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 1000,
      topicData: [
        {
          name: 'unauthenticated-write',
          partitionData: [
            { index: 0, records: buildBatch([{ value: Buffer.from('x') }]) },
            { index: 3, records: buildBatch([{ value: Buffer.from('y') }]) },
          ],
        },
      ],
    });
    const refused = await produce.receive(3000);
    assert.equal(refused.responses.length, 1);
    assert.equal(refused.responses[0].name, 'unauthenticated-write');
    const partitions = refused.responses[0].partitionResponses;
    assert.deepEqual(
      partitions.map((p: { index: number; errorCode: number }) => [p.index, p.errorCode]),
      [
        [0, ErrorCode.ILLEGAL_SASL_STATE],
        [3, ErrorCode.ILLEGAL_SASL_STATE],
      ],
    );
    assert.equal(partitions[0].baseOffset, -1n);
    // The answer ends the connection: a request sent after it is not served.
    produce.send(ApiKey.METADATA, 12, {
      topics: null,
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    await assert.rejects(produce.receive(3000), /closed|ECONNRESET|EPIPE/);
    // acks=0: Kafka's getErrorResponse gives no response, so the connection closes unanswered.
    const unacknowledged = await handshaken('PLAIN');
    unacknowledged.send(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 0,
      timeoutMs: 1000,
      topicData: [
        {
          name: 'unauthenticated-write',
          partitionData: [{ index: 0, records: buildBatch([{ value: Buffer.from('z') }]) }],
        },
      ],
    });
    await assert.rejects(unacknowledged.receive(3000), /closed/);
    const create = await WireClient.connect('127.0.0.1', saslPort);
    create.send(ApiKey.CREATE_TOPICS, 5, {
      topics: [
        {
          name: 'unauthenticated-create',
          numPartitions: 1,
          replicationFactor: 1,
          assignments: [],
          configs: [],
        },
      ],
      timeoutMs: 5000,
      validateOnly: false,
    });
    await assert.rejects(create.receive(3000), /closed/);
    // Nothing was written or created: CreateTopics, had it been handled, would have made its topic.
    const listed = await kcat(plainPort, ['-L', '-J']);
    const topics = (JSON.parse(listed.stdout).topics as { topic: string }[]).map((t) => t.topic);
    assert.ok(!topics.includes('unauthenticated-write'), topics.join(','));
    assert.ok(!topics.includes('unauthenticated-create'), topics.join(','));
  });

  it('Metadata, FindCoordinator, CreateTopics after the handshake: ILLEGAL_SASL_STATE as Kafka places it', async () => {
    const illegal = ErrorCode.ILLEGAL_SASL_STATE;
    const metadata = await (await handshaken('PLAIN')).call(ApiKey.METADATA, 12, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'asked-for' }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.deepEqual(
      metadata.topics.map((t: { name: string; errorCode: number }) => [t.name, t.errorCode]),
      [['asked-for', illegal]],
    );
    const coordinator = await (await handshaken('PLAIN')).call(ApiKey.FIND_COORDINATOR, 3, {
      key: 'group-a',
      keyType: 0,
    });
    assert.equal(coordinator.errorCode, illegal);
    const created = await (await handshaken('PLAIN')).call(ApiKey.CREATE_TOPICS, 5, {
      topics: [{ name: 'refused', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.deepEqual(
      created.topics.map((t: { name: string; errorCode: number }) => [t.name, t.errorCode]),
      [['refused', illegal]],
    );
  });

  it('every advertised API gets its own error response with ILLEGAL_SASL_STATE after the handshake', async () => {
    // Kafka's authenticator parses any request but the SASL exchange and answers with its request's
    // getErrorResponse: the API's own response, the error on every topic, partition, group or resource the request
    // named (or at the top level), then closes. Each advertised API at its oldest and newest version, with a request
    // naming two of everything.
    const probe = await WireClient.connect('127.0.0.1', saslPort);
    const advertised = await probe.call(ApiKey.API_VERSIONS, 3, {
      clientSoftwareName: 'wire-test',
      clientSoftwareVersion: '1.0',
    });
    probe.close();
    const requests = new Map(
      loadMessages()
        .filter((m) => m.kind === 'request')
        .map((m) => [m.apiKey, m]),
    );
    const answeredThemselves = new Set<number>([
      ApiKey.API_VERSIONS,
      ApiKey.SASL_HANDSHAKE,
      ApiKey.SASL_AUTHENTICATE,
    ]);
    const cases: { apiKey: number; version: number }[] = [];
    for (const api of advertised.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]) {
      if (answeredThemselves.has(api.apiKey)) continue;
      for (const version of new Set([api.minVersion, api.maxVersion]))
        cases.push({ apiKey: api.apiKey, version });
    }
    assert.ok(cases.length > 100, String(cases.length));
    const failures: string[] = [];
    const refusal = async ({ apiKey, version }: { apiKey: number; version: number }) => {
      const name = `${findApi(apiKey)?.name} v${version}`;
      const body = new SampleBuilder({ nulls: false, arrayLength: 2, untagged: true }).struct(
        requests.get(apiKey)!.root,
        version,
      );
      const client = await handshaken('PLAIN');
      try {
        const response = await client.call(apiKey, version, body, 5000);
        // Kafka's DescribeLogDirs error response sets only the top-level ErrorCode, which v0-2 do not have.
        const noPlaceForError = apiKey === ApiKey.DESCRIBE_LOG_DIRS && version < 3;
        if (!noPlaceForError && !carriesError(response, ErrorCode.ILLEGAL_SASL_STATE)) {
          failures.push(`${name}: no ILLEGAL_SASL_STATE in ${inspect(response, { depth: 6 })}`);
        }
        if (!(await client.raw.waitClosed())) failures.push(`${name}: connection left open`);
      } catch (err) {
        failures.push(`${name}: ${(err as Error).message}`);
        client.close();
      }
    };
    for (let i = 0; i < cases.length; i += 8) await Promise.all(cases.slice(i, i + 8).map(refusal));
    assert.deepEqual(failures, []);
  });

  it('nested requests get the error where Kafka puts it: per partition, per resource, per entry', async () => {
    const illegal = ErrorCode.ILLEGAL_SASL_STATE;
    const refused = async (apiKey: number, version: number, body: unknown) => {
      const client = await handshaken('PLAIN');
      const response = await client.call(apiKey, version, body, 5000);
      assert.equal(await client.raw.waitClosed(), true);
      return response;
    };
    // Kafka's message names the API by its ApiKeys constant.
    const cluster = await refused(ApiKey.DESCRIBE_CLUSTER, 1, {
      includeClusterAuthorizedOperations: false,
      endpointType: 1,
    });
    assert.equal(cluster.errorCode, illegal);
    assert.equal(
      cluster.errorMessage,
      'Unexpected Kafka request of type DESCRIBE_CLUSTER during SASL authentication.',
    );
    // Where Kafka writes the error code's standard text (FindCoordinator), or no message (ConsumerGroupHeartbeat).
    const coordinators = await refused(ApiKey.FIND_COORDINATOR, 4, { keyType: 0, coordinatorKeys: ['g'] });
    assert.deepEqual(
      coordinators.coordinators.map((c: { key: string; errorCode: number; errorMessage: string }) => [
        c.key,
        c.errorCode,
        c.errorMessage,
      ]),
      [['g', illegal, errorByCode(illegal)?.message]],
    );
    const heartbeat = await refused(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, {
      groupId: 'g',
      memberId: 'm',
      memberEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: -1,
      subscribedTopicNames: null,
      serverAssignor: null,
      topicPartitions: null,
    });
    assert.equal(heartbeat.errorCode, illegal);
    assert.equal(heartbeat.errorMessage, null);
    // A topic asked for by id alone is answered with an empty name, never null.
    const byId = await refused(ApiKey.METADATA, 12, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', name: null }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.deepEqual(
      byId.topics.map((t: { name: string; topicId: string; errorCode: number }) => [
        t.name,
        t.topicId,
        t.errorCode,
      ]),
      [['', 'AAAAAAAAAAAAAAAAAAAAAQ', illegal]],
    );
    // OffsetFetch: the error on each partition asked for before v2, at the top level in v2-7, per group from v8;
    // Kafka lists no partitions from v2.
    const fetchTopics = [{ name: 't', partitionIndexes: [0, 1] }];
    const offsetsV1 = await refused(ApiKey.OFFSET_FETCH, 1, { groupId: 'g', topics: fetchTopics });
    assert.deepEqual(
      offsetsV1.topics[0].partitions.map((p: { partitionIndex: number; errorCode: number }) => [
        p.partitionIndex,
        p.errorCode,
      ]),
      [
        [0, illegal],
        [1, illegal],
      ],
    );
    const offsetsV7 = await refused(ApiKey.OFFSET_FETCH, 7, {
      groupId: 'g',
      topics: fetchTopics,
      requireStable: false,
    });
    assert.deepEqual([offsetsV7.errorCode, offsetsV7.topics], [illegal, []]);
    const offsetsV9 = await refused(ApiKey.OFFSET_FETCH, 9, {
      groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: fetchTopics }],
      requireStable: false,
    });
    assert.deepEqual(offsetsV9.groups, [{ groupId: 'g', topics: [], errorCode: illegal }]);
    const deleted = await refused(ApiKey.DELETE_RECORDS, 2, {
      topics: [{ name: 't', partitions: [{ partitionIndex: 4, offset: 10n }] }],
      timeoutMs: 1000,
    });
    assert.deepEqual(deleted.topics, [
      { name: 't', partitions: [{ partitionIndex: 4, lowWatermark: -1n, errorCode: illegal }] },
    ]);
    const elected = await refused(ApiKey.ELECT_LEADERS, 2, {
      electionType: 0,
      topicPartitions: [{ topic: 't', partitions: [1, 2] }],
      timeoutMs: 1000,
    });
    assert.equal(elected.errorCode, illegal);
    assert.deepEqual(
      elected.replicaElectionResults.map(
        (r: { topic: string; partitionResult: { partitionId: number }[] }) => [
          r.topic,
          r.partitionResult.map((p) => p.partitionId),
        ],
      ),
      [['t', [1, 2]]],
    );
    const described = await refused(ApiKey.DESCRIBE_PRODUCERS, 0, {
      topics: [{ name: 't', partitionIndexes: [0, 7] }],
    });
    assert.deepEqual(
      described.topics[0].partitions.map((p: { partitionIndex: number; errorCode: number }) => [
        p.partitionIndex,
        p.errorCode,
      ]),
      [
        [0, illegal],
        [7, illegal],
      ],
    );
    const quotas = await refused(ApiKey.ALTER_CLIENT_QUOTAS, 1, {
      entries: [
        { entity: [{ entityType: 'user', entityName: 'u' }], ops: [{ key: 'k', value: 1, remove: false }] },
      ],
      validateOnly: false,
    });
    assert.deepEqual(quotas.entries[0].entity, [{ entityType: 'user', entityName: 'u' }]);
    assert.equal(quotas.entries[0].errorCode, illegal);
    const scram = await refused(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {
      deletions: [{ name: 'zed', mechanism: 1 }],
      upsertions: [
        {
          name: 'amy',
          mechanism: 1,
          iterations: 4096,
          salt: Buffer.from('s'),
          saltedPassword: Buffer.from('p'),
        },
      ],
    });
    assert.deepEqual(
      scram.results.map((r: { user: string; errorCode: number }) => [r.user, r.errorCode]),
      [
        ['amy', illegal],
        ['zed', illegal],
      ],
    );
  });

  it('SaslAuthenticate before SaslHandshake closes the connection without an answer, as Kafka', async () => {
    // Before a handshake Kafka's authenticator takes only ApiVersions and SaslHandshake; anything else fails the
    // authentication before any response is built.
    for (const versionsFirst of [false, true]) {
      const client = await WireClient.connect('127.0.0.1', saslPort);
      if (versionsFirst) {
        const versions = await client.call(ApiKey.API_VERSIONS, 3, {
          clientSoftwareName: 'wire-test',
          clientSoftwareVersion: '1.0',
        });
        assert.equal(versions.errorCode, ErrorCode.NONE);
      }
      client.send(ApiKey.SASL_AUTHENTICATE, 1, { authBytes: Buffer.from('\0alice\0alice-secret') });
      await assert.rejects(client.receive(3000), /closed/);
    }
  });

  it('a second ApiVersions before the handshake closes the connection unanswered, as Kafka', async () => {
    // Kafka's authenticator takes one ApiVersions, then only a SaslHandshake (HANDSHAKE_REQUEST state). An
    // ApiVersions refused for its client software names does not count, so the client may send it again.
    const versions = (client: WireClient, name: string) =>
      client.call(ApiKey.API_VERSIONS, 3, { clientSoftwareName: name, clientSoftwareVersion: '1.0' });
    const client = await WireClient.connect('127.0.0.1', saslPort);
    assert.equal((await versions(client, '-bad-name-')).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await versions(client, 'wire-test')).errorCode, ErrorCode.NONE);
    client.send(ApiKey.API_VERSIONS, 3, { clientSoftwareName: 'wire-test', clientSoftwareVersion: '1.0' });
    await assert.rejects(client.receive(3000), /closed/);
    // After one ApiVersions the handshake and authentication still go on as usual.
    const usual = await WireClient.connect('127.0.0.1', saslPort);
    assert.equal((await versions(usual, 'wire-test')).errorCode, ErrorCode.NONE);
    const handshake = await usual.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
    assert.equal(handshake.errorCode, ErrorCode.NONE);
    const answer = await usual.call(ApiKey.SASL_AUTHENTICATE, 2, {
      authBytes: Buffer.from('\0alice\0alice-secret'),
    });
    assert.equal(answer.errorCode, ErrorCode.NONE);
    usual.close();
  });

  it('after SaslHandshake v1, ApiVersions or a second handshake gets ILLEGAL_SASL_STATE, then a close', async () => {
    // Kafka's authenticator expects only SaslAuthenticate once a v1 handshake chose the mechanism: anything else
    // gets its own error response with ILLEGAL_SASL_STATE (an ApiVersions answer lists no APIs), and the
    // authentication fails.
    const versions = await handshaken('PLAIN');
    const answer = await versions.call(ApiKey.API_VERSIONS, 3, {
      clientSoftwareName: 'wire-test',
      clientSoftwareVersion: '1.0',
    });
    assert.equal(answer.errorCode, ErrorCode.ILLEGAL_SASL_STATE);
    assert.deepEqual(answer.apiKeys, []);
    assert.equal(await versions.raw.waitClosed(), true);
    const again = await handshaken('PLAIN');
    const handshake = await again.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
    assert.equal(handshake.errorCode, ErrorCode.ILLEGAL_SASL_STATE);
    // Kafka's SaslHandshake error response (and KafkaApis' answer to one) lists no mechanisms.
    assert.deepEqual(handshake.mechanisms, []);
    assert.equal(await again.raw.waitClosed(), true);
    // An ApiVersions newer than the broker's: Kafka reads it as v0 and answers its v0 error response,
    // ILLEGAL_SASL_STATE with no APIs (UNSUPPORTED_VERSION and the list only outside authentication), then closes.
    const newer = await handshaken('PLAIN');
    newer.raw.sendFrame(
      encodeRequest({ apiKey: ApiKey.API_VERSIONS, apiVersion: 99, correlationId: 7, headerVersion: 2 }),
    );
    const frame = await newer.raw.nextFrame(3000);
    const reader = new Reader(frame);
    assert.equal(decodeResponseHeader(reader, ApiKey.API_VERSIONS, 0).correlationId, 7);
    const refused = getApi(ApiKey.API_VERSIONS).decodeResponse(reader, 0) as {
      errorCode: number;
      apiKeys: unknown[];
    };
    assert.deepEqual([refused.errorCode, refused.apiKeys], [ErrorCode.ILLEGAL_SASL_STATE, []]);
    assert.equal(await newer.raw.waitClosed(), true);
  });

  it('SaslHandshake or SaslAuthenticate once authenticated or on PLAINTEXT: ILLEGAL_SASL_STATE, open', async () => {
    // Kafka's KafkaApis answers these itself: ILLEGAL_SASL_STATE with an empty mechanism list, the connection kept.
    const authenticated = await handshaken('PLAIN');
    const answer = await authenticated.call(ApiKey.SASL_AUTHENTICATE, 2, {
      authBytes: Buffer.from('\0alice\0alice-secret'),
    });
    assert.equal(answer.errorCode, ErrorCode.NONE);
    const plain = await WireClient.connect('127.0.0.1', plainPort);
    for (const client of [authenticated, plain]) {
      const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
      assert.equal(handshake.errorCode, ErrorCode.ILLEGAL_SASL_STATE);
      assert.deepEqual(handshake.mechanisms, []);
      const authenticate = await client.call(ApiKey.SASL_AUTHENTICATE, 2, { authBytes: Buffer.from('x') });
      assert.equal(authenticate.errorCode, ErrorCode.ILLEGAL_SASL_STATE);
      assert.equal(
        authenticate.errorMessage,
        'SaslAuthenticate request received after successful authentication',
      );
      const metadata = await client.call(ApiKey.METADATA, 12, {
        topics: [],
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: false,
      });
      assert.deepEqual(metadata.topics, []);
      client.close();
    }
  });

  it('a token larger than sasl.server.max.receive.size closes the connection before it is read', async () => {
    const client = await handshaken('PLAIN');
    client.send(ApiKey.SASL_AUTHENTICATE, 2, { authBytes: Buffer.alloc(600_000, 1) });
    await assert.rejects(client.receive(3000), /closed|ECONNRESET/);
    await waitUntil(
      () => /exceeds sasl\.server\.max\.receive\.size 524288/.test(broker.log()),
      5000,
      () => broker.log(),
    );
  });

  it('the first request after authentication may exceed sasl.server.max.receive.size', async () => {
    // Kafka's authenticator reads with the SASL bound only until authentication completes; the channel's next
    // read is bounded by socket.request.max.bytes. A producer's first request to a leader may well be a Produce
    // of more than 512 KiB.
    const client = await handshaken('PLAIN');
    try {
      const auth = await client.call(ApiKey.SASL_AUTHENTICATE, 2, {
        authBytes: Buffer.from('\0alice\0alice-secret'),
      });
      assert.equal(auth.errorCode, ErrorCode.NONE);
      const value = randomBytes(700_000);
      const answer = await client.call(ApiKey.PRODUCE, 9, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 5000,
        topicData: [
          { name: 'large-first-produce', partitionData: [{ index: 0, records: buildBatch([{ value }]) }] },
        ],
      });
      assert.equal(answer.responses[0].name, 'large-first-produce');
    } finally {
      client.close();
    }
  });

  it('a connection that does not authenticate in time is closed', async () => {
    const client = await WireClient.connect('127.0.0.1', saslPort);
    assert.equal(await client.raw.waitClosed(15_000), true);
    await waitUntil(
      () => /SASL authentication not completed in time/.test(broker.log()),
      5000,
      () => broker.log(),
    );
  });

  it('SaslAuthenticate v0, v1 and v2 each authenticate PLAIN after a SaslHandshake v1', async () => {
    for (const version of [0, 1, 2]) {
      const client = await handshaken('PLAIN');
      try {
        const answer = await client.call(ApiKey.SASL_AUTHENTICATE, version, {
          authBytes: Buffer.from('\0alice\0alice-secret'),
        });
        assert.equal(answer.errorCode, ErrorCode.NONE, `v${version}: ${answer.errorMessage}`);
        const metadata = await client.call(ApiKey.METADATA, 1, { topics: [] });
        assert.equal(metadata.brokers.length, 1, `v${version}`);
      } finally {
        client.close();
      }
    }
  });

  it('after a SaslHandshake v0 a bare PLAIN token authenticates, and requests are served', async () => {
    const client = await WireClient.connect('127.0.0.1', saslPort);
    try {
      const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 0, { mechanism: 'PLAIN' });
      assert.equal(handshake.errorCode, ErrorCode.NONE);
      client.raw.sendFrame(Buffer.from('\0alice\0alice-secret'));
      const token = await client.raw.nextFrame();
      assert.equal(token.length, 0);
      const metadata = await client.call(ApiKey.METADATA, 1, { topics: [] });
      assert.deepEqual(
        metadata.brokers.map((b: { port: number }) => b.port),
        [saslPort],
      );
    } finally {
      client.close();
    }
  });
});

/**
 * One SCRAM-SHA-256 exchange for carol on a fresh SASL_PLAINTEXT connection. `tamper` rewrites the client-final
 * message's nonce before the proof is computed over it (so the proof matches what is sent, and only the nonce
 * check can refuse it) or the proof after; untampered, the exchange must succeed, which keeps the refusals honest.
 */
async function scramExchange(tamper: {
  nonce?: (n: string) => string;
  proof?: (p: Buffer) => Buffer;
  /** The GS2 header's authorization id (`n,a=<authzid>,`); none by default. */
  authzid?: string;
}) {
  const client = await handshaken('SCRAM-SHA-256');
  const clientNonce = randomBytes(18).toString('base64url');
  const firstBare = `n=carol,r=${clientNonce}`;
  const gs2Header = tamper.authzid === undefined ? 'n,,' : `n,a=${tamper.authzid},`;
  const first = await client.call(ApiKey.SASL_AUTHENTICATE, 2, {
    authBytes: Buffer.from(`${gs2Header}${firstBare}`),
  });
  assert.equal(first.errorCode, ErrorCode.NONE);
  const serverFirst = first.authBytes.toString('utf8');
  const attrs = new Map<string, string>(
    serverFirst.split(',').map((a: string) => [a.slice(0, 1), a.slice(2)]),
  );
  const salted = pbkdf2Sync(
    'carol-scram',
    Buffer.from(attrs.get('s') ?? '', 'base64'),
    Number(attrs.get('i')),
    32,
    'sha256',
  );
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const nonce = (tamper.nonce ?? ((n) => n))(attrs.get('r') ?? '');
  const withoutProof = `c=${Buffer.from(gs2Header).toString('base64')},r=${nonce}`;
  const signature = createHmac('sha256', storedKey)
    .update(`${firstBare},${serverFirst},${withoutProof}`)
    .digest();
  const proof = (tamper.proof ?? ((p) => p))(
    Buffer.from(clientKey.map((b, i) => b ^ (signature[i] as number))),
  );
  const final = await client.call(ApiKey.SASL_AUTHENTICATE, 2, {
    authBytes: Buffer.from(`${withoutProof},p=${proof.toString('base64')}`),
  });
  return { client, final };
}

describe('SCRAM with a tampered exchange', () => {
  const refusal = [
    ErrorCode.SASL_AUTHENTICATION_FAILED,
    'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256',
  ];

  it('the untampered exchange authenticates and is served', async () => {
    const { client, final } = await scramExchange({});
    try {
      assert.equal(final.errorCode, ErrorCode.NONE, final.errorMessage);
      assert.match(final.authBytes.toString('utf8'), /^v=/);
      const metadata = await client.call(ApiKey.METADATA, 1, { topics: [] });
      assert.deepEqual(
        metadata.brokers.map((b: { port: number }) => b.port),
        [saslPort],
      );
    } finally {
      client.close();
    }
  });

  it("a changed server nonce, or a client nonce alone, is refused with Kafka's message and closes", async () => {
    const tampers = [
      (n: string) => `${n.slice(0, -1)}${n.endsWith('A') ? 'B' : 'A'}`,
      (n: string) => n.slice(0, 24),
    ];
    for (const nonce of tampers) {
      const { client, final } = await scramExchange({ nonce });
      assert.deepEqual([final.errorCode, final.errorMessage], refusal);
      assert.equal(await client.raw.waitClosed(), true);
    }
  });

  it("a proof with one bit flipped is refused with Kafka's message and closes", async () => {
    const { client, final } = await scramExchange({
      proof: (p) => {
        const flipped = Buffer.from(p);
        flipped[0] = (flipped[0] as number) ^ 1;
        return flipped;
      },
    });
    assert.deepEqual([final.errorCode, final.errorMessage], refusal);
    assert.equal(await client.raw.waitClosed(), true);
  });

  it('the refusals leave the broker as it was: carol still logs in, no topic appeared', async () => {
    const before = await kcat(plainPort, ['-L', '-J']);
    const { client, final } = await scramExchange({ proof: (p) => Buffer.alloc(p.length) });
    assert.equal(final.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    client.close();
    const after = await kcat(saslPort, [
      ...saslArgs('sasl_plaintext', 'SCRAM-SHA-256', 'carol', 'carol-scram'),
      '-L',
      '-J',
    ]);
    assert.equal(after.code, 0, after.stderr);
    const topics = (listing: string) =>
      (JSON.parse(listing).topics as { topic: string }[]).map((t) => t.topic).sort();
    assert.deepEqual(topics(after.stdout), topics(before.stdout));
  });
});

describe('authorization ids', () => {
  const other = [
    ErrorCode.SASL_AUTHENTICATION_FAILED,
    'Authentication failed: Client requested an authorization id that is different from username',
  ];

  it('a SCRAM authorization id equal to the user name authenticates', async () => {
    const { client, final } = await scramExchange({ authzid: 'carol' });
    try {
      assert.equal(final.errorCode, ErrorCode.NONE, final.errorMessage);
      const metadata = await client.call(ApiKey.METADATA, 1, { topics: [] });
      assert.equal(metadata.brokers.length, 1);
    } finally {
      client.close();
    }
  });

  it("a SCRAM authorization id other than the user name is refused at the first message with Kafka's message, and closes", async () => {
    // Known and unknown users alike: the answer must not tell whether the user exists.
    for (const user of ['carol', 'mallory']) {
      const client = await handshaken('SCRAM-SHA-256');
      const first = await client.call(ApiKey.SASL_AUTHENTICATE, 2, {
        authBytes: Buffer.from(`n,a=alice,n=${user},r=${randomBytes(18).toString('base64url')}`),
      });
      assert.deepEqual([first.errorCode, first.errorMessage], other);
      assert.equal(first.authBytes.length, 0);
      assert.equal(await client.raw.waitClosed(), true);
    }
  });

  it('a PLAIN authorization id must be the user name, checked after the password as Kafka', async () => {
    const same = await handshaken('PLAIN');
    const accepted = await same.call(ApiKey.SASL_AUTHENTICATE, 2, {
      authBytes: Buffer.from('alice\0alice\0alice-secret'),
    });
    assert.equal(accepted.errorCode, ErrorCode.NONE, accepted.errorMessage);
    same.close();
    const answers = [];
    for (const token of ['bob\0alice\0alice-secret', 'bob\0alice\0wrong']) {
      const client = await handshaken('PLAIN');
      const answer = await client.call(ApiKey.SASL_AUTHENTICATE, 2, { authBytes: Buffer.from(token) });
      answers.push([answer.errorCode, answer.errorMessage]);
      assert.equal(await client.raw.waitClosed(), true);
    }
    assert.deepEqual(answers, [
      other,
      [ErrorCode.SASL_AUTHENTICATION_FAILED, 'Authentication failed: Invalid username or password'],
    ]);
  });
});

describe('SASL startup errors', () => {
  it('refuses a SASL listener with Kafka default GSSAPI, naming sasl.enabled.mechanisms', async () => {
    const port = await freePort();
    await assert.rejects(
      startBroker({
        overrides: {
          listeners: `SASL_PLAINTEXT://127.0.0.1:${port}`,
          'security.inter.broker.protocol': 'SASL_PLAINTEXT',
        },
      }),
      (err: Error) =>
        /sasl\.enabled\.mechanisms/.test(err.message) &&
        /PLAIN, SCRAM-SHA-256, SCRAM-SHA-512/.test(err.message),
    );
  });

  it('refuses connection.failed.authentication.delay.ms not below connections.max.idle.ms, as Kafka', async () => {
    await assert.rejects(
      startBroker({
        overrides: {
          'connection.failed.authentication.delay.ms': 5000,
          'connections.max.idle.ms': 5000,
        },
      }),
      /connection\.failed\.authentication\.delay\.ms=5000 should always be less than connections\.max\.idle\.ms=5000/,
    );
  });

  it('refuses PLAIN without a JAAS config listing users', async () => {
    const port = await freePort();
    await assert.rejects(
      startBroker({
        overrides: {
          listeners: `SASL_PLAINTEXT://127.0.0.1:${port}`,
          'security.inter.broker.protocol': 'SASL_PLAINTEXT',
          'sasl.enabled.mechanisms': 'PLAIN',
        },
      }),
      /listener\.name\.sasl_plaintext\.plain\.sasl\.jaas\.config/,
    );
  });
});
