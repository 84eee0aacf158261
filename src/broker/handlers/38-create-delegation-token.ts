// CreateDelegationToken (38): a token for the caller or, with CREATE_TOKENS on the owner's User resource
// (KIP-373, v3), for another owner. Kafka's order of checks: the connection (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
// the owner (DELEGATION_TOKEN_AUTHORIZATION_FAILED), the renewers' type (INVALID_PRINCIPAL_TYPE: only User), then
// DELEGATION_TOKEN_AUTH_DISABLED without a secret key. A maxLifetimeMs of 0 or less means the broker's maximum.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  CreateDelegationTokenRequest,
  CreateDelegationTokenResponse,
} from '../../protocol/messages/38-create-delegation-token.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorize, ResourceType } from '../authorization.js';
import { allowTokenRequests, principalOf, splitPrincipal } from './delegation-token-rules.js';

function answer(
  errorCode: number,
  owner: string,
  requester: string,
  token?: { issue: number; expiry: number; max: number; tokenId: string; hmac: Buffer },
): CreateDelegationTokenResponse {
  const o = splitPrincipal(owner);
  const r = splitPrincipal(requester);
  return {
    errorCode,
    principalType: o.principalType,
    principalName: o.principalName,
    tokenRequesterPrincipalType: r.principalType,
    tokenRequesterPrincipalName: r.principalName,
    issueTimestampMs: BigInt(token?.issue ?? -1),
    expiryTimestampMs: BigInt(token?.expiry ?? -1),
    maxTimestampMs: BigInt(token?.max ?? -1),
    tokenId: token?.tokenId ?? '',
    hmac: token?.hmac ?? Buffer.alloc(0),
    throttleTimeMs: 0,
  };
}

export const createDelegationTokenHandler = defineHandler<
  CreateDelegationTokenRequest,
  CreateDelegationTokenResponse
>({
  apiKey: ApiKey.CREATE_DELEGATION_TOKEN,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    const requester = context.connection.security.principal;
    const ownerName = request.ownerPrincipalName;
    const owner =
      ownerName === null || ownerName === ''
        ? requester
        : principalOf(request.ownerPrincipalType ?? 'User', ownerName);
    if (!allowTokenRequests(context)) {
      return answer(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, owner, requester);
    }
    if (owner !== requester && !authorize(context, AclOperation.CREATE_TOKENS, ResourceType.USER, owner)) {
      return answer(ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, owner, requester);
    }
    if (request.renewers.some((r) => r.principalType !== 'User')) {
      return answer(ErrorCode.INVALID_PRINCIPAL_TYPE, owner, requester);
    }
    const renewers = request.renewers.map((r) => principalOf(r.principalType, r.principalName));
    const created = await context.services.delegationTokens.create(
      owner,
      requester,
      renewers,
      Number(request.maxLifetimeMs),
    );
    const token = created.token;
    if (token === null) return answer(created.errorCode, owner, requester);
    return answer(ErrorCode.NONE, owner, requester, {
      issue: token.issueTimestampMs,
      expiry: token.expiryTimestampMs,
      max: token.maxTimestampMs,
      tokenId: token.tokenId,
      hmac: created.hmac,
    });
  },
});
