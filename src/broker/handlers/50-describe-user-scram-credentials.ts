// DescribeUserScramCredentials (50): the SCRAM mechanisms and iteration counts of the users asked for (all
// users with credentials when the list is null or empty), never their keys. A user asked for without credentials
// is RESOURCE_NOT_FOUND, one asked for twice DUPLICATE_RESOURCE, as in Kafka.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeUserScramCredentialsRequest,
  DescribeUserScramCredentialsResponse,
} from '../../protocol/messages/50-describe-user-scram-credentials.js';
import { ApiKey } from '../../protocol/registry.js';
import type { ScramCredentialStore } from '../../security/sasl/scram-store.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

const MECHANISM_TYPE = { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 2 } as const;

type Result = DescribeUserScramCredentialsResponse['results'][number];

function failed(user: string, errorCode: number, errorMessage: string): Result {
  return { user, errorCode, errorMessage, credentialInfos: [] };
}

/** The user's mechanisms and iterations; null when the user has no SCRAM credential. */
async function described(store: ScramCredentialStore, user: string): Promise<Result | null> {
  const infos = await store.describe(user);
  if (infos.length === 0) return null;
  const credentialInfos = infos.map((i) => ({
    mechanism: MECHANISM_TYPE[i.mechanism],
    iterations: i.iterations,
  }));
  return { user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos };
}

/** Every user with a credential, in name order, as Kafka lists them. */
async function describeAll(store: ScramCredentialStore): Promise<Result[]> {
  const results: Result[] = [];
  for (const user of (await store.users()).sort()) {
    const result = await described(store, user);
    if (result !== null) results.push(result);
  }
  return results;
}

/**
 * One result per user named, in the order first named, as Kafka: an empty name (which no stored user has) is
 * RESOURCE_NOT_FOUND, a name given twice DUPLICATE_RESOURCE, a user without credentials RESOURCE_NOT_FOUND.
 */
async function describeNamed(store: ScramCredentialStore, asked: readonly string[]): Promise<Result[]> {
  const results: Result[] = [];
  for (const user of new Set(asked)) {
    if (user === '') {
      results.push(failed(user, ErrorCode.RESOURCE_NOT_FOUND, 'Username must not be empty'));
    } else if (asked.indexOf(user) !== asked.lastIndexOf(user)) {
      const message = `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`;
      results.push(failed(user, ErrorCode.DUPLICATE_RESOURCE, message));
    } else {
      const message = `Attempt to describe a user credential that does not exist: ${user}`;
      results.push((await described(store, user)) ?? failed(user, ErrorCode.RESOURCE_NOT_FOUND, message));
    }
  }
  return results;
}

export const describeUserScramCredentialsHandler = defineHandler<
  DescribeUserScramCredentialsRequest,
  DescribeUserScramCredentialsResponse
>({
  apiKey: ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
  minVersion: 0,
  maxVersion: 0,
  async handle(context, request) {
    if (!authorizeCluster(context, AclOperation.DESCRIBE)) {
      const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      return { throttleTimeMs: 0, errorCode, errorMessage: null, results: [] };
    }
    const store = context.services.sasl.scramCredentials;
    // Null and empty both ask for every user, as in Kafka: the Java AdminClient sends an empty list, not null,
    // when no user is named (kafka-configs --describe --entity-type users).
    const results =
      request.users === null || request.users.length === 0
        ? await describeAll(store)
        : await describeNamed(
            store,
            request.users.map((u) => u.name),
          );
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
  },
});
