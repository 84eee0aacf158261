// Client quota entities as Kafka names and stores them. An entity is a user, a client id, or a user with a client
// id; either part may be Kafka's default entity (`<default>` in the store, a null name on the wire). The store
// keeps each entity's configs where Kafka keeps them:
//
//   /config/users/<sanitized user>                              user (and its SCRAM credentials, same document)
//   /config/users/<sanitized user>/clients/<sanitized client>   user and client id
//   /config/clients/<sanitized client>                          client id
//
// with <default> for a default part, and the change notification's entity_path the same path without /config/.
// Sanitizing is Kafka's Sanitizer (URL encoding, '*' as %2A, space as %20), shared with the SCRAM store.

import { desanitizeUser, sanitizeUser } from '../../security/sasl/scram-credential.js';

/** Kafka's ZooKeeperInternals.DEFAULT_STRING: the default entity's name in the store. */
export const DEFAULT_ENTITY_NAME = '<default>';

/** Entity type names of the AlterClientQuotas / DescribeClientQuotas wire. */
export const USER_ENTITY_TYPE = 'user';
export const CLIENT_ID_ENTITY_TYPE = 'client-id';
export const IP_ENTITY_TYPE = 'ip';

/** A part of an entity: a name, null for the default entity, undefined when the entity has no such part. */
export type EntityPart = string | null | undefined;

export interface QuotaEntity {
  readonly user: EntityPart;
  readonly clientId: EntityPart;
  /** An IP entity (KIP-612) has no other part: `/config/ips/<address>`, `<default>` for the default. */
  readonly ip?: EntityPart;
}

/** The IP entity's one key (KIP-612): new connections per second from one address; an INT in Kafka. */
export const IP_CONNECTION_RATE_KEY = 'connection_creation_rate';

/** Quota keys Kafka allows for users and client ids, with their ConfigDef types. */
export const CLIENT_QUOTA_KEYS: ReadonlyMap<string, 'long' | 'double'> = new Map([
  ['producer_byte_rate', 'long'],
  ['consumer_byte_rate', 'long'],
  ['request_percentage', 'double'],
  ['controller_mutation_rate', 'double'],
] as const);

export function isClientQuotaKey(key: string): boolean {
  return CLIENT_QUOTA_KEYS.has(key);
}

export function sanitizeEntityName(name: string | null): string {
  return name === null ? DEFAULT_ENTITY_NAME : sanitizeUser(name);
}

export function desanitizeEntityName(segment: string): string | null {
  return segment === DEFAULT_ENTITY_NAME ? null : desanitizeUser(segment);
}

/** The entity's path below /config, which is also its change notification's entity_path. */
export function entityConfigPath(entity: QuotaEntity): string {
  const { user, clientId } = entity;
  // Kafka writes addresses as they are (they need no sanitizing).
  if (entity.ip !== undefined) return `ips/${entity.ip ?? DEFAULT_ENTITY_NAME}`;
  if (user !== undefined && clientId !== undefined)
    return `users/${sanitizeEntityName(user)}/clients/${sanitizeEntityName(clientId)}`;
  if (user !== undefined) return `users/${sanitizeEntityName(user)}`;
  if (clientId !== undefined) return `clients/${sanitizeEntityName(clientId)}`;
  throw new Error('a client quota entity has a user or a client id');
}

/** The entity a notification's entity_path names, or null when it names no quota entity (topics, brokers). */
export function parseEntityConfigPath(entityPath: string): QuotaEntity | null {
  const parts = entityPath.split('/');
  try {
    if (parts[0] === 'users' && parts.length === 2)
      return { user: desanitizeEntityName(parts[1]!), clientId: undefined };
    if (parts[0] === 'users' && parts.length === 4 && parts[2] === 'clients')
      return { user: desanitizeEntityName(parts[1]!), clientId: desanitizeEntityName(parts[3]!) };
    if (parts[0] === 'clients' && parts.length === 2)
      return { user: undefined, clientId: desanitizeEntityName(parts[1]!) };
    if (parts[0] === 'ips' && parts.length === 2)
      return { user: undefined, clientId: undefined, ip: parts[1] === DEFAULT_ENTITY_NAME ? null : parts[1] };
  } catch {
    // A name that is not valid URL encoding was not written by Kafka's tools or Brook: not a quota entity.
  }
  return null;
}

/** A map key for an entity; names are never empty and a default part is marked apart from any name. */
export function entityKey(user: EntityPart, clientId: EntityPart): string {
  return `${partKey(user)}\u0001${partKey(clientId)}`;
}

function partKey(part: EntityPart): string {
  if (part === undefined) return '';
  if (part === null) return '\u0000';
  return `=${part}`;
}

/** The user part of a principal ("User:alice" gives alice), as Kafka's quotas use principal.getName. */
export function principalName(principal: string): string {
  const colon = principal.indexOf(':');
  return colon < 0 ? principal : principal.slice(colon + 1);
}
