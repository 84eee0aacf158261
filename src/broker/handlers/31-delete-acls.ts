// DeleteAcls (31): without an authorizer every filter is answered SECURITY_DISABLED, as Kafka does.

import { ErrorCode } from '../../protocol/errors.js';
import type { DeleteAclsRequest, DeleteAclsResponse } from '../../protocol/messages/31-delete-acls.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const deleteAclsHandler = defineHandler<DeleteAclsRequest, DeleteAclsResponse>({
  apiKey: ApiKey.DELETE_ACLS,
  minVersion: 0,
  maxVersion: 3,
  handle(_context, request) {
    return {
      throttleTimeMs: 0,
      filterResults: request.filters.map(() => ({
        errorCode: ErrorCode.SECURITY_DISABLED,
        errorMessage: 'No Authorizer is configured.',
        matchingAcls: [],
      })),
    };
  },
});
