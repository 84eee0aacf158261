// What the four delegation token APIs share, as Kafka's KafkaApis: which connections may use them at all
// (allowTokenRequests), and principals as the messages carry them (type and name apart).

import type { RequestContext } from '../api-handler.js';

/**
 * Kafka's allowTokenRequests: not over a connection that authenticated with a delegation token, not over
 * PLAINTEXT, and not over one-way SSL (an SSL connection without a client certificate, User:ANONYMOUS): a token
 * must be asked for by someone who proved who they are, with something other than a token.
 */
export function allowTokenRequests(context: RequestContext): boolean {
  const security = context.connection.security;
  if (security.tokenAuthenticated) return false;
  if (security.protocol === 'PLAINTEXT') return false;
  return !(security.protocol === 'SSL' && security.principal === 'User:ANONYMOUS');
}

/** "User:alice" from a message's type and name fields. */
export function principalOf(type: string, name: string): string {
  return `${type}:${name}`;
}

/** A message's type and name fields from "User:alice" (split at the first colon). */
export function splitPrincipal(principal: string): { principalType: string; principalName: string } {
  const colon = principal.indexOf(':');
  return colon < 0
    ? { principalType: '', principalName: principal }
    : { principalType: principal.slice(0, colon), principalName: principal.slice(colon + 1) };
}
