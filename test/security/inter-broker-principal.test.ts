// The inter-broker listener's principal under the ACL authorizer, as Kafka: nothing is granted implicitly. A
// PLAINTEXT connection on the inter-broker listener is User:ANONYMOUS like any other, so unless super.users or an
// ACL gives it CLUSTER_ACTION, a follower fetch is refused (TOPIC_AUTHORIZATION_FAILED per partition, as Kafka's
// fetch answers it) and the controller's requests are CLUSTER_AUTHORIZATION_FAILED. Here super.users names alice
// (SASL/PLAIN) only, the way a cluster whose brokers log in as alice would be set up.
// test/cluster/acl-propagation.test.ts has the other half: a replicated cluster with super.users=User:ANONYMOUS.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { AclOperation as Op, ResourceType as RT } from '../../src/security/authorizer/acl-types.js';
import { type AclBroker, addAcls, startAclBroker } from '../helpers/acl-broker.js';
import { createTopic, fetchBody, produceBatch, type WireClient } from '../helpers/wire-client.js';

const TOPIC = 'ib-t';
let b: AclBroker;
let alice: WireClient;
let anonymous: WireClient;

/** The error of partition 0 in a fetch that claims to come from replica 1 (a follower). */
async function followerFetchError(client: WireClient): Promise<number> {
  const response = await client.call(ApiKey.FETCH, 12, {
    ...fetchBody(TOPIC, 0, 0),
    replicaId: 1,
    replicaState: { replicaId: 1, replicaEpoch: -1n },
  });
  assert.equal(response.errorCode, ErrorCode.NONE);
  return response.responses[0].partitions[0].errorCode;
}

/** A LeaderAndIsr that changes nothing (no partitions): only the authorization decides its answer. */
async function leaderAndIsrError(client: WireClient): Promise<number> {
  const response = await client.call(ApiKey.LEADER_AND_ISR, 5, {
    controllerId: 0,
    isKRaftController: false,
    controllerEpoch: 0,
    brokerEpoch: -1n,
    type: 0,
    ungroupedPartitionStates: [],
    topicStates: [],
    liveLeaders: [],
  });
  return response.errorCode;
}

before(async () => {
  b = await startAclBroker({ extra: { 'super.users': 'User:alice' } });
  alice = await b.as('alice');
  anonymous = await b.admin();
  await createTopic(alice, TOPIC, { numPartitions: 1 });
  const produced = await produceBatch(alice, TOPIC, buildBatch([{ value: 'v' }]));
  assert.equal(produced.errorCode, ErrorCode.NONE);
});

after(async () => {
  alice?.close();
  anonymous?.close();
  await b?.broker.stop();
});

describe('User:ANONYMOUS on a PLAINTEXT inter-broker listener, with an authorizer', () => {
  it('is refused a follower fetch and the controller requests without super.users or an ACL', async () => {
    assert.equal(await followerFetchError(anonymous), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    assert.equal(await leaderAndIsrError(anonymous), ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    // The super user on the other listener is let through (whatever the fetch itself then answers).
    assert.notEqual(await followerFetchError(alice), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  });

  it('is let through once an ACL allows it CLUSTER_ACTION', async () => {
    await addAcls(alice, [
      {
        resourceType: RT.CLUSTER,
        resourceName: 'kafka-cluster',
        principal: 'User:ANONYMOUS',
        operation: Op.CLUSTER_ACTION,
      },
    ]);
    assert.notEqual(await followerFetchError(anonymous), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    assert.notEqual(await leaderAndIsrError(anonymous), ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });
});
