// DeleteAcls (31): removes the bindings each filter matches and answers them, as Kafka's AclApis. Needs ALTER on
// the cluster (CLUSTER_AUTHORIZATION_FAILED per filter); a filter with an UNKNOWN element is INVALID_REQUEST.
// Without an authorizer every filter is SECURITY_DISABLED, as Kafka answers.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DeleteAclsRequest,
  DeleteAclsResponse,
  DeleteAclsResponseDeleteAclsFilterResult,
} from '../../protocol/messages/31-delete-acls.js';
import { ApiKey } from '../../protocol/registry.js';
import { filterProblem } from '../../security/authorizer/acl-filter.js';
import type { AclBindingFilter } from '../../security/authorizer/acl-types.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const deleteAclsHandler = defineHandler<DeleteAclsRequest, DeleteAclsResponse>({
  apiKey: ApiKey.DELETE_ACLS,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    const authorizer = context.services.authorizer;
    const all = (errorCode: number, errorMessage: string): DeleteAclsResponse => ({
      throttleTimeMs: 0,
      filterResults: request.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })),
    });
    if (authorizer === null) return all(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured.');
    if (!authorizeCluster(context, AclOperation.ALTER)) {
      return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.');
    }
    const filters: AclBindingFilter[] = request.filters.map((f) => ({
      resourceType: f.resourceTypeFilter,
      name: f.resourceNameFilter,
      patternType: f.patternTypeFilter,
      principal: f.principalFilter,
      host: f.hostFilter,
      operation: f.operation,
      permissionType: f.permissionType,
    }));
    const results: (DeleteAclsResponseDeleteAclsFilterResult | null)[] = filters.map((f) => {
      const problem = filterProblem(f);
      return problem === null
        ? null
        : { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: problem, matchingAcls: [] };
    });
    const validIndex = results.flatMap((r, i) => (r === null ? [i] : []));
    const deleted = await authorizer.delete(validIndex.map((i) => filters[i]!));
    deleted.forEach((d, j) => {
      results[validIndex[j]!] = {
        errorCode: d.error === null ? ErrorCode.NONE : ErrorCode.UNKNOWN_SERVER_ERROR,
        errorMessage: d.error,
        matchingAcls: d.deleted.map(({ pattern, entry }) => ({
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          resourceType: pattern.resourceType,
          resourceName: pattern.name,
          patternType: pattern.patternType,
          principal: entry.principal,
          host: entry.host,
          operation: entry.operation,
          permissionType: entry.permissionType,
        })),
      };
    });
    return { throttleTimeMs: 0, filterResults: results as DeleteAclsResponseDeleteAclsFilterResult[] };
  },
});
