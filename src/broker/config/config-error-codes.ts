// The Kafka error codes that config validation returns (taken from src/protocol/errors.ts, so the numbers have
// one source), the IncrementalAlterConfigs operations, and the result type of every validation.

import { ErrorCode } from '../../protocol/errors.js';

export const ConfigErrorCode = {
  NONE: ErrorCode.NONE,
  UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  INVALID_TOPIC_EXCEPTION: ErrorCode.INVALID_TOPIC_EXCEPTION,
  INVALID_CONFIG: ErrorCode.INVALID_CONFIG,
  INVALID_REQUEST: ErrorCode.INVALID_REQUEST,
} as const;
export type ConfigErrorCode = (typeof ConfigErrorCode)[keyof typeof ConfigErrorCode];

/** IncrementalAlterConfigs' ConfigOperation values. */
export const AlterConfigOp = {
  SET: 0,
  DELETE: 1,
  APPEND: 2,
  SUBTRACT: 3,
} as const;

/** The outcome of validating a config change: the resulting set of values, or an error code and message. */
export type ConfigChangeResult =
  | { readonly ok: true; readonly configs: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly errorCode: ConfigErrorCode; readonly errorMessage: string };

export function configFailure(errorCode: ConfigErrorCode, errorMessage: string): ConfigChangeResult {
  return { ok: false, errorCode, errorMessage };
}
