// RenewDelegationToken (39): moves a token's expiry to now + renewPeriodMs (delegation.token.expiry.time.ms when
// negative), never past its maximum lifetime. Only its owner and renewers may (DELEGATION_TOKEN_OWNER_MISMATCH);
// an unknown HMAC is DELEGATION_TOKEN_NOT_FOUND, an expired token DELEGATION_TOKEN_EXPIRED.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  RenewDelegationTokenRequest,
  RenewDelegationTokenResponse,
} from '../../protocol/messages/39-renew-delegation-token.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { allowTokenRequests } from './delegation-token-rules.js';

export const renewDelegationTokenHandler = defineHandler<
  RenewDelegationTokenRequest,
  RenewDelegationTokenResponse
>({
  apiKey: ApiKey.RENEW_DELEGATION_TOKEN,
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
    const result = await context.services.delegationTokens.renew(
      context.connection.security.principal,
      Buffer.from(request.hmac),
      Number(request.renewPeriodMs),
    );
    return {
      errorCode: result.errorCode,
      expiryTimestampMs: BigInt(result.expiryTimestampMs),
      throttleTimeMs: 0,
    };
  },
});
