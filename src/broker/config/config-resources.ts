// Request-level entry points for DescribeConfigs, AlterConfigs and IncrementalAlterConfigs: one resource in,
// one result out, with Kafka's per-resource errors (unknown topic, bad topic name, another broker's id,
// unsupported resource type) decided here so the handlers only authorize, call, store and encode. The caller
// supplies the state through ConfigState; nothing here stores anything.

import { topicNameProblem } from '../../controller/topic-names.js';
import {
  type ConfigEntry,
  type ConfigOperation,
  validateAlterBrokerConfigs,
  validateAlterTopicConfigs,
  validateIncrementalBrokerConfigs,
  validateIncrementalTopicConfigs,
} from './alter-validation.js';
import { brokerResource } from './broker-resource.js';
import { type ConfigChangeResult, ConfigErrorCode } from './config-error-codes.js';
import type { BrokerConfigLayers } from './config-layers.js';
import { ConfigResourceType } from './config-types.js';
import { type DescribedConfig, describeBrokerConfigs, describeTopicConfigs } from './describe-configs.js';

export interface ConfigState {
  readonly brokerId: number;
  readonly layers: BrokerConfigLayers;
  /** A topic's stored overrides, or undefined when the topic does not exist. */
  topicOverrides(topic: string): ReadonlyMap<string, string> | undefined;
}

export interface DescribeConfigsResultData {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly resourceType: number;
  readonly resourceName: string;
  readonly configs: readonly DescribedConfig[];
}

export interface DescribeResource {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly configurationKeys: readonly string[] | null;
}

/** What a validated change asks the caller to store: a topic's overrides, or one dynamic broker layer. */
export type ConfigTarget =
  | { readonly kind: 'topic'; readonly topic: string }
  | { readonly kind: 'broker'; readonly perBroker: boolean };

export type AlterResourceResult =
  | { readonly ok: true; readonly target: ConfigTarget; readonly configs: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly errorCode: number; readonly errorMessage: string };

type Located =
  | { readonly ok: true; readonly target: ConfigTarget; readonly overrides: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly errorCode: number; readonly errorMessage: string };

function locate(state: ConfigState, resourceType: number, resourceName: string): Located {
  if (resourceType === ConfigResourceType.TOPIC) {
    const problem = topicNameProblem(resourceName);
    if (problem !== null)
      return { ok: false, errorCode: ConfigErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: problem };
    const overrides = state.topicOverrides(resourceName);
    if (overrides === undefined) {
      return {
        ok: false,
        errorCode: ConfigErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        errorMessage: `Topic ${resourceName} does not exist`,
      };
    }
    return { ok: true, target: { kind: 'topic', topic: resourceName }, overrides };
  }
  if (resourceType === ConfigResourceType.BROKER) {
    const broker = brokerResource(resourceName, state.brokerId);
    if (!broker.ok) return broker;
    const layers = state.layers;
    return {
      ok: true,
      target: { kind: 'broker', perBroker: broker.perBroker },
      overrides: broker.perBroker ? layers.dynamicBroker : layers.dynamicDefault,
    };
  }
  return {
    ok: false,
    errorCode: ConfigErrorCode.INVALID_REQUEST,
    errorMessage: `Unsupported resource type ${resourceType} for resource ${resourceName}`,
  };
}

export function describeResource(
  state: ConfigState,
  resource: DescribeResource,
  includeSynonyms: boolean,
  includeDocumentation: boolean,
): DescribeConfigsResultData {
  const { resourceType, resourceName } = resource;
  const located = locate(state, resourceType, resourceName);
  if (!located.ok) {
    return {
      errorCode: located.errorCode,
      errorMessage: located.errorMessage,
      resourceType,
      resourceName,
      configs: [],
    };
  }
  const options = { keys: resource.configurationKeys, includeSynonyms, includeDocumentation };
  const configs =
    located.target.kind === 'topic'
      ? describeTopicConfigs(located.overrides, state.layers, options)
      : describeBrokerConfigs(state.layers, located.target.perBroker, options);
  return { errorCode: ConfigErrorCode.NONE, errorMessage: null, resourceType, resourceName, configs };
}

function withTarget(target: ConfigTarget, result: ConfigChangeResult): AlterResourceResult {
  return result.ok ? { ok: true, target, configs: result.configs } : result;
}

/** AlterConfigs (legacy): the entries replace every stored value of the resource. */
export function alterResource(
  state: ConfigState,
  resourceType: number,
  resourceName: string,
  entries: readonly ConfigEntry[],
): AlterResourceResult {
  const located = locate(state, resourceType, resourceName);
  if (!located.ok) return located;
  const { target } = located;
  return withTarget(
    target,
    target.kind === 'topic'
      ? validateAlterTopicConfigs(entries, state.layers, resourceName)
      : validateAlterBrokerConfigs(entries, target.perBroker, state.layers, resourceName),
  );
}

/** IncrementalAlterConfigs: the operations edit the stored values of the resource. */
export function incrementalAlterResource(
  state: ConfigState,
  resourceType: number,
  resourceName: string,
  operations: readonly ConfigOperation[],
): AlterResourceResult {
  const located = locate(state, resourceType, resourceName);
  if (!located.ok) return located;
  const { target } = located;
  return withTarget(
    target,
    target.kind === 'topic'
      ? validateIncrementalTopicConfigs(located.overrides, operations, state.layers, resourceName)
      : validateIncrementalBrokerConfigs(operations, target.perBroker, state.layers, resourceName),
  );
}
