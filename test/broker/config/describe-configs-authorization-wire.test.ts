// DescribeConfigs refused by the ACL authorizer: Kafka's ConfigHelper answers a topic without DESCRIBE_CONFIGS
// TOPIC_AUTHORIZATION_FAILED and a broker without DESCRIBE_CONFIGS on the cluster CLUSTER_AUTHORIZATION_FAILED,
// each with the error's own message (Errors.message), and no configs. The alterations answer no message.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { type AclBroker, startAclBroker } from '../../helpers/acl-broker.js';
import { BROKER_RESOURCE, TOPIC_RESOURCE } from '../../helpers/dynamic-configs.js';
import { createTopic, type WireClient } from '../../helpers/wire-client.js';

describe('DescribeConfigs refused by the authorizer', () => {
  let acl: AclBroker | undefined;
  let bob: WireClient | undefined;
  before(async () => {
    acl = await startAclBroker();
    const admin = await acl.admin();
    try {
      await createTopic(admin, 'guarded', { numPartitions: 1 });
    } finally {
      admin.close();
    }
    bob = await acl.as('bob');
  });
  after(async () => {
    bob?.close();
    await acl?.broker.stop();
  });

  test("answers each refusal with Kafka's message for its error", async () => {
    const response = await bob!.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [
        { resourceType: TOPIC_RESOURCE, resourceName: 'guarded', configurationKeys: null },
        { resourceType: BROKER_RESOURCE, resourceName: '0', configurationKeys: null },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.deepEqual(
      response.results.map((r) => [r.resourceName, r.errorCode, r.errorMessage, r.configs.length]),
      [
        ['guarded', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.', 0],
        ['0', ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.', 0],
      ],
    );
    const altered = await bob!.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: TOPIC_RESOURCE,
          resourceName: 'guarded',
          configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }],
        },
      ],
      validateOnly: false,
    });
    assert.deepEqual(
      [altered.responses[0].errorCode, altered.responses[0].errorMessage],
      [ErrorCode.TOPIC_AUTHORIZATION_FAILED, null],
    );
  });
});
