// DescribeAcls (29): the ACL bindings a filter matches, grouped by resource pattern, as Kafka's AclApis. Needs
// DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED); a filter with an UNKNOWN element is INVALID_REQUEST.
// Without an authorizer Kafka answers SECURITY_DISABLED, and so does Brook.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeAclsRequest,
  DescribeAclsResponse,
  DescribeAclsResponseDescribeAclsResource,
} from '../../protocol/messages/29-describe-acls.js';
import { ApiKey } from '../../protocol/registry.js';
import { filterProblem } from '../../security/authorizer/acl-filter.js';
import { patternKey } from '../../security/authorizer/acl-types.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const describeAclsHandler = defineHandler<DescribeAclsRequest, DescribeAclsResponse>({
  apiKey: ApiKey.DESCRIBE_ACLS,
  minVersion: 0,
  maxVersion: 3,
  handle(context, request) {
    const authorizer = context.services.authorizer;
    const failed = (errorCode: number, errorMessage: string): DescribeAclsResponse => ({
      throttleTimeMs: 0,
      errorCode,
      errorMessage,
      resources: [],
    });
    if (authorizer === null)
      return failed(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured on the broker');
    if (!authorizeCluster(context, AclOperation.DESCRIBE)) {
      return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.');
    }
    const filter = {
      resourceType: request.resourceTypeFilter,
      name: request.resourceNameFilter,
      patternType: request.patternTypeFilter,
      principal: request.principalFilter,
      host: request.hostFilter,
      operation: request.operation,
      permissionType: request.permissionType,
    };
    const problem = filterProblem(filter);
    if (problem !== null) return failed(ErrorCode.INVALID_REQUEST, problem);
    const byPattern = new Map<string, DescribeAclsResponseDescribeAclsResource>();
    for (const { pattern, entry } of authorizer.describe(filter)) {
      const key = patternKey(pattern);
      let resource = byPattern.get(key);
      if (resource === undefined) {
        resource = {
          resourceType: pattern.resourceType,
          resourceName: pattern.name,
          patternType: pattern.patternType,
          acls: [],
        };
        byPattern.set(key, resource);
      }
      resource.acls.push({ ...entry });
    }
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      resources: [...byPattern.values()],
    };
  },
});
