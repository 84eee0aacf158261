// A target cluster that lets the mirror's account create and write topics but refuses it the Connect group
// (`A-mm2`): Kafka's DistributedHerder gets GROUP_AUTHORIZATION_FAILED when it joins, its work thread logs the
// exception and the process exits. MirrorMaker must not wait forever for a group it may never join: its start
// fails with an error that names the group, within a minute even on a loaded machine.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { securityOptions } from '../../../src/cli/client-security.js';
import { setClientSecurity } from '../../../src/connect/mirror/mirror-config.js';
import { MirrorMaker } from '../../../src/connect/mirror/mirror-maker.js';
import { ACL_USERS, addAcls, startAclBroker } from '../../helpers/acl-broker.js';
import { startBroker } from '../../helpers/broker-process.js';

// Kafka's ACL codes: resource TOPIC (2), CLUSTER (4); operation ALL (2).
const TOPIC = 2;
const CLUSTER = 4;
const ALL = 2;

test('a target that refuses the Connect group fails the start with a clear error instead of hanging', async (t) => {
  const [source, target] = await Promise.all([startBroker(), startAclBroker()]);
  t.after(() => Promise.all([source.stop(), target.broker.stop()]));
  const wire = await target.admin();
  try {
    // alice may do anything with any topic and the cluster (create topics, write idempotently), but has no ACL
    // on any group.
    await addAcls(wire, [
      { resourceType: TOPIC, resourceName: '*', principal: 'User:alice', operation: ALL },
      { resourceType: CLUSTER, resourceName: 'kafka-cluster', principal: 'User:alice', operation: ALL },
    ]);
  } finally {
    wire.close();
  }
  setClientSecurity(securityOptions);
  t.after(() => setClientSecurity(null));
  const lines: string[] = [];
  const started = MirrorMaker.start(
    {
      clusters: 'A, T',
      'A.bootstrap.servers': source.bootstrap,
      'T.bootstrap.servers': `127.0.0.1:${target.saslPort}`,
      'T.security.protocol': 'SASL_PLAINTEXT',
      'T.sasl.mechanism': 'PLAIN',
      'T.sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
        `username="alice" password="${ACL_USERS.alice}";`,
      'A->T.enabled': 'true',
      'T->A.emit.heartbeats.enabled': 'false',
      'replication.factor': '1',
      'offset-syncs.topic.replication.factor': '1',
      'heartbeats.topic.replication.factor': '1',
      'checkpoints.topic.replication.factor': '1',
      'offset.storage.replication.factor': '1',
      'config.storage.replication.factor': '1',
      'status.storage.replication.factor': '1',
    },
    (line) => lines.push(line),
  );
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), 60_000);
  });
  const outcome = await Promise.race([
    started.then(
      (mm) => ({ mm, error: null }),
      (error: Error) => ({ mm: null, error }),
    ),
    hung,
  ]);
  clearTimeout(timer);
  if (outcome === 'hung') {
    // Stop it once it gives up, whenever that is, so that the test's brokers can stop.
    started.then((mm) => mm.stop()).catch(() => {});
    assert.fail(`MirrorMaker's start still waits after 60 s:\n${lines.slice(-10).join('\n')}`);
  }
  if (outcome.mm !== null) {
    await outcome.mm.stop();
    assert.fail('MirrorMaker started although it may not join its group');
  }
  assert.match(outcome.error!.message, /A-mm2/);
  assert.match(outcome.error!.message, /[Nn]ot authorized|GROUP_AUTHORIZATION_FAILED/);
});
