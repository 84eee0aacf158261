// The authorization log, Kafka's kafka.authorizer.logger: a denied operation at INFO, an allowed one at DEBUG,
// each line with principal, host, operation and resource in Kafka's words:
//
//   Principal = User:bob is Denied Operation = Read from host = 127.0.0.1 on resource = Topic:LITERAL:orders
//   for request = Fetch with resourceRefCount = 1
//
// brook.authorizer.log.level picks what is written (OFF, INFO, DEBUG). The level is read once into two booleans,
// so that a check whose line would not be written costs one comparison and nothing is formatted. The logger
// given must write DEBUG lines when the level is DEBUG (the broker gives one of its own level then).
//
// Bounds: the principal and the resource name come from the client (a SASL user name, a topic or group name in
// a request, checked before it is validated), so each is written on one line with its control characters escaped
// (a name holding a newline cannot forge a line of its own) and cut after NAME_CHARS_MAX characters (a denied
// request naming a megabyte-long group writes one short line, not a megabyte). Names Kafka accepts are unchanged.

import type { Logger } from '../../common/logger.js';
import { operationName, resourceTypeName } from './acl-types.js';

export type AuditLevel = 'OFF' | 'INFO' | 'DEBUG';

export const AUDIT_LOGGER_NAME = 'kafka.authorizer.logger';

/** Longest principal or resource name written whole; a topic name is at most 249 characters. */
export const NAME_CHARS_MAX = 1024;

// C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** `value` as one bounded line: control characters as \uXXXX, cut with a count of what was left out. */
export function printable(value: string): string {
  const cut = value.length > NAME_CHARS_MAX;
  const head = cut ? value.slice(0, NAME_CHARS_MAX) : value;
  const escaped = head.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return cut ? `${escaped}...(${value.length - NAME_CHARS_MAX} more characters)` : escaped;
}

export class AuditLog {
  readonly deniedEnabled: boolean;
  readonly allowedEnabled: boolean;

  constructor(
    level: AuditLevel,
    private readonly logger: Logger,
  ) {
    this.deniedEnabled = level !== 'OFF';
    this.allowedEnabled = level === 'DEBUG';
  }

  /** Writes one line when the level wants it; `requestName` is called only then. */
  record(
    allowed: boolean,
    principal: string,
    host: string,
    operation: number,
    resourceType: number,
    name: string,
    requestName: () => string,
  ): void {
    if (allowed ? !this.allowedEnabled : !this.deniedEnabled) return;
    const line =
      `Principal = ${printable(principal)} is ${allowed ? 'Allowed' : 'Denied'} ` +
      `Operation = ${operationName(operation)} from host = ${host} ` +
      `on resource = ${resourceTypeName(resourceType)}:LITERAL:${printable(name)} ` +
      `for request = ${requestName()} with resourceRefCount = 1`;
    if (allowed) this.logger.debug(line);
    else this.logger.info(line);
  }
}
