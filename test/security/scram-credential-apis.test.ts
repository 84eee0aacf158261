// KIP-554's SCRAM credential APIs through the wire, answered as Kafka's ZooKeeper-mode broker answers them
// (ZkAdminManager): AlterUserScramCredentials validates each operation, then refuses a (user, mechanism) named
// twice, then a removal of a credential that is not there, and a user with any error is left exactly as it was;
// DescribeUserScramCredentials takes an empty list as "every user" and answers each user named once.

import assert from 'node:assert/strict';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { WireClient } from '../helpers/wire-client.js';

const SHA_256 = 1;
const SHA_512 = 2;

let broker: InProcessBroker;
let client: WireClient;

function upsertion(name: string, mechanism: number, iterations = 4096) {
  const salt = randomBytes(16);
  const [length, digest] = mechanism === SHA_256 ? [32, 'sha256'] : [64, 'sha512'];
  return {
    name,
    mechanism,
    iterations,
    salt,
    saltedPassword: pbkdf2Sync(`${name}-pw`, salt, iterations, length, digest),
  };
}

type Upsertion = ReturnType<typeof upsertion>;

async function alter(deletions: { name: string; mechanism: number }[], upsertions: Upsertion[]) {
  const response = await client.call(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, { deletions, upsertions });
  return response.results.map((r: { user: string; errorCode: number; errorMessage: string | null }) => [
    r.user,
    r.errorCode,
    r.errorMessage,
  ]);
}

/** Each named user's [mechanism, iterations] pairs, or the error code answered for that user. */
async function credentials(...users: string[]) {
  const response = await client.call(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {
    users: users.map((name) => ({ name })),
  });
  return Object.fromEntries(
    response.results.map(
      (r: {
        user: string;
        errorCode: number;
        credentialInfos: { mechanism: number; iterations: number }[];
      }) => [
        r.user,
        r.errorCode === ErrorCode.NONE
          ? r.credentialInfos.map((c) => [c.mechanism, c.iterations])
          : r.errorCode,
      ],
    ),
  );
}

before(async () => {
  broker = await startInProcessBroker();
  client = await WireClient.connect(broker.host, broker.port);
});

after(async () => {
  client?.close();
  await broker?.stop();
});

describe('AlterUserScramCredentials', () => {
  it('removing two credentials of a user who has one is RESOURCE_NOT_FOUND and removes neither', async () => {
    assert.deepEqual(await alter([], [upsertion('ann', SHA_256)]), [['ann', ErrorCode.NONE, null]]);
    // kafka-configs --alter --delete-config 'SCRAM-SHA-256,SCRAM-SHA-512' --entity-name ann sends both.
    assert.deepEqual(
      await alter(
        [
          { name: 'ann', mechanism: SHA_256 },
          { name: 'ann', mechanism: SHA_512 },
        ],
        [],
      ),
      [['ann', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist']],
    );
    assert.deepEqual(await credentials('ann'), { ann: [[SHA_256, 4096]] });
  });

  it('an upsertion beside a refused removal is not applied either', async () => {
    assert.deepEqual(await alter([], [upsertion('bea', SHA_256)]), [['bea', ErrorCode.NONE, null]]);
    assert.deepEqual(await alter([{ name: 'bea', mechanism: SHA_512 }], [upsertion('bea', SHA_256, 8192)]), [
      ['bea', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist'],
    ]);
    assert.deepEqual(await credentials('bea'), { bea: [[SHA_256, 4096]] });
  });

  it('iterations below 4096 or above 16384 are UNACCEPTABLE_CREDENTIAL, ahead of a mechanism named twice', async () => {
    assert.deepEqual(
      await alter(
        [{ name: 'cid', mechanism: SHA_256 }],
        [upsertion('cid', SHA_256, 4095), upsertion('dan', SHA_512, 16385), upsertion('eve', SHA_512, 16384)],
      ),
      [
        ['cid', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations'],
        ['dan', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations'],
        ['eve', ErrorCode.NONE, null],
      ],
    );
    assert.deepEqual(await credentials('cid', 'dan', 'eve'), {
      cid: ErrorCode.RESOURCE_NOT_FOUND,
      dan: ErrorCode.RESOURCE_NOT_FOUND,
      eve: [[SHA_512, 16384]],
    });
  });

  it('a user and mechanism named twice is DUPLICATE_RESOURCE and changes nothing of that user', async () => {
    assert.deepEqual(
      await alter(
        [{ name: 'fay', mechanism: SHA_256 }],
        [upsertion('fay', SHA_256), upsertion('fay', SHA_512)],
      ),
      [
        [
          'fay',
          ErrorCode.DUPLICATE_RESOURCE,
          'A user credential cannot be altered twice in the same request',
        ],
      ],
    );
    assert.deepEqual(await credentials('fay'), { fay: ErrorCode.RESOURCE_NOT_FOUND });
  });
});

describe('DescribeUserScramCredentials', () => {
  async function describeAll(users: { name: string }[] | null) {
    const response = await client.call(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, { users });
    assert.equal(response.errorCode, ErrorCode.NONE);
    return response.results.map((r: { user: string; errorCode: number }) => [r.user, r.errorCode]);
  }

  it('an empty list describes every user with credentials, in name order, as null does', async () => {
    // The Java AdminClient's describeUserScramCredentials() (kafka-configs --describe --entity-type users)
    // sends an empty list, not null.
    assert.deepEqual(await alter([], [upsertion('zoe', SHA_512), upsertion('abe', SHA_256)]), [
      ['zoe', ErrorCode.NONE, null],
      ['abe', ErrorCode.NONE, null],
    ]);
    const everyone = await describeAll([]);
    assert.deepEqual(
      everyone.map(([user]: [string]) => user),
      [...everyone.map(([user]: [string]) => user)].sort(),
    );
    assert.ok(everyone.some(([user]: [string]) => user === 'abe'));
    assert.ok(everyone.some(([user]: [string]) => user === 'zoe'));
    assert.ok(everyone.every(([, code]: [string, number]) => code === ErrorCode.NONE));
    assert.deepEqual(await describeAll(null), everyone);
  });

  it('a user named twice gets one DUPLICATE_RESOURCE result, an empty name RESOURCE_NOT_FOUND', async () => {
    assert.deepEqual(
      await describeAll([
        { name: 'abe' },
        { name: 'nobody' },
        { name: 'abe' },
        { name: '' },
        { name: 'zoe' },
      ]),
      [
        ['abe', ErrorCode.DUPLICATE_RESOURCE],
        ['nobody', ErrorCode.RESOURCE_NOT_FOUND],
        ['', ErrorCode.RESOURCE_NOT_FOUND],
        ['zoe', ErrorCode.NONE],
      ],
    );
  });
});
