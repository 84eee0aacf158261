// BROKER_LOGGER resources (KIP-412; `kafka-configs --entity-type broker-loggers`): DescribeConfigs lists this
// broker's loggers with the level each writes at, and IncrementalAlterConfigs SETs a logger's level or DELETEs it
// (the logger then takes its ancestors' level again), over the process's LogLevels (src/common/log-levels.ts). As in
// Kafka, the levels are not persisted and each broker answers only for itself. Legacy AlterConfigs does not take
// these resources (config-change.ts). Authorization (DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster) is the
// caller's.

import { isKafkaLogLevel, KAFKA_LOG_LEVELS, type LogLevels, ROOT_LOGGER } from '../common/log-levels.js';
import type { Logger } from '../common/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import { AlterConfigOp } from './config/config-error-codes.js';
import { ConfigSource, ConfigType } from './config/config-types.js';
import type { DescribedConfig } from './config/describe-configs.js';

export type LoggerResult<T> =
  | ({ readonly ok: true } & T)
  | { readonly ok: false; readonly errorCode: number; readonly errorMessage: string };

interface LoggerOperation {
  readonly name: string;
  readonly value: string | null;
  readonly configOperation: number;
}

/** Kafka's list of valid levels in its error message: sorted by name. */
const VALID_LEVELS_TEXT = [...KAFKA_LOG_LEVELS].sort().join(', ');

function refused(
  errorCode: number,
  errorMessage: string,
): { ok: false; errorCode: number; errorMessage: string } {
  return { ok: false, errorCode, errorMessage };
}

/**
 * DescribeConfigs: every logger (or those of `keys` that exist; unknown names are left out) with its level, in
 * Kafka's form: source DYNAMIC_BROKER_LOGGER_CONFIG, not read-only, no type, synonyms or documentation.
 */
export function describeBrokerLoggers(
  levels: LogLevels,
  brokerId: number,
  resourceName: string,
  keys: readonly string[] | null,
): LoggerResult<{ configs: DescribedConfig[] }> {
  // Kafka's ConfigHelper: the resource is one broker, named by its id; no cluster-wide default.
  if (resourceName === '') return refused(ErrorCode.INVALID_REQUEST, 'Broker id must not be empty');
  if (!/^-?\d+$/.test(resourceName))
    return refused(ErrorCode.INVALID_REQUEST, `Broker id must be an integer, but it is: ${resourceName}`);
  if (Number(resourceName) !== brokerId) {
    return refused(
      ErrorCode.INVALID_REQUEST,
      `Unexpected broker id, expected ${brokerId} but received ${resourceName}`,
    );
  }
  const wanted = keys === null || keys.length === 0 ? null : new Set(keys);
  const configs = levels
    .loggers()
    .filter(([name]) => wanted === null || wanted.has(name))
    .map(
      ([name, level]): DescribedConfig => ({
        name,
        value: level,
        readOnly: false,
        isDefault: false,
        configSource: ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
        isSensitive: false,
        synonyms: [],
        configType: ConfigType.UNKNOWN,
        documentation: null,
      }),
    );
  return { ok: true, configs };
}

/**
 * IncrementalAlterConfigs: Kafka's checks in its order (the request's shape, the broker id, then each operation),
 * all before any level changes; validate_only stops there. Each change is logged at WARN, as Kafka logs it.
 */
export function alterBrokerLoggers(
  levels: LogLevels,
  brokerId: number,
  resourceName: string,
  operations: readonly LoggerOperation[],
  validateOnly: boolean,
  logger: Logger,
): LoggerResult<object> {
  const checked = checkOperations(levels, brokerId, resourceName, operations);
  if (!checked.ok || validateOnly) return checked;
  for (const { name, value, configOperation } of operations) {
    if (configOperation === AlterConfigOp.SET && value !== null && isKafkaLogLevel(value)) {
      levels.set(name, value);
      logger.warn(`Updated the log level of ${name} to ${value}`);
    } else {
      levels.unset(name);
      logger.warn(`Unset the log level of ${name}`);
    }
  }
  return { ok: true };
}

function checkOperations(
  levels: LogLevels,
  brokerId: number,
  resourceName: string,
  operations: readonly LoggerOperation[],
): LoggerResult<object> {
  // Repeated keys and missing values were refused before (config-change.ts, malformedEntries).
  if (!/^-?\d+$/.test(resourceName))
    return refused(ErrorCode.INVALID_REQUEST, `Node id must be an integer, but it is: ${resourceName}`);
  if (Number(resourceName) !== brokerId) {
    return refused(
      ErrorCode.INVALID_REQUEST,
      `Unexpected node id. Expected ${brokerId}, but received ${resourceName}`,
    );
  }
  for (const op of operations) {
    const refusal = checkOperation(levels, op);
    if (refusal !== null) return refusal;
  }
  return { ok: true };
}

/** Kafka's RuntimeLoggerManager rules for one operation: an unknown logger or level is INVALID_CONFIG. */
function checkOperation(
  levels: LogLevels,
  { name, value, configOperation }: LoggerOperation,
): LoggerResult<object> | null {
  const missing = refused(ErrorCode.INVALID_CONFIG, `Logger ${name} does not exist!`);
  switch (configOperation) {
    case AlterConfigOp.SET:
      if (!levels.exists(name)) return missing;
      if (value === null || !isKafkaLogLevel(value)) {
        return refused(
          ErrorCode.INVALID_CONFIG,
          `Cannot set the log level of ${name} to ${value} as it is not a supported log level. Valid log levels are ${VALID_LEVELS_TEXT}`,
        );
      }
      return null;
    case AlterConfigOp.DELETE:
      if (!levels.exists(name)) return missing;
      if (name === ROOT_LOGGER) {
        return refused(
          ErrorCode.INVALID_REQUEST,
          `Removing the log level of the ${ROOT_LOGGER} logger is not allowed`,
        );
      }
      return null;
    case AlterConfigOp.APPEND:
      return refused(
        ErrorCode.INVALID_REQUEST,
        'APPEND operation is not allowed for the BROKER_LOGGER resource',
      );
    case AlterConfigOp.SUBTRACT:
      return refused(
        ErrorCode.INVALID_REQUEST,
        'SUBTRACT operation is not allowed for the BROKER_LOGGER resource',
      );
    default:
      return refused(
        ErrorCode.INVALID_REQUEST,
        `Unknown operation type ${configOperation} is not allowed for the BROKER_LOGGER resource`,
      );
  }
}
