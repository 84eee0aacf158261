// KIP-612 IP connection-rate quotas through the wire: AlterClientQuotas / DescribeClientQuotas with the ip
// entity type (an address and the default), Kafka's validation, and the
// enforcement: over its connection_creation_rate an address's new connections are held unread and closed
// (Kafka's delayed close), while the broker keeps serving once the rate falls. quota.window.num=2 (windows of
// 1 s) so that a quota bites within a second.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';
import { sleep } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';

const IP = 'ip';
const BROOK = join(import.meta.dirname, '../../../bin/brook');

/** Whether a new connection is served: an ApiVersions request answered within `ms`. */
function served(port: number, ms = 3_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
    socket.once('connect', () => {
      // ApiVersions v0, correlation id 1, client id "ipq".
      const body = Buffer.from([0, 18, 0, 0, 0, 0, 0, 1, 0, 3, 0x69, 0x70, 0x71]);
      const frame = Buffer.alloc(4 + body.length);
      frame.writeInt32BE(body.length, 0);
      body.copy(frame, 4);
      socket.write(frame);
    });
    socket.once('data', () => done(true));
  });
}

describe('IP connection-rate quotas (KIP-612)', () => {
  let broker: BrokerProcess;
  let admin: WireClient;

  before(async () => {
    broker = await startBroker({ overrides: { 'quota.window.num': 2 } });
    admin = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    admin?.close();
    await broker?.stop();
  });

  async function alter(entityName: string | null, value: number | null) {
    const response = await admin.call(ApiKey.ALTER_CLIENT_QUOTAS, 1, {
      entries: [
        {
          entity: [{ entityType: IP, entityName }],
          ops: [{ key: 'connection_creation_rate', value: value ?? 0, remove: value === null }],
        },
      ],
      validateOnly: false,
    });
    return response.entries[0];
  }

  it('validates as Kafka: addresses only, the one key, integers, no mix with user or client-id', async () => {
    const response = await admin.call(ApiKey.ALTER_CLIENT_QUOTAS, 1, {
      entries: [
        {
          entity: [{ entityType: IP, entityName: 'not an address' }],
          ops: [{ key: 'connection_creation_rate', value: 5, remove: false }],
        },
        {
          entity: [{ entityType: IP, entityName: '10.0.0.1' }],
          ops: [{ key: 'producer_byte_rate', value: 5, remove: false }],
        },
        {
          entity: [{ entityType: IP, entityName: '10.0.0.1' }],
          ops: [{ key: 'connection_creation_rate', value: 2.5, remove: false }],
        },
        {
          entity: [{ entityType: 'user', entityName: 'u' }],
          ops: [{ key: 'connection_creation_rate', value: 5, remove: false }],
        },
        {
          entity: [
            { entityType: IP, entityName: '10.0.0.1' },
            { entityType: 'user', entityName: 'u' },
          ],
          ops: [{ key: 'connection_creation_rate', value: 5, remove: false }],
        },
        {
          entity: [{ entityType: IP, entityName: '10.0.0.1' }],
          ops: [{ key: 'connection_creation_rate', value: 2 ** 31, remove: false }],
        },
        {
          entity: [{ entityType: IP, entityName: '' }],
          ops: [{ key: 'connection_creation_rate', value: 5, remove: false }],
        },
      ],
      validateOnly: false,
    });
    const errors = response.entries.map((e: { errorCode: number; errorMessage: string }) => [
      e.errorCode,
      e.errorMessage,
    ]);
    assert.deepEqual(errors, [
      [ErrorCode.INVALID_REQUEST, 'not an address is not a valid IP or resolvable host.'],
      [ErrorCode.INVALID_REQUEST, 'Invalid configuration key producer_byte_rate'],
      [ErrorCode.INVALID_REQUEST, 'connection_creation_rate cannot be a fractional value.'],
      [ErrorCode.INVALID_REQUEST, 'Invalid configuration key connection_creation_rate'],
      [
        ErrorCode.INVALID_REQUEST,
        'Invalid quota entity combination, IP entity should not be used with user/client ID entity.',
      ],
      [ErrorCode.INVALID_REQUEST, 'Proposed value for connection_creation_rate is too large for an INT.'],
      [ErrorCode.INVALID_REQUEST, 'Empty ip not supported'],
    ]);
  });

  it('stores an address and the default (ips/<address>, ips/<default>) and describes them', async () => {
    assert.equal((await alter('10.1.2.3', 7)).errorCode, ErrorCode.NONE);
    assert.equal((await alter(null, 1000)).errorCode, ErrorCode.NONE);
    const all = await admin.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, {
      components: [{ entityType: IP, matchType: 2, match: null }],
      strict: false,
    });
    assert.equal(all.errorCode, ErrorCode.NONE);
    const listed = all.entries
      .map((e: { entity: { entityName: string | null }[]; values: { key: string; value: number }[] }) => [
        e.entity[0]?.entityName,
        e.values[0]?.key,
        e.values[0]?.value,
      ])
      .sort();
    assert.deepEqual(listed, [
      [null, 'connection_creation_rate', 1000],
      ['10.1.2.3', 'connection_creation_rate', 7],
    ]);
    const defaultOnly = await admin.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, {
      components: [{ entityType: IP, matchType: 1, match: null }],
      strict: true,
    });
    assert.equal(defaultOnly.entries.length, 1);
    // A user filter lists no IP entity.
    const users = await admin.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, {
      components: [{ entityType: 'user', matchType: 2, match: null }],
      strict: false,
    });
    assert.equal(users.entries.length, 0);
    // An empty filter that is not strict (the Admin client's ClientQuotaFilter.all()) lists every entity, IP ones
    // included; a strict one lists none.
    const everything = await admin.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, { components: [], strict: false });
    assert.equal(everything.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      everything.entries
        .map((e: { entity: { entityType: string; entityName: string | null }[] }) => e.entity)
        .sort((a: { entityName: string | null }[], b: { entityName: string | null }[]) =>
          String(a[0]?.entityName).localeCompare(String(b[0]?.entityName)),
        ),
      [[{ entityType: IP, entityName: '10.1.2.3' }], [{ entityType: IP, entityName: null }]],
    );
    const none = await admin.call(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, { components: [], strict: true });
    assert.deepEqual(none.entries, []);
    assert.equal((await alter(null, null)).errorCode, ErrorCode.NONE);
    assert.equal((await alter('10.1.2.3', null)).errorCode, ErrorCode.NONE);
  });

  it('brook configs --entity-type ips alters and describes them as kafka-configs', async () => {
    const configs = (args: string[]) =>
      run(process.execPath, [BROOK, 'configs', '--bootstrap-server', broker.bootstrap, ...args], {
        timeoutMs: 30_000,
      });
    const altered = await configs([
      '--alter',
      '--entity-type',
      'ips',
      '--entity-name',
      '10.9.8.7',
      '--add-config',
      'connection_creation_rate=15',
    ]);
    assert.equal(altered.code, 0, altered.stderr);
    const described = await configs(['--describe', '--entity-type', 'ips', '--entity-name', '10.9.8.7']);
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /Quota configs for ip '10\.9\.8\.7' are connection_creation_rate=15\.0/);
    const removed = await configs([
      '--alter',
      '--entity-type',
      'ips',
      '--entity-name',
      '10.9.8.7',
      '--delete-config',
      'connection_creation_rate',
    ]);
    assert.equal(removed.code, 0, removed.stderr);
  });

  it('holds and closes new connections over the rate, and serves again once it falls', async () => {
    assert.ok(await served(broker.port), 'served before any quota');
    assert.equal((await alter('127.0.0.1', 2)).errorCode, ErrorCode.NONE);
    // The notification reaches the broker's quota table through the watch: wait for the quota to bite.
    let refused = 0;
    const deadline = Date.now() + 15_000;
    while (refused === 0 && Date.now() < deadline) {
      const results = await Promise.all(Array.from({ length: 6 }, () => served(broker.port, 1_500)));
      refused = results.filter((ok) => !ok).length;
    }
    assert.ok(refused > 0, 'no connection was throttled at 2 connections/s');
    // The connection already open is not affected.
    const versions = await admin.call(ApiKey.API_VERSIONS, 0, {});
    assert.equal(versions.errorCode, ErrorCode.NONE);
    // Removed: new connections are served again.
    assert.equal((await alter('127.0.0.1', null)).errorCode, ErrorCode.NONE);
    let servedAgain = false;
    const until = Date.now() + 15_000;
    while (!servedAgain && Date.now() < until) {
      servedAgain = await served(broker.port);
      if (!servedAgain) await sleep(200);
    }
    assert.ok(servedAgain, 'not served after the quota was removed');
  });

  it('does not count the connections it refuses: a client retrying faster than the rate gets through', async () => {
    assert.equal((await alter('127.0.0.1', 2)).errorCode, ErrorCode.NONE);
    try {
      let refused = 0;
      const deadline = Date.now() + 15_000;
      while (refused === 0 && Date.now() < deadline) {
        const results = await Promise.all(Array.from({ length: 6 }, () => served(broker.port, 1_500)));
        refused = results.filter((ok) => !ok).length;
      }
      assert.ok(refused > 0, 'the quota bites');
      // A new connection every 200 ms, 5/s. Kafka takes a refused connection back out of the rate, so the ones it
      // accepts keep to 2/s; were refused ones counted, the rate would stay above 2/s for as long as the retries go on.
      const attempts: Promise<boolean>[] = [];
      let servedCount = 0;
      for (let i = 0; i < 25; i++) {
        attempts.push(
          served(broker.port, 1_500).then((ok) => {
            if (ok) servedCount++;
            return ok;
          }),
        );
        await sleep(200);
      }
      await Promise.all(attempts);
      assert.ok(servedCount >= 3, `${servedCount} of 25 retries served in 5 s at 2 connections/s`);
    } finally {
      assert.equal((await alter('127.0.0.1', null)).errorCode, ErrorCode.NONE);
    }
  });
});
