// DescribeDelegationToken (41): the tokens of the owners asked for (all when the list is null, none when it is
// empty), each with its HMAC. As Kafka's filterToken: a token is listed when one of the owners asked for owns or
// may renew it, and the caller owns, requested or may renew it, or has DESCRIBE on the DelegationToken resource
// (its id) or DESCRIBE_TOKENS on the owner's User resource.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeDelegationTokenRequest,
  DescribeDelegationTokenResponse,
} from '../../protocol/messages/41-describe-delegation-token.js';
import { ApiKey } from '../../protocol/registry.js';
import { ownerOrRenewer, type TokenInformation } from '../../security/delegation-token/token-info.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorize, ResourceType } from '../authorization.js';
import { allowTokenRequests, principalOf, splitPrincipal } from './delegation-token-rules.js';

export const describeDelegationTokenHandler = defineHandler<
  DescribeDelegationTokenRequest,
  DescribeDelegationTokenResponse
>({
  apiKey: ApiKey.DESCRIBE_DELEGATION_TOKEN,
  minVersion: 0,
  maxVersion: 3,
  handle(context, request) {
    const failed = (errorCode: number) => ({ errorCode, tokens: [], throttleTimeMs: 0 });
    if (!allowTokenRequests(context)) return failed(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    const manager = context.services.delegationTokens;
    if (!manager.enabled) return failed(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED);
    if (request.owners !== null && request.owners.length === 0) return failed(ErrorCode.NONE);
    const owners = request.owners?.map((o) => principalOf(o.principalType, o.principalName)) ?? null;
    const caller = context.connection.security.principal;
    const eligible = (token: TokenInformation): boolean => {
      if (owners !== null && !owners.some((o) => ownerOrRenewer(token, o))) return false;
      if (ownerOrRenewer(token, caller)) return true;
      return (
        authorize(context, AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, token.tokenId) ||
        authorize(context, AclOperation.DESCRIBE_TOKENS, ResourceType.USER, token.owner)
      );
    };
    const tokens = manager.describe(eligible).map(({ token, hmac }) => {
      const owner = splitPrincipal(token.owner);
      const requester = splitPrincipal(token.tokenRequester);
      return {
        principalType: owner.principalType,
        principalName: owner.principalName,
        tokenRequesterPrincipalType: requester.principalType,
        tokenRequesterPrincipalName: requester.principalName,
        issueTimestamp: BigInt(token.issueTimestampMs),
        expiryTimestamp: BigInt(token.expiryTimestampMs),
        maxTimestamp: BigInt(token.maxTimestampMs),
        tokenId: token.tokenId,
        hmac,
        renewers: token.renewers.map(splitPrincipal),
      };
    });
    return { errorCode: ErrorCode.NONE, tokens, throttleTimeMs: 0 };
  },
});
