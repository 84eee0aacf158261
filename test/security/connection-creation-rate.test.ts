// KIP-612 broker-wide and per-listener connection creation rates: max.connection.creation.rate on every
// listener but the inter-broker one, listener.name.<l>.max.connection.creation.rate on its listener. The
// measurement with a made-up clock, then a broker process whose CLIENT listener is held to 5 new connections a
// second: 20 connections there are all served, but over seconds (the acceptor waits, nothing is refused), while
// 20 on the inter-broker listener are served at once. quota.window.num=2 (windows of 1 s) so the rate bites.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ConnectionCreationRates } from '../../src/broker/quota/connection-creation-rate.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';

const WINDOW = { samples: 2, windowMs: 1_000 };

describe('connection creation rates', () => {
  it('throttles past the broker-wide rate, except on the inter-broker listener', () => {
    const rates = new ConnectionCreationRates(WINDOW, 'REPLICATION');
    rates.configure([['max.connection.creation.rate', '5']]);
    const t = 1_000_000;
    for (let i = 0; i < 5; i++) assert.equal(rates.throttleMs('CLIENT', t), 0);
    const sixth = rates.throttleMs('CLIENT', t);
    // (6 - 5) / 5 x 1 s.
    assert.equal(sixth, 200);
    for (let i = 0; i < 50; i++) assert.equal(rates.throttleMs('REPLICATION', t), 0);
    // Never more than one window.
    for (let i = 0; i < 50; i++) rates.throttleMs('OTHER', t);
    assert.equal(rates.throttleMs('OTHER', t), 1_000);
  });

  it('applies a listener rate to its listener, the inter-broker one too, and forgets removed rates', () => {
    const rates = new ConnectionCreationRates(WINDOW, 'REPLICATION');
    rates.configure([['listener.name.replication.max.connection.creation.rate', '2']]);
    const t = 2_000_000;
    assert.equal(rates.throttleMs('REPLICATION', t), 0);
    assert.equal(rates.throttleMs('REPLICATION', t), 0);
    assert.ok(rates.throttleMs('REPLICATION', t) > 0);
    assert.equal(rates.throttleMs('CLIENT', t), 0, 'other listeners are not limited');
    rates.configure([['listener.name.replication.max.connection.creation.rate', '2147483647']]);
    assert.equal(rates.throttleMs('REPLICATION', t), 0, "Kafka's default means no quota");
  });
});

/** Opens `count` connections at once and answers how long until each had its ApiVersions answered. */
function openAll(port: number, count: number): Promise<number> {
  const started = Date.now();
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('not served within 30 s'));
      }, 30_000);
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('closed instead of served')));
      socket.once('connect', () => {
        const body = Buffer.from([0, 18, 0, 0, 0, 0, 0, 1, 0, 3, 0x63, 0x63, 0x72]);
        const frame = Buffer.alloc(4 + body.length);
        frame.writeInt32BE(body.length, 0);
        body.copy(frame, 4);
        socket.write(frame);
      });
      socket.once('data', () => {
        clearTimeout(timer);
        socket.removeAllListeners('close');
        socket.destroy();
        resolve();
      });
    });
  return Promise.all(Array.from({ length: count }, one)).then(() => Date.now() - started);
}

describe('max.connection.creation.rate on a broker', () => {
  let broker: BrokerProcess;
  let clientPort: number;

  before(async () => {
    const plainPort = await freePort();
    clientPort = await freePort();
    broker = await startBroker({
      port: plainPort,
      overrides: {
        listeners: `PLAINTEXT://127.0.0.1:${plainPort},CLIENT://127.0.0.1:${clientPort}`,
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT',
        'inter.broker.listener.name': 'PLAINTEXT',
        'max.connection.creation.rate': 5,
        'quota.window.num': 2,
      },
    });
  });
  after(async () => {
    await broker?.stop();
  });

  it('serves connections over the rate late rather than refusing them, and not on the inter-broker listener', async () => {
    const protectedMs = await openAll(broker.port, 20);
    const limitedMs = await openAll(clientPort, 20);
    // 15 connections over the rate wait about 200 ms each, one after another: about 3 s.
    assert.ok(limitedMs >= 1_500, `20 connections at 5/s took ${limitedMs} ms`);
    assert.ok(limitedMs > protectedMs + 1_000, `limited ${limitedMs} ms, inter-broker ${protectedMs} ms`);

    // Dynamic, as in Kafka: the cluster-wide default set to Kafka's default lifts the quota.
    const admin = await WireClient.connect('127.0.0.1', broker.port);
    try {
      const altered = await admin.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        resources: [
          {
            resourceType: 4,
            resourceName: '',
            configs: [{ name: 'max.connection.creation.rate', configOperation: 0, value: '2147483647' }],
          },
        ],
        validateOnly: false,
      });
      assert.equal(altered.responses[0].errorCode, ErrorCode.NONE, altered.responses[0].errorMessage);
    } finally {
      admin.close();
    }
    let liftedMs = Number.POSITIVE_INFINITY;
    for (let attempt = 0; attempt < 10 && liftedMs > limitedMs - 1_000; attempt++) {
      await sleep(500);
      liftedMs = await openAll(clientPort, 20);
    }
    assert.ok(liftedMs < limitedMs - 1_000, `after the change ${liftedMs} ms, before ${limitedMs} ms`);
  });
});

describe('max.connection.creation.rate when a listener is added at runtime', () => {
  let broker: BrokerProcess;
  let clientPort: number;

  before(async () => {
    const plainPort = await freePort();
    clientPort = await freePort();
    broker = await startBroker({
      port: plainPort,
      overrides: { 'max.connection.creation.rate': 5, 'quota.window.num': 2 },
    });
  });
  after(async () => {
    await broker?.stop();
  });

  it('the only listener is held to the rate; once a second one is added, the inter-broker listener is exempt', async () => {
    // One listener, the inter-broker one: as in Kafka, nothing is protected, so it is held to the rate.
    const aloneMs = await openAll(broker.port, 20);
    assert.ok(aloneMs >= 1_500, `20 connections at 5/s on the only listener took ${aloneMs} ms`);

    const admin = await WireClient.connect('127.0.0.1', broker.port);
    try {
      const altered = await admin.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        resources: [
          {
            resourceType: 4,
            resourceName: '0',
            configs: [
              {
                name: 'listeners',
                configOperation: 0,
                value: `PLAINTEXT://127.0.0.1:${broker.port},CLIENT://127.0.0.1:${clientPort}`,
              },
              {
                name: 'listener.security.protocol.map',
                configOperation: 0,
                value: 'PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT',
              },
            ],
          },
        ],
        validateOnly: false,
      });
      assert.equal(altered.responses[0].errorCode, ErrorCode.NONE, altered.responses[0].errorMessage);
    } finally {
      admin.close();
    }
    for (let attempt = 0; attempt < 100 && !/listener CLIENT added/.test(broker.log()); attempt++)
      await sleep(100);
    assert.match(broker.log(), /listener CLIENT added/);
    // Let the first burst leave the rate's windows (2 x 1 s) before measuring again.
    await sleep(2_500);
    const protectedMs = await openAll(broker.port, 20);
    // Held to the rate, 20 connections take at least 3 s (15 over it, about 200 ms each), as the first burst did.
    assert.ok(protectedMs < 1_500, `20 connections on the inter-broker listener took ${protectedMs} ms`);
    const limitedMs = await openAll(clientPort, 20);
    assert.ok(limitedMs >= 1_500, `20 connections at 5/s on the added listener took ${limitedMs} ms`);
  });
});
