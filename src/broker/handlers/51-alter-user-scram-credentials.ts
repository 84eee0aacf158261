// AlterUserScramCredentials (51): upserts and deletes users' SCRAM credentials in the metadata store at
// /config/users/<user>, where Kafka keeps them. The client sends the salt and the salted password; the broker
// stores only the stored and server keys derived from them. Per-user errors as Kafka: an unknown mechanism is
// UNSUPPORTED_SASL_MECHANISM, iterations out of bounds or an empty name UNACCEPTABLE_CREDENTIAL, a user named twice
// DUPLICATE_RESOURCE, deleting a credential that is not there RESOURCE_NOT_FOUND.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  AlterUserScramCredentialsRequest,
  AlterUserScramCredentialsResponse,
} from '../../protocol/messages/51-alter-user-scram-credentials.js';
import { ApiKey } from '../../protocol/registry.js';
import {
  credentialFromSalted,
  SCRAM_ITERATIONS_MAX,
  SCRAM_ITERATIONS_MIN,
  SCRAM_MECHANISM_TYPES,
} from '../../security/sasl/scram-credential.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

type Result = AlterUserScramCredentialsResponse['results'][number];

export const alterUserScramCredentialsHandler = defineHandler<
  AlterUserScramCredentialsRequest,
  AlterUserScramCredentialsResponse
>({
  apiKey: ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
  minVersion: 0,
  maxVersion: 0,
  async handle(context, request) {
    // Kafka's check: ALTER on the cluster, else every user named is refused.
    if (!authorizeCluster(context, AclOperation.ALTER)) {
      const users = [...new Set([...request.deletions, ...request.upsertions].map((c) => c.name))];
      return {
        throttleTimeMs: 0,
        results: users.map((user) => ({
          user,
          errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
          errorMessage: null,
        })),
      };
    }
    const store = context.services.sasl.scramCredentials;
    const results = new Map<string, Result>();
    const fail = (user: string, errorCode: number, errorMessage: string): void => {
      if (!results.has(user)) results.set(user, { user, errorCode, errorMessage });
    };
    const counts = new Map<string, number>();
    for (const c of [...request.deletions, ...request.upsertions]) {
      counts.set(`${c.name}\0${c.mechanism}`, (counts.get(`${c.name}\0${c.mechanism}`) ?? 0) + 1);
    }
    for (const c of [...request.deletions, ...request.upsertions]) {
      if (c.name === '') fail(c.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
      else if (SCRAM_MECHANISM_TYPES[c.mechanism] === undefined) {
        fail(c.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism');
      } else if ((counts.get(`${c.name}\0${c.mechanism}`) ?? 0) > 1) {
        fail(
          c.name,
          ErrorCode.DUPLICATE_RESOURCE,
          'A user credential cannot be altered twice in the same request',
        );
      }
    }
    for (const u of request.upsertions) {
      if (u.iterations < SCRAM_ITERATIONS_MIN || u.iterations > SCRAM_ITERATIONS_MAX) {
        fail(
          u.name,
          ErrorCode.UNACCEPTABLE_CREDENTIAL,
          `Iterations must be in [${SCRAM_ITERATIONS_MIN}, ${SCRAM_ITERATIONS_MAX}]`,
        );
      } else if (u.salt.length === 0 || u.saltedPassword.length === 0) {
        fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Salt and salted password must not be empty');
      }
    }
    for (const d of request.deletions) {
      if (results.has(d.name)) continue;
      const removed = await store.update(d.name, SCRAM_MECHANISM_TYPES[d.mechanism]!, null);
      if (!removed)
        fail(d.name, ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist');
    }
    for (const u of request.upsertions) {
      if (results.has(u.name)) continue;
      const mechanism = SCRAM_MECHANISM_TYPES[u.mechanism]!;
      const salt = Buffer.from(u.salt);
      await store.update(
        u.name,
        mechanism,
        credentialFromSalted(mechanism, salt, Buffer.from(u.saltedPassword), u.iterations),
      );
    }
    const users = new Set([...request.deletions, ...request.upsertions].map((c) => c.name));
    return {
      throttleTimeMs: 0,
      results: [...users].map(
        (user) => results.get(user) ?? { user, errorCode: ErrorCode.NONE, errorMessage: null },
      ),
    };
  },
});
