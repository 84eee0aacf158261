// CreateAcls (30): without an authorizer every creation is answered SECURITY_DISABLED, as Kafka does.

import { ErrorCode } from '../../protocol/errors.js';
import type { CreateAclsRequest, CreateAclsResponse } from '../../protocol/messages/30-create-acls.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const createAclsHandler = defineHandler<CreateAclsRequest, CreateAclsResponse>({
  apiKey: ApiKey.CREATE_ACLS,
  minVersion: 0,
  maxVersion: 3,
  handle(_context, request) {
    return {
      throttleTimeMs: 0,
      results: request.creations.map(() => ({
        errorCode: ErrorCode.SECURITY_DISABLED,
        errorMessage: 'No Authorizer is configured.',
      })),
    };
  },
});
