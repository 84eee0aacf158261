// Fetch of a topic no one can name, on a broker with an authorizer, checks authorization first, as Kafka's
// KafkaApis.handleFetchRequest: before v13 the empty name is a topic name like any other, READ on it is checked
// (denied: TOPIC_AUTHORIZATION_FAILED) before the metadata is (UNKNOWN_TOPIC_OR_PARTITION only once authorized);
// a follower without CLUSTER_ACTION gets TOPIC_AUTHORIZATION_FAILED for every partition, one of an unknown topic id
// too. alice logs in with SASL/PLAIN; the PLAINTEXT connection is the super user.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { AclOperation as Op, ResourceType as RT } from '../../src/security/authorizer/acl-types.js';
import { type AclBroker, addAcls, startAclBroker } from '../helpers/acl-broker.js';
import { consumerFetchBody, fetchBody, fetchPartition, type WireClient } from '../helpers/wire-client.js';

const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

describe('Fetch of an empty topic name or unknown id with an authorizer', () => {
  let b: AclBroker;
  let admin: WireClient;
  let alice: WireClient;

  before(async () => {
    b = await startAclBroker();
    admin = await b.admin();
    alice = await b.as('alice');
  });
  after(async () => {
    alice?.close();
    admin?.close();
    await b?.broker.stop();
  });

  it('a follower without CLUSTER_ACTION: TOPIC_AUTHORIZATION_FAILED, before and from v13', async () => {
    const follower = { replicaId: 7, replicaState: { replicaId: 7, replicaEpoch: -1n } };
    const byName = await alice.call(ApiKey.FETCH, 12, { ...fetchBody('', 0, 0), ...follower });
    assert.equal(byName.responses[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'v12');
    const body = consumerFetchBody([{ topicId: UNKNOWN_ID, partitions: [fetchPartition(0, 0)] }]);
    const byId = await alice.call(ApiKey.FETCH, 13, { ...body, ...follower });
    assert.equal(byId.responses[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'v13');
  });

  it('a consumer: READ on the empty name comes before its existence; an unknown id is UNKNOWN_TOPIC_ID', async () => {
    const denied = await alice.call(ApiKey.FETCH, 12, fetchBody('', 0, 0));
    assert.equal(denied.responses[0].partitions[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const body = consumerFetchBody([{ topicId: UNKNOWN_ID, partitions: [fetchPartition(0, 0)] }]);
    const byId = await alice.call(ApiKey.FETCH, 13, body);
    assert.equal(byId.responses[0].partitions[0].errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
    // READ on every topic: the empty name is authorized, and no topic has it.
    await addAcls(admin, [
      { resourceType: RT.TOPIC, resourceName: '*', principal: 'User:alice', operation: Op.READ },
    ]);
    const unknown = await alice.call(ApiKey.FETCH, 12, fetchBody('', 0, 0));
    assert.equal(unknown.responses[0].partitions[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});
