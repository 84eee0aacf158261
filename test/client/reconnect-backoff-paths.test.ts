// A broker that keeps refusing connections is not hammered by any client path: the producer's sender, the
// consumer's fetcher and the group coordinator lookups each reconnect to it at most as often as Kafka's reconnect
// backoff allows (ClusterConnectionStates: reconnect.backoff.ms 50 doubling per failed attempt to
// reconnect.backoff.max.ms 1000, 20 % jitter; NetworkClient.ready refuses a node still in backoff, and the caller
// waits or picks another). Over 2 s that is attempts at about 0, 50, 150, 350, 750 and 1550 ms: 6, 7 with jitter.
//
// One in-process broker answers; its Metadata answer adds a broker (DEAD_NODE) at a listener that counts the
// connections made to it and closes each at once, leads the `dead-` topics there, and FindCoordinator places the
// `dead-` groups there.

import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import type { FindCoordinatorResponse } from '../../src/protocol/messages/10-find-coordinator.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { FrameSplitter } from '../helpers/frame-splitter.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { sleep } from '../helpers/wait.js';

const DEAD_NODE = 7;
const WATCH_MS = 2_000;

let broker: InProcessBroker;
let dead: net.Server;
let deadPort = 0;
let deadAccepts = 0;

function deadLed(response: MetadataResponse): MetadataResponse {
  const brokers = [...response.brokers, { nodeId: DEAD_NODE, host: '127.0.0.1', port: deadPort, rack: null }];
  const topics = response.topics.map((t) =>
    t.name?.startsWith('dead-')
      ? {
          ...t,
          partitions: t.partitions.map((p) => ({
            ...p,
            leaderId: DEAD_NODE,
            replicaNodes: [DEAD_NODE],
            isrNodes: [DEAD_NODE],
          })),
        }
      : t,
  );
  return { ...response, brokers, topics };
}

function deadCoordinator(response: FindCoordinatorResponse): FindCoordinatorResponse {
  const at = { nodeId: DEAD_NODE, host: '127.0.0.1', port: deadPort, errorCode: 0, errorMessage: null };
  return {
    ...response,
    coordinators: response.coordinators.map((c) => (c.key.startsWith('dead-') ? { ...c, ...at } : c)),
  };
}

/**
 * How the dead broker treats a connection: `refuse` closes it at once (the connection never opens); `drop` lets the
 * real broker answer ApiVersions through it, then closes it at the first other request (it opened, then dropped).
 */
let mode: 'refuse' | 'drop' = 'refuse';

function dropAfterHandshake(socket: net.Socket): void {
  const upstream = net.connect(broker.port, '127.0.0.1');
  const requests = new FrameSplitter({ sizePrefix: 'keep' });
  const closeBoth = () => {
    socket.destroy();
    upstream.destroy();
  };
  socket.on('error', closeBoth);
  upstream.on('error', closeBoth);
  socket.on('close', closeBoth);
  upstream.on('close', closeBoth);
  upstream.on('data', (chunk) => socket.write(chunk));
  socket.on('data', (chunk) => {
    requests.push(chunk);
    for (let frame = requests.next(); frame !== null; frame = requests.next()) {
      if (frame.readInt16BE(4) !== ApiKey.API_VERSIONS) return closeBoth();
      upstream.write(frame);
    }
  });
}

before(async () => {
  dead = net.createServer((socket) => {
    deadAccepts++;
    if (mode === 'drop') dropAfterHandshake(socket);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
  deadPort = (dead.address() as net.AddressInfo).port;
  broker = await startInProcessBroker(
    { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 },
    {
      interceptor: (request) => {
        if (request.apiKey === ApiKey.METADATA)
          return request.handle().then((r) => deadLed(r as MetadataResponse));
        if (request.apiKey === ApiKey.FIND_COORDINATOR)
          return request.handle().then((r) => deadCoordinator(r as FindCoordinatorResponse));
        return undefined;
      },
    },
  );
});

after(async () => {
  await broker?.stop();
  await new Promise((r) => dead?.close(r));
});

/** The options of every client: quick retries, which the reconnect backoff must bound all the same. */
function clientOptions() {
  return { bootstrapServers: `127.0.0.1:${broker.port}`, retryBackoffMs: 10, retryBackoffMaxMs: 10 };
}

/**
 * The connections made to the dead broker in the WATCH_MS after `run` starts (counted then: a call of `run` may
 * block longer), then waits for `run` to end.
 */
async function attemptsDuring(run: (until: number) => Promise<void>): Promise<number> {
  const start = deadAccepts;
  const running = run(Date.now() + WATCH_MS);
  await sleep(WATCH_MS);
  const attempts = deadAccepts - start;
  await running;
  return attempts;
}

/**
 * Kafka's most in WATCH_MS: refused attempts back off 50, 100, 200, 400, 800, 1000 ms less 20 % (7 attempts); a
 * connection that opened resets the backoff, so one dropped after opening is retried after 50 ms less 20 % (51).
 * A little room is left for late timers.
 */
const ATTEMPTS_MAX = { refuse: 9, drop: 55 } as const;

for (const how of ['refuse', 'drop'] as const) {
  describe(`reconnects to a broker that keeps closing connections (${how})`, () => {
    before(() => {
      mode = how;
    });

    it('the producer sender backs off', async () => {
      const producer = new Producer({
        ...clientOptions(),
        deliveryTimeoutMs: 60_000,
      });
      try {
        const attempts = await attemptsDuring(async () => {
          producer.send({ topic: 'dead-produce', value: Buffer.from('x') }).catch(() => {});
          await sleep(WATCH_MS);
        });
        assert.ok(attempts >= 1, 'the producer tried the leader');
        assert.ok(
          attempts <= ATTEMPTS_MAX[how],
          `the producer connected ${attempts} times in ${WATCH_MS} ms`,
        );
      } finally {
        await producer.close(0);
      }
    });

    it('the consumer fetcher backs off', async () => {
      const consumer = new Consumer({
        ...clientOptions(),
        autoOffsetReset: 'earliest',
      });
      try {
        const attempts = await attemptsDuring(async (until) => {
          consumer.assign([{ topic: 'dead-fetch', partition: 0 }]);
          while (Date.now() < until) await consumer.poll(100).catch(() => {});
        });
        assert.ok(attempts >= 1, 'the consumer tried the leader');
        assert.ok(
          attempts <= ATTEMPTS_MAX[how],
          `the consumer connected ${attempts} times in ${WATCH_MS} ms`,
        );
      } finally {
        await consumer.close({ timeoutMs: 0 });
      }
    });

    it('the group member looking up its coordinator backs off', async () => {
      const consumer = new Consumer({ ...clientOptions(), groupId: 'dead-group' });
      try {
        const attempts = await attemptsDuring(async (until) => {
          consumer.subscribe(['live-topic']);
          while (Date.now() < until) await consumer.poll(100).catch(() => {});
        });
        assert.ok(attempts >= 1, 'the member tried the coordinator');
        assert.ok(attempts <= ATTEMPTS_MAX[how], `the member connected ${attempts} times in ${WATCH_MS} ms`);
      } finally {
        await consumer.close({ timeoutMs: 0, leaveGroup: false });
      }
    });

    it('the admin calls at a group coordinator back off', async () => {
      const admin = new Admin({ ...clientOptions() });
      try {
        const attempts = await attemptsDuring(async () => {
          await admin.describeGroups(['dead-admin-group'], { timeoutMs: WATCH_MS }).catch(() => {});
        });
        assert.ok(attempts >= 1, 'the admin tried the coordinator');
        assert.ok(attempts <= ATTEMPTS_MAX[how], `the admin connected ${attempts} times in ${WATCH_MS} ms`);
      } finally {
        await admin.close({ timeoutMs: 0 });
      }
    });
  });
}

describe('reconnects to a bootstrap server that refuses every connection', () => {
  before(() => {
    mode = 'refuse';
  });

  it('the metadata lookups of a producer back off', async () => {
    // Kafka's bootstrap servers are nodes of the connection states too: their reconnects back off as a broker's.
    const producer = new Producer({
      ...clientOptions(),
      bootstrapServers: `127.0.0.1:${deadPort}`,
      deliveryTimeoutMs: 60_000,
    });
    try {
      const attempts = await attemptsDuring(async () => {
        producer.send({ topic: 'live-topic', value: Buffer.from('x') }).catch(() => {});
        await sleep(WATCH_MS);
      });
      assert.ok(attempts >= 1, 'the producer tried the bootstrap server');
      assert.ok(
        attempts <= ATTEMPTS_MAX.refuse,
        `the producer connected ${attempts} times in ${WATCH_MS} ms`,
      );
    } finally {
      await producer.close(0);
    }
  });
});
