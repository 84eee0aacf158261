// What a generator does before it loads a broker: ask its API versions, create the topic (real broker only),
// and wait until Metadata shows every partition with a leader. Versions are fixed per API (those a current
// Java client sends), and checked against what the broker advertises, so a figure always means the same wire.
import { assert } from '../../src/common/assert.js';
import { errorName } from '../../src/protocol/errors.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import type { ApiVersionsResponse } from '../../src/protocol/messages/18-api-versions.js';
import type { CreateTopicsResponse } from '../../src/protocol/messages/19-create-topics.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { WireConnection } from './wire-connection.js';

/** The versions the generators send. Produce v9 and Fetch v12 are the first flexible ones, with topic names. */
export const benchVersions = {
  apiVersions: 3,
  metadata: 9,
  createTopics: 5,
  produce: 9,
  fetch: 12,
} as const;

const topicReadyTimeoutMs = 15_000;

/** Checks that the broker advertises the versions the benchmark sends, for the APIs in `needed`. */
export async function checkApiVersions(
  connection: WireConnection,
  needed: readonly (keyof typeof benchVersions)[],
): Promise<void> {
  const response = await connection.call<ApiVersionsResponse>(
    ApiKey.API_VERSIONS,
    benchVersions.apiVersions,
    {
      clientSoftwareName: 'brook-bench',
      clientSoftwareVersion: '0',
    },
  );
  assert(response.errorCode === 0, `ApiVersions failed: ${errorName(response.errorCode)}`);
  const keys: Record<keyof typeof benchVersions, number> = {
    apiVersions: ApiKey.API_VERSIONS,
    metadata: ApiKey.METADATA,
    createTopics: ApiKey.CREATE_TOPICS,
    produce: ApiKey.PRODUCE,
    fetch: ApiKey.FETCH,
  };
  for (const name of needed) {
    const advertised = response.apiKeys.find((k) => k.apiKey === keys[name]);
    const version = benchVersions[name];
    assert(
      advertised !== undefined && advertised.minVersion <= version && version <= advertised.maxVersion,
      `the broker does not serve ${name} v${version}`,
    );
  }
}

export async function createTopic(
  connection: WireConnection,
  topic: string,
  partitions: number,
): Promise<void> {
  const response = await connection.call<CreateTopicsResponse>(
    ApiKey.CREATE_TOPICS,
    benchVersions.createTopics,
    {
      topics: [
        { name: topic, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] },
      ],
      timeoutMs: 10_000,
      validateOnly: false,
    },
  );
  const result = response.topics[0];
  assert(
    result !== undefined && result.errorCode === 0,
    `CreateTopics ${topic}: ${result?.errorMessage ?? ''}`,
  );
}

/** Polls Metadata until `topic` has `partitions` partitions, each with a leader and no error. */
export async function waitForTopic(
  connection: WireConnection,
  topic: string,
  partitions: number,
  timeoutMs = topicReadyTimeoutMs,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  while (performance.now() < deadline) {
    const response = await connection.call<MetadataResponse>(ApiKey.METADATA, benchVersions.metadata, {
      topics: [{ topicId: '', name: topic }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    const found = response.topics.find((t) => t.name === topic);
    const ready =
      found !== undefined &&
      found.errorCode === 0 &&
      found.partitions.length === partitions &&
      found.partitions.every((p) => p.errorCode === 0 && p.leaderId >= 0);
    if (ready) return;
    last =
      found === undefined ? 'absent' : `${errorName(found.errorCode)}, ${found.partitions.length} partitions`;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`topic ${topic} not ready in ${timeoutMs} ms (${last})`);
}
