// DescribeUserScramCredentials (50): the SCRAM mechanisms and iteration counts of the users asked for (all
// users with credentials when the list is null), never their keys. A user asked for without credentials is
// RESOURCE_NOT_FOUND, one asked for twice DUPLICATE_RESOURCE, as in Kafka.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeUserScramCredentialsRequest,
  DescribeUserScramCredentialsResponse,
} from '../../protocol/messages/50-describe-user-scram-credentials.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

const MECHANISM_TYPE = { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 2 } as const;

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
    const asked = request.users?.map((u) => u.name) ?? null;
    const names = asked ?? (await store.users());
    const results: DescribeUserScramCredentialsResponse['results'] = [];
    const seen = new Set<string>();
    for (const user of names) {
      if (seen.has(user)) {
        results.push({
          user,
          errorCode: ErrorCode.DUPLICATE_RESOURCE,
          errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`,
          credentialInfos: [],
        });
        continue;
      }
      seen.add(user);
      const infos = await store.describe(user);
      if (infos.length === 0) {
        if (asked !== null) {
          results.push({
            user,
            errorCode: ErrorCode.RESOURCE_NOT_FOUND,
            errorMessage: `Attempt to describe a user credential that does not exist: ${user}`,
            credentialInfos: [],
          });
        }
        continue;
      }
      results.push({
        user,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        credentialInfos: infos.map((i) => ({
          mechanism: MECHANISM_TYPE[i.mechanism],
          iterations: i.iterations,
        })),
      });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
  },
});
