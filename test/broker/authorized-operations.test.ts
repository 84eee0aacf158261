// Authorized operations (KIP-430) and the ACL APIs on a broker without an authorizer, as Kafka answers them:
// when asked, every operation the resource type supports (a bit per AclOperation code), INT32_MIN when not asked;
// DescribeAcls, CreateAcls and DeleteAcls advertised and answered SECURITY_DISABLED.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { waitForCoordinator } from '../helpers/offset-commits.js';
import { createTopic } from '../helpers/wire-client.js';

const OMITTED = -2147483648;
// Bits of Kafka's AclOperation codes: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
// CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
const bits = (...codes: number[]): number => codes.reduce((acc, c) => acc | (1 << c), 0);
const TOPIC_OPERATIONS = bits(3, 4, 5, 6, 7, 8, 10, 11);
const GROUP_OPERATIONS = bits(3, 6, 8, 10, 11);
const CLUSTER_OPERATIONS = bits(5, 7, 8, 9, 10, 11, 12);

describe('authorized operations and ACL APIs without an authorizer', () => {
  const suite = useBrokerWithClient({}, (suite) => createTopic(suite.client, 'ops', { numPartitions: 1 }));

  const metadata = (version: number, asked: boolean) =>
    suite.client.call(ApiKey.METADATA, version, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'ops' }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: asked,
      includeTopicAuthorizedOperations: asked,
    });

  it('Metadata v8-v10 answers cluster and topic operations when asked, INT32_MIN when not', async () => {
    const asked = await metadata(10, true);
    assert.equal(asked.clusterAuthorizedOperations, CLUSTER_OPERATIONS);
    assert.equal(asked.topics[0].topicAuthorizedOperations, TOPIC_OPERATIONS);
    const notAsked = await metadata(10, false);
    assert.equal(notAsked.clusterAuthorizedOperations, OMITTED);
    assert.equal(notAsked.topics[0].topicAuthorizedOperations, OMITTED);
    // v12 has no cluster field; topic operations are still answered.
    assert.equal((await metadata(12, true)).topics[0].topicAuthorizedOperations, TOPIC_OPERATIONS);
  });

  it('DescribeCluster answers cluster operations when asked', async () => {
    const call = (asked: boolean) =>
      suite.client.call(ApiKey.DESCRIBE_CLUSTER, 1, {
        includeClusterAuthorizedOperations: asked,
        endpointType: 1,
      });
    assert.equal((await call(true)).clusterAuthorizedOperations, CLUSTER_OPERATIONS);
    assert.equal((await call(false)).clusterAuthorizedOperations, OMITTED);
  });

  it('DescribeGroups v3+ answers group operations when asked', async () => {
    await waitForCoordinator(suite.client, 'g');
    const call = (asked: boolean) =>
      suite.client.call(ApiKey.DESCRIBE_GROUPS, 5, { groups: ['g'], includeAuthorizedOperations: asked });
    const asked = await call(true);
    assert.equal(asked.groups[0].errorCode, ErrorCode.NONE);
    assert.equal(asked.groups[0].authorizedOperations, GROUP_OPERATIONS);
    assert.equal((await call(false)).groups[0].authorizedOperations, OMITTED);
  });

  it('advertises DescribeAcls, CreateAcls and DeleteAcls v0-v3', async () => {
    const response = await suite.client.call(ApiKey.API_VERSIONS, 3, {
      clientSoftwareName: 'brook-test',
      clientSoftwareVersion: '1.0',
    });
    for (const apiKey of [ApiKey.DESCRIBE_ACLS, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS]) {
      const entry = response.apiKeys.find((k: { apiKey: number }) => k.apiKey === apiKey);
      assert.deepEqual(entry, { apiKey, minVersion: 0, maxVersion: 3 });
    }
  });

  it('answers the ACL APIs SECURITY_DISABLED', async () => {
    const filter = {
      resourceTypeFilter: 1,
      resourceNameFilter: null,
      patternTypeFilter: 1,
      principalFilter: null,
      hostFilter: null,
      operation: 1,
      permissionType: 1,
    };
    const described = await suite.client.call(ApiKey.DESCRIBE_ACLS, 3, filter);
    assert.equal(described.errorCode, ErrorCode.SECURITY_DISABLED);
    assert.equal(described.errorMessage, 'No Authorizer is configured on the broker');

    const created = await suite.client.call(ApiKey.CREATE_ACLS, 3, {
      creations: [
        {
          resourceType: 2,
          resourceName: 'ops',
          resourcePatternType: 3,
          principal: 'User:alice',
          host: '*',
          operation: 3,
          permissionType: 3,
        },
      ],
    });
    assert.deepEqual(created.results, [
      { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.' },
    ]);

    const deleted = await suite.client.call(ApiKey.DELETE_ACLS, 3, { filters: [filter, filter] });
    assert.deepEqual(
      deleted.filterResults.map((r: { errorCode: number }) => r.errorCode),
      [ErrorCode.SECURITY_DISABLED, ErrorCode.SECURITY_DISABLED],
    );
  });
});
