// CreateAcls (30): stores ACL bindings, as Kafka's AclApis. The caller needs ALTER on the cluster (else every
// creation is CLUSTER_AUTHORIZATION_FAILED); a binding with an UNKNOWN/ANY element, an empty name, a CLUSTER
// name other than kafka-cluster or an unparsable principal is INVALID_REQUEST. Without an authorizer every
// creation is SECURITY_DISABLED, as Kafka answers.

import { ErrorCode } from '../../protocol/errors.js';
import type { CreateAclsRequest, CreateAclsResponse } from '../../protocol/messages/30-create-acls.js';
import { ApiKey } from '../../protocol/registry.js';
import { bindingProblem } from '../../security/authorizer/acl-filter.js';
import type { AclBinding } from '../../security/authorizer/acl-types.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const createAclsHandler = defineHandler<CreateAclsRequest, CreateAclsResponse>({
  apiKey: ApiKey.CREATE_ACLS,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    const authorizer = context.services.authorizer;
    const all = (errorCode: number, errorMessage: string) => ({
      throttleTimeMs: 0,
      results: request.creations.map(() => ({ errorCode, errorMessage })),
    });
    if (authorizer === null) return all(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured.');
    if (!authorizeCluster(context, AclOperation.ALTER)) {
      return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.');
    }
    const results: { errorCode: number; errorMessage: string | null }[] = [];
    const valid: AclBinding[] = [];
    const validIndex: number[] = [];
    request.creations.forEach((c, i) => {
      const binding: AclBinding = {
        pattern: { resourceType: c.resourceType, name: c.resourceName, patternType: c.resourcePatternType },
        entry: {
          principal: c.principal,
          host: c.host,
          operation: c.operation,
          permissionType: c.permissionType,
        },
      };
      const problem = bindingProblem(binding);
      results.push(
        problem === null
          ? { errorCode: ErrorCode.NONE, errorMessage: null }
          : { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: problem },
      );
      if (problem === null) {
        valid.push(binding);
        validIndex.push(i);
      }
    });
    const created = await authorizer.create(valid);
    created.forEach((error, j) => {
      if (error !== null)
        results[validIndex[j]!] = { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: error };
    });
    return { throttleTimeMs: 0, results };
  },
});
