// AlterUserScramCredentials (51): upserts and deletes users' SCRAM credentials in the metadata store at
// /config/users/<user>, where Kafka keeps them. The client sends the salt and the salted password; the broker
// stores only the stored and server keys derived from them. Per-user errors as Kafka: an unknown mechanism is
// UNSUPPORTED_SASL_MECHANISM, iterations out of bounds or an empty name UNACCEPTABLE_CREDENTIAL, a user and
// mechanism named twice DUPLICATE_RESOURCE, deleting a credential that is not there RESOURCE_NOT_FOUND. A user
// with any error is left unchanged: the changes to one user apply together or not at all, as in Kafka.

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
import type { ScramCredentialChange } from '../../security/sasl/scram-store.js';
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
    // Kafka's order (ZkAdminManager): first what is wrong with an operation on its own, then a (user, mechanism)
    // named twice among the users still standing, then a removal of a credential that is not there.
    for (const c of [...request.deletions, ...request.upsertions]) {
      if (c.name === '') fail(c.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
      else if (SCRAM_MECHANISM_TYPES[c.mechanism] === undefined) {
        fail(c.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism');
      }
    }
    for (const u of request.upsertions) {
      if (u.iterations < SCRAM_ITERATIONS_MIN) {
        fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations');
      } else if (u.iterations > SCRAM_ITERATIONS_MAX) {
        fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations');
      } else if (u.salt.length === 0 || u.saltedPassword.length === 0) {
        fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Salt and salted password must not be empty');
      }
    }
    const counts = new Map<string, number>();
    for (const c of [...request.deletions, ...request.upsertions]) {
      if (results.has(c.name)) continue;
      counts.set(`${c.name}\0${c.mechanism}`, (counts.get(`${c.name}\0${c.mechanism}`) ?? 0) + 1);
    }
    for (const c of [...request.deletions, ...request.upsertions]) {
      if ((counts.get(`${c.name}\0${c.mechanism}`) ?? 0) > 1) {
        fail(
          c.name,
          ErrorCode.DUPLICATE_RESOURCE,
          'A user credential cannot be altered twice in the same request',
        );
      }
    }
    // Each remaining user's changes are written together or not at all (ScramCredentialStore.alter).
    const changes = new Map<string, ScramCredentialChange[]>();
    const changesOf = (user: string): ScramCredentialChange[] => {
      let list = changes.get(user);
      if (list === undefined) changes.set(user, (list = []));
      return list;
    };
    for (const d of request.deletions) {
      if (results.has(d.name)) continue;
      changesOf(d.name).push({ mechanism: SCRAM_MECHANISM_TYPES[d.mechanism]!, credential: null });
    }
    for (const u of request.upsertions) {
      if (results.has(u.name)) continue;
      const mechanism = SCRAM_MECHANISM_TYPES[u.mechanism]!;
      const credential = credentialFromSalted(
        mechanism,
        Buffer.from(u.salt),
        Buffer.from(u.saltedPassword),
        u.iterations,
      );
      changesOf(u.name).push({ mechanism, credential });
    }
    for (const [user, list] of changes) {
      if (!(await store.alter(user, list)))
        fail(user, ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist');
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
