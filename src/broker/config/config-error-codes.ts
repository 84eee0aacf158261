// The Kafka error codes that config validation returns, as values for responses. src/protocol will own the
// full table of error codes; these few are repeated here (same numbers) until it lands, so that this module
// does not wait on it.

export const ConfigErrorCode = {
  NONE: 0,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  INVALID_CONFIG: 40,
  INVALID_REQUEST: 42,
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
