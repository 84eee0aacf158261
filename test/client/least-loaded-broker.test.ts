// A request any broker can answer (Metadata, the admin's any-broker calls) goes to the least loaded known broker,
// as Kafka's NetworkClient.leastLoadedNode picks it: an idle open connection before a broker not connected yet and
// before a busy connection, and never a broker whose reconnect backoff still runs. A random pick opened needless
// connections, queued behind a slow request, and went back to a broker that had just refused it.
//
// One in-process broker answers; its Metadata answer is rewritten to list more brokers: itself under other ids,
// and a listener that counts the connections made to it and closes each at once (a broker that cannot be reached).

import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { Cluster } from '../../src/client/cluster.js';
import type { ClientOptions } from '../../src/client/options.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const DEAD_NODE = 7;
let broker: InProcessBroker;
let dead: net.Server;
let deadPort = 0;
let deadAccepts = 0;
/** The broker ids the Metadata answer lists: at the real broker, or (DEAD_NODE) at the closing listener. */
let listed: number[] = [0];

async function delayed<T>(answer: Promise<T>, delayMs: number): Promise<T> {
  await new Promise((r) => setTimeout(r, delayMs));
  return answer;
}

before(async () => {
  dead = net.createServer((socket) => {
    deadAccepts++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
  deadPort = (dead.address() as net.AddressInfo).port;
  broker = await startInProcessBroker(
    {},
    {
      interceptor: (request) => {
        // The busy connection's request: answered late.
        if (request.apiKey === ApiKey.LIST_GROUPS) return delayed(request.handle(), 1500);
        if (request.apiKey !== ApiKey.METADATA) return undefined;
        return request.handle().then((answer) => {
          const response = answer as MetadataResponse;
          const brokers = listed.map((nodeId) => ({
            nodeId,
            host: '127.0.0.1',
            port: nodeId === DEAD_NODE ? deadPort : broker.port,
            rack: null,
          }));
          return { ...response, brokers };
        });
      },
    },
  );
});

after(async () => {
  await broker?.stop();
  await new Promise((r) => dead?.close(r));
});

async function clusterListing(nodes: number[], extra: Partial<ClientOptions> = {}): Promise<Cluster> {
  listed = nodes;
  const cluster = new Cluster({ bootstrapServers: `127.0.0.1:${broker.port}`, ...extra });
  await cluster.refreshMetadata();
  assert.deepEqual([...cluster.snapshot.brokers.keys()].sort(), [...nodes].sort());
  return cluster;
}

test('an idle open connection is chosen over a broker not connected yet', async () => {
  const cluster = await clusterListing([0, DEAD_NODE]);
  try {
    const ready = await cluster.connection(0);
    for (let i = 0; i < 20; i++) assert.equal(await cluster.anyConnection(), ready, `pick ${i}`);
    assert.equal(deadAccepts, 0, 'no connection was opened to the broker not connected');
  } finally {
    await cluster.close();
  }
});

test('an idle open connection is chosen over one with a request in flight', async () => {
  const cluster = await clusterListing([0, 1]);
  try {
    const busy = await cluster.connection(0);
    const idle = await cluster.connection(1);
    const slow = busy.request(ApiKey.LIST_GROUPS, { statesFilter: [], typesFilter: [] });
    assert.equal(busy.load, 1);
    for (let i = 0; i < 20; i++) assert.equal(await cluster.anyConnection(), idle, `pick ${i}`);
    await slow;
  } finally {
    await cluster.close();
  }
});

test('a broker in reconnect backoff is not chosen', async () => {
  // The backoff outlasts the test: each round's failed attempt keeps the dead broker out of the choice.
  const options = { reconnectBackoffMs: 60_000, reconnectBackoffMaxMs: 60_000 };
  for (let round = 1; round <= 10; round++) {
    const cluster = await clusterListing([0, DEAD_NODE], options);
    try {
      const before = deadAccepts;
      await assert.rejects(cluster.connection(DEAD_NODE));
      assert.equal(deadAccepts, before + 1, 'the attempt reached the dead broker');
      const chosen = await cluster.anyConnection();
      assert.equal(deadAccepts, before + 1, `round ${round}: no second attempt within the backoff`);
      assert.equal(chosen, await cluster.openConnection(0), `round ${round}: broker 0 answers`);
    } finally {
      await cluster.close();
    }
  }
});

test('a bootstrap server and the broker at its address back off apart, as Kafka nodes -1 and 7', async () => {
  // Kafka 3.9 keys ClusterConnectionStates by node id: the bootstrap servers are nodes -1, -2, ... of
  // MetadataSnapshot.bootstrap and the brokers the ids Metadata gives, with no look at the address, so a broker
  // listed at a bootstrap server's host:port is a second node with a backoff of its own.
  listed = [0, DEAD_NODE];
  const cluster = new Cluster({
    bootstrapServers: `127.0.0.1:${deadPort},127.0.0.1:${broker.port}`,
    reconnectBackoffMs: 60_000,
    reconnectBackoffMaxMs: 60_000,
  });
  try {
    const before = deadAccepts;
    await cluster.refreshMetadata();
    assert.equal(deadAccepts, before + 1, 'bootstrap node -1 was tried first, and failed');
    await assert.rejects(cluster.connection(DEAD_NODE));
    assert.equal(
      deadAccepts,
      before + 2,
      "broker 7 was tried although -1's backoff at its address still runs",
    );
    assert.equal(
      await cluster.anyConnection(),
      await cluster.openConnection(0),
      'broker 7 is now in backoff',
    );
    assert.equal(deadAccepts, before + 2);
  } finally {
    await cluster.close();
  }
});
