// Two MirrorMaker nodes in dedicated mode with the internal REST server (KIP-710) share the A->B flow's Connect
// group. An internal request that reaches the node that does not lead the flow is forwarded to the leader, as
// Kafka's InternalMirrorResource does (HerderRequestHandler.completeOrForwardRequest), and the leader's answer,
// error included, comes back: before, the follower answered 409 and the caller had to find the leader itself.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MirrorMaker } from '../../../src/connect/mirror/mirror-maker.js';
import type { DistributedHerder } from '../../../src/connect/runtime/distributed/distributed-herder.js';
import {
  type SessionKey,
  signatureHeaders,
} from '../../../src/connect/runtime/distributed/request-signature.js';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import { sleep } from '../../helpers/wait.js';

let a: BrokerProcess;
let b: BrokerProcess;
let dir: string;
const nodes: MirrorMaker[] = [];

before(async () => {
  const overrides = { 'group.initial.rebalance.delay.ms': 0 };
  [a, b] = await Promise.all([startBroker({ overrides }), startBroker({ overrides })]);
  dir = mkdtempSync(join(tmpdir(), 'brook-mirror-forward-'));
});

after(async () => {
  for (const n of nodes) await n.stop().catch(() => {});
  await Promise.all([a?.stop(), b?.stop()]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The herder's flow URL (its REST base with the `/A/B/` prefix) and the session key it signs with. */
function internals(h: DistributedHerder): { url: string; sessionKey: SessionKey | null } {
  const x = h as unknown as { o: { url: string }; configs: { sessionKey: SessionKey | null } };
  return { url: x.o.url, sessionKey: x.configs.sessionKey };
}

test('an internal request to the node that does not lead the flow is forwarded to its leader', async () => {
  const props = {
    clusters: 'A, B',
    'A.bootstrap.servers': a.bootstrap,
    'B.bootstrap.servers': b.bootstrap,
    'A->B.enabled': 'true',
    'A->B.topics': 'forward-none',
    'B->A.emit.heartbeats.enabled': 'false',
    'emit.checkpoints.enabled': 'false',
    'dedicated.mode.enable.internal.rest': 'true',
    listeners: 'http://127.0.0.1:0',
    'replication.factor': '1',
    'offset-syncs.topic.replication.factor': '1',
    'heartbeats.topic.replication.factor': '1',
    'checkpoints.topic.replication.factor': '1',
    'offset.storage.replication.factor': '1',
    'config.storage.replication.factor': '1',
    'status.storage.replication.factor': '1',
  };
  for (let i = 0; i < 2; i++) nodes.push(await MirrorMaker.start(props, () => {}, ['B']));
  const herders = nodes.map((n) => n.flows.find((f) => f.flow.source === 'A')!.herder);
  // Both nodes in one generation, agreeing on the leader, with the session key read.
  const deadline = Date.now() + 60_000;
  let leaderUrl: string | null = null;
  while (Date.now() < deadline) {
    const urls = herders.map((h) => h.leaderUrl());
    const keys = herders.map((h) => internals(h).sessionKey);
    if (urls[0] !== null && urls[0] === urls[1] && keys.every((k) => k !== null)) {
      leaderUrl = urls[0] ?? null;
      break;
    }
    await sleep(200);
  }
  assert.ok(leaderUrl !== null, 'the two nodes agree on a leader');
  const follower = herders.find((h) => internals(h).url !== leaderUrl);
  assert.ok(follower !== undefined, `a follower beside the leader ${leaderUrl}`);
  const { url, sessionKey } = internals(follower);
  const signed = signatureHeaders(sessionKey!, 'HmacSHA256', Buffer.alloc(0));

  // The leader fences (a source connector of the flow): 204 through the follower.
  const fence = await fetch(new URL('connectors/MirrorSourceConnector/fence', url), {
    method: 'PUT',
    headers: signed,
  });
  assert.equal(fence.status, 204, await fence.text());
  // The leader's error comes back as it gave it.
  const missing = await fetch(new URL('connectors/no-such-connector/fence', url), {
    method: 'PUT',
    headers: signed,
  });
  assert.deepEqual(
    { status: missing.status, body: await missing.json() },
    { status: 404, body: { error_code: 404, message: 'Connector no-such-connector not found' } },
  );
  // A request already forwarded twice is not sent on.
  const twice = await fetch(new URL('connectors/MirrorSourceConnector/fence?forward=false', url), {
    method: 'PUT',
    headers: signed,
  });
  assert.deepEqual(
    { status: twice.status, body: await twice.json() },
    {
      status: 409,
      body: {
        error_code: 409,
        message: 'Cannot complete request because of a conflicting operation (e.g. worker rebalance)',
      },
    },
  );
});
