// The authorization log, Kafka's kafka.authorizer.logger: a denied operation at INFO, an allowed one at DEBUG,
// each line with principal, host, operation and resource in Kafka's words:
//
//   Principal = User:bob is Denied Operation = Read from host = 127.0.0.1 on resource = Topic:LITERAL:orders
//   for request = Fetch with resourceRefCount = 1
//
// brook.authorizer.log.level picks what is written (OFF, INFO, DEBUG). The level is read once into two booleans,
// so that a check whose line would not be written costs one comparison and nothing is formatted. The logger
// given must write DEBUG lines when the level is DEBUG (the broker gives one of its own level then).

import type { Logger } from '../../common/logger.js';
import { operationName, resourceTypeName } from './acl-types.js';

export type AuditLevel = 'OFF' | 'INFO' | 'DEBUG';

export const AUDIT_LOGGER_NAME = 'kafka.authorizer.logger';

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
      `Principal = ${principal} is ${allowed ? 'Allowed' : 'Denied'} Operation = ${operationName(operation)} ` +
      `from host = ${host} on resource = ${resourceTypeName(resourceType)}:LITERAL:${name} ` +
      `for request = ${requestName()} with resourceRefCount = 1`;
    if (allowed) this.logger.debug(line);
    else this.logger.info(line);
  }
}
