// The common tail of AlterConfigs and IncrementalAlterConfigs: a validated change is written (unless
// validate_only) through the dynamic config store, which notifies every broker.

import { ErrorCode } from '../../protocol/errors.js';
import type { RequestContext } from '../api-handler.js';
import type { ConfigChangeResult } from '../config/config-error-codes.js';

export type ConfigTarget = { kind: 'topic'; name: string } | { kind: 'broker'; perBroker: boolean };

export async function applyConfigChange(
  context: RequestContext,
  target: ConfigTarget,
  checked: ConfigChangeResult,
  validateOnly: boolean,
): Promise<{ errorCode: number; errorMessage: string | null }> {
  if (target.kind === 'topic' && context.services.metadata.topic(target.name) === undefined) {
    return {
      errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      errorMessage: `Topic ${target.name} does not exist.`,
    };
  }
  if (!checked.ok) return { errorCode: checked.errorCode, errorMessage: checked.errorMessage };
  if (validateOnly) return { errorCode: ErrorCode.NONE, errorMessage: null };
  const { dynamicConfig } = context.services;
  const written =
    target.kind === 'topic'
      ? await dynamicConfig.writeTopicConfig(target.name, checked.configs)
      : await dynamicConfig.writeBrokerConfig(target.perBroker, checked.configs);
  return written
    ? { errorCode: ErrorCode.NONE, errorMessage: null }
    : {
        errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
        errorMessage: 'the coordination store refused the change',
      };
}
