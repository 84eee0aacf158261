// The metrics HTTP server on its own, over real sockets: /readyz answers 503 with what is missing under the
// readiness rule (and 200 when nothing is), and the connection bound closes connections beyond it on accept.

import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { MetadataCache } from '../../src/broker/metadata/metadata-cache.js';
import type { ReplicaManager } from '../../src/broker/replica/replica-manager.js';
import { silentLogger } from '../../src/common/logger.js';
import { parseMetricsListener } from '../../src/metrics/metrics-listener.js';
import { MetricsServer } from '../../src/metrics/metrics-server.js';
import { checkReadiness, type ReadinessProbe } from '../../src/metrics/readiness.js';
import { httpRequest } from './scrape.js';

const starting: ReadinessProbe = {
  logsLoaded: false,
  registered: false,
  serving: false,
  inCluster: true,
  brokerId: 2,
  replicas: null,
  metadata: null,
};

/** A broker 2 that follows t-0 (leader 1) and t-1 (leader 1) and leads t-2; the controller is broker 1. */
function catchingUp(isrOfT0: number[]): ReadinessProbe {
  const partitions = [
    { topic: 't', partition: 0, key: 't-0', isLeader: false, leaderId: 1 },
    { topic: 't', partition: 1, key: 't-1', isLeader: false, leaderId: 1 },
    { topic: 't', partition: 2, key: 't-2', isLeader: true, leaderId: 2 },
  ];
  const isr: Record<number, number[]> = { 0: isrOfT0, 1: [1, 2], 2: [2] };
  return {
    ...starting,
    logsLoaded: true,
    registered: true,
    serving: true,
    replicas: { all: () => partitions.values() } as unknown as ReplicaManager,
    metadata: {
      controllerId: 1,
      partition: (_topic: string, p: number) => ({ leader: p === 2 ? 2 : 1, isr: isr[p] }),
    } as unknown as MetadataCache,
  };
}

describe('metrics server', () => {
  let probe: ReadinessProbe = starting;
  let server: MetricsServer;
  let port: number;

  before(async () => {
    const listener = parseMetricsListener('http://127.0.0.1:0');
    assert.ok(listener.ok);
    server = new MetricsServer(
      listener.value,
      {
        scrape: async () => ({ body: 'x 1\n', contentType: 'text/plain' }),
        readiness: () => checkReadiness(probe),
      },
      silentLogger,
    );
    port = (await server.start()).port;
  });
  after(() => server.stop());

  it('answers /readyz 503 with everything missing while the broker starts', async () => {
    probe = starting;
    const answer = await httpRequest(port, '/readyz');
    assert.equal(answer.status, 503);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(answer.body), {
      status: 'not ready',
      missing: [
        'logs are not loaded yet',
        'the broker is not registered yet',
        'request handlers are not serving yet',
        'no controller known yet',
      ],
      partitionsNotInIsr: [],
    });
  });

  it('answers /readyz 503 naming the followed partitions whose ISR lacks this broker, then 200', async () => {
    probe = catchingUp([1]);
    const behind = await httpRequest(port, '/readyz');
    assert.equal(behind.status, 503);
    const body = JSON.parse(behind.body);
    assert.deepEqual(body.missing, ['not in the ISR of 1 followed partition(s) yet']);
    assert.deepEqual(body.partitionsNotInIsr, ['t-0']);
    probe = catchingUp([1, 2]);
    const ready = await httpRequest(port, '/readyz');
    assert.equal(ready.status, 200, ready.body);
  });

  it('a single node does not wait for ISRs', async () => {
    probe = { ...catchingUp([1]), inCluster: false };
    assert.equal((await httpRequest(port, '/readyz')).status, 200);
  });

  it('closes connections beyond its bound on accept and keeps serving the others', async () => {
    const sockets: net.Socket[] = [];
    try {
      for (let i = 0; i < 32; i++) {
        const socket = net.connect(port, '127.0.0.1');
        await new Promise<void>((resolve, reject) => {
          socket.once('connect', resolve);
          socket.once('error', reject);
        });
        sockets.push(socket);
      }
      const extra = net.connect(port, '127.0.0.1');
      extra.on('error', () => {});
      const closed = await new Promise<boolean>((resolve) => {
        extra.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 3000);
      });
      assert.ok(closed, 'the 33rd connection was not closed');
      // One of the held connections still gets an answer.
      sockets[0]!.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      const first = await new Promise<string>((resolve) =>
        sockets[0]!.once('data', (d: Buffer) => resolve(d.toString())),
      );
      assert.match(first, /^HTTP\/1\.1 200/);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });
});

describe('brook.metrics.listener parsing', () => {
  it('takes http://host:port and nothing else', () => {
    assert.deepEqual(parseMetricsListener('http://127.0.0.1:9404'), {
      ok: true,
      value: { host: '127.0.0.1', port: 9404 },
    });
    assert.deepEqual(parseMetricsListener('http://[::1]:9404/'), {
      ok: true,
      value: { host: '::1', port: 9404 },
    });
    for (const bad of [
      '127.0.0.1:9404',
      'https://h:1',
      'http://h',
      'http://h:70000',
      'http://:9404',
      'http://h:1/metrics',
    ]) {
      assert.equal(parseMetricsListener(bad).ok, false, bad);
    }
  });
});
