// ExpireDelegationToken (40): a negative expiryTimePeriodMs removes the token at once (answered with now);
// otherwise its expiry becomes now + the period, never past its maximum lifetime. Owner and renewers only, with
// the errors of RenewDelegationToken.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  ExpireDelegationTokenRequest,
  ExpireDelegationTokenResponse,
} from '../../protocol/messages/40-expire-delegation-token.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { allowTokenRequests } from './delegation-token-rules.js';

export const expireDelegationTokenHandler = defineHandler<
  ExpireDelegationTokenRequest,
  ExpireDelegationTokenResponse
>({
  apiKey: ApiKey.EXPIRE_DELEGATION_TOKEN,
  minVersion: 0,
  maxVersion: 2,
  async handle(context, request) {
    if (!allowTokenRequests(context)) {
      return {
        errorCode: ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
        expiryTimestampMs: -1n,
        throttleTimeMs: 0,
      };
    }
    const result = await context.services.delegationTokens.expire(
      context.connection.security.principal,
      Buffer.from(request.hmac),
      Number(request.expiryTimePeriodMs),
    );
    return {
      errorCode: result.errorCode,
      expiryTimestampMs: BigInt(result.expiryTimestampMs),
      throttleTimeMs: 0,
    };
  },
});
