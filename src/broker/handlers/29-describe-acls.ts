// DescribeAcls (29): Brook has no authorizer, so, as Kafka without authorizer.class.name, it answers
// SECURITY_DISABLED; admin tools then report that security is disabled rather than that the API is missing.

import { ErrorCode } from '../../protocol/errors.js';
import type { DescribeAclsRequest, DescribeAclsResponse } from '../../protocol/messages/29-describe-acls.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const describeAclsHandler = defineHandler<DescribeAclsRequest, DescribeAclsResponse>({
  apiKey: ApiKey.DESCRIBE_ACLS,
  minVersion: 0,
  maxVersion: 3,
  handle() {
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.SECURITY_DISABLED,
      errorMessage: 'No Authorizer is configured on the broker',
      resources: [],
    };
  },
});
