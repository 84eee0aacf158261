// Dynamic configs over the wire, as kafka-configs.sh --alter sends them: one IncrementalAlterConfigs per call,
// SET for a string and DELETE for null, asserted accepted. Shared by the tests that change a running broker's
// (or a topic's) settings and observe the behaviour.

import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { WireClient } from './wire-client.js';

/** ConfigResource types of IncrementalAlterConfigs. */
export const TOPIC_RESOURCE = 2;
export const BROKER_RESOURCE = 4;
/** The broker resource whose configs are the cluster-wide defaults. */
export const CLUSTER_DEFAULT = '';

const SET = 0;
const DELETE = 1;

/** What an alteration answers for its one resource: [errorCode, errorMessage]. */
export type AlterOutcome = [number, string | null];

/** IncrementalAlterConfigs of one resource (SET for a string, DELETE for null), and what it answers. */
export async function incrementalAlter(
  client: WireClient,
  resourceType: number,
  resourceName: string,
  configs: Record<string, string | null>,
): Promise<AlterOutcome> {
  const response = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
    resources: [
      {
        resourceType,
        resourceName,
        configs: Object.entries(configs).map(([name, value]) => ({
          name,
          configOperation: value === null ? DELETE : SET,
          value,
        })),
      },
    ],
    validateOnly: false,
  });
  return [response.responses[0].errorCode, response.responses[0].errorMessage];
}

/** The legacy AlterConfigs (v2) of one resource, which replaces its whole set of dynamic configs; what it answers. */
export async function legacyAlter(
  client: WireClient,
  resourceType: number,
  resourceName: string,
  configs: Record<string, string>,
): Promise<AlterOutcome> {
  const response = await client.call(ApiKey.ALTER_CONFIGS, 2, {
    resources: [
      {
        resourceType,
        resourceName,
        configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
      },
    ],
    validateOnly: false,
  });
  return [response.responses[0].errorCode, response.responses[0].errorMessage];
}

/** Sets (a string) or removes (null) configs on a broker (id or cluster default) or a topic; asserts NONE. */
export async function alterConfigs(
  client: WireClient,
  resourceName: string,
  configs: Record<string, string | null>,
  resourceType = BROKER_RESOURCE,
): Promise<void> {
  const [errorCode, errorMessage] = await incrementalAlter(client, resourceType, resourceName, configs);
  assert.equal(errorCode, ErrorCode.NONE, errorMessage ?? undefined);
}

/** Runs `body` with broker `configs` set on `resourceName`, and removes them afterwards whatever happens. */
export async function withDynamicConfigs(
  client: WireClient,
  resourceName: string,
  configs: Record<string, string>,
  body: () => Promise<void>,
): Promise<void> {
  await alterConfigs(client, resourceName, configs);
  try {
    await body();
  } finally {
    await alterConfigs(client, resourceName, Object.fromEntries(Object.keys(configs).map((k) => [k, null])));
  }
}
