// A broker with the ACL authorizer on, for authorization tests: a PLAINTEXT listener (the inter-broker one,
// whose User:ANONYMOUS is the super user, so tests administer through it) and a SASL_PLAINTEXT listener where
// alice, bob and carol log in with PLAIN. `as(user)` gives an authenticated WireClient.

import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, type StartOptions, startBroker } from './broker-process.js';
import { WireClient } from './wire-client.js';
import { freePort } from './zookeeper.js';

export const ACL_USERS = { alice: 'alice-secret', bob: 'bob-secret', carol: 'carol-secret' } as const;
export type AclUser = keyof typeof ACL_USERS;

const JAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required ${Object.entries(ACL_USERS)
  .map(([u, p]) => `user_${u}="${p}"`)
  .join(' ')};`;

export interface AclBroker {
  readonly broker: BrokerProcess;
  readonly plainPort: number;
  readonly saslPort: number;
  /** A connection authenticated as `user` with SASL/PLAIN. */
  as(user: AclUser): Promise<WireClient>;
  /** A PLAINTEXT connection: User:ANONYMOUS, the super user. */
  admin(): Promise<WireClient>;
}

export function saslOverrides(plainPort: number, saslPort: number): Record<string, string> {
  return {
    listeners: `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
    'inter.broker.listener.name': 'PLAINTEXT',
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
    'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer',
    'super.users': 'User:ANONYMOUS',
  };
}

export async function saslClient(port: number, user: string, password: string): Promise<WireClient> {
  const client = await WireClient.connect('127.0.0.1', port);
  const handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, { mechanism: 'PLAIN' });
  assert.equal(handshake.errorCode, ErrorCode.NONE);
  const auth = await client.call(ApiKey.SASL_AUTHENTICATE, 2, {
    authBytes: Buffer.from(`\u0000${user}\u0000${password}`),
  });
  assert.equal(auth.errorCode, ErrorCode.NONE, auth.errorMessage);
  return client;
}

/** The error Metadata v9 answers `user` (SASL/PLAIN on `port`) for `topic`: NONE once it may describe it. */
export async function topicErrorFor(port: number, user: AclUser, topic: string): Promise<number> {
  const client = await saslClient(port, user, ACL_USERS[user]);
  try {
    const response = await client.call(ApiKey.METADATA, 9, {
      topics: [{ name: topic }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    return response.topics[0].errorCode;
  } finally {
    client.close();
  }
}

export async function startAclBroker(
  options: StartOptions & { extra?: Record<string, string | number | boolean> } = {},
): Promise<AclBroker> {
  const plainPort = options.port ?? (await freePort());
  const saslPort = await freePort();
  const broker = await startBroker({
    ...options,
    port: plainPort,
    overrides: { ...saslOverrides(plainPort, saslPort), ...options.extra },
  });
  return {
    broker,
    plainPort,
    saslPort,
    as: (user) => saslClient(saslPort, user, ACL_USERS[user]),
    admin: () => WireClient.connect('127.0.0.1', plainPort),
  };
}

/** CreateAcls v3 of one binding each, asserting every creation succeeded. */
export async function addAcls(
  admin: WireClient,
  acls: {
    resourceType: number;
    resourceName: string;
    patternType?: number;
    principal: string;
    host?: string;
    operation: number;
    permissionType?: number;
  }[],
): Promise<void> {
  const response = await admin.call(ApiKey.CREATE_ACLS, 3, {
    creations: acls.map((a) => ({
      resourceType: a.resourceType,
      resourceName: a.resourceName,
      resourcePatternType: a.patternType ?? 3,
      principal: a.principal,
      host: a.host ?? '*',
      operation: a.operation,
      permissionType: a.permissionType ?? 3,
    })),
  });
  for (const r of response.results) assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage);
}

/** DeleteAcls v3 of everything matching (type, name, pattern type); answers how many were deleted. */
export async function removeAcls(
  admin: WireClient,
  resourceType: number,
  name: string | null,
  patternType = 1,
) {
  const response = await admin.call(ApiKey.DELETE_ACLS, 3, {
    filters: [
      {
        resourceTypeFilter: resourceType,
        resourceNameFilter: name,
        patternTypeFilter: patternType,
        principalFilter: null,
        hostFilter: null,
        operation: 1,
        permissionType: 1,
      },
    ],
  });
  assert.equal(response.filterResults[0].errorCode, ErrorCode.NONE);
  return response.filterResults[0].matchingAcls.length as number;
}
