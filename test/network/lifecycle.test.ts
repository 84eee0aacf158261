import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, it } from 'node:test';
import tls from 'node:tls';
import { CapturingLogger } from '../../src/common/logger.js';
import { ListenerConfigError } from '../../src/network/listener.js';
import type { Request, Response } from '../../src/network/request.js';
import { RAW_SASL_TOKEN_API_KEY } from '../../src/network/security.js';
import { SocketServer } from '../../src/network/socket-server.js';
import { RawClient, responseCorrelationId } from '../helpers/raw-client.js';
import { closedWithin, deferred, echoHandler, echoResponse, sleep, waitFor, withServer } from './helpers.js';

const fixtures = new URL('../../../test/network/fixtures/', import.meta.url);

function tlsFixture(): { key: Buffer; cert: Buffer } {
  return {
    key: readFileSync(new URL('localhost-key.pem', fixtures)),
    cert: readFileSync(new URL('localhost-cert.pem', fixtures)),
  };
}

/**
 * What the SASL authenticator does on a SaslHandshake v1 (src/security/sasl/authenticator.ts): the mechanism is
 * chosen and SaslAuthenticate is admitted from then on, as in Kafka, where it is refused before a handshake.
 */
function chooseMechanism(request: Request): void {
  request.connection.security.saslMechanism = 'PLAIN';
  request.connection.security.saslState = 'authenticating';
}

function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('shutdown', () => {
  it('stops accepting, answers the requests in flight, then closes', async () => {
    const handler = async (request: Request): Promise<Response> => {
      await sleep(150);
      return echoResponse(request);
    };
    const server = new SocketServer({
      listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' }],
      handler,
    });
    await server.start();
    const port = server.address('PLAINTEXT').port;
    const client = await RawClient.connect('127.0.0.1', port);
    try {
      for (const id of [1, 2, 3]) client.sendRequest({ apiKey: 0, apiVersion: 7, correlationId: id });
      await waitFor(() => server.stats.requestsInFlight === 3);
      const stopped = server.shutdown(5_000);
      assert.equal(await connectionRefused(port), true, 'no new connections during shutdown');
      for (const id of [1, 2, 3]) assert.equal(responseCorrelationId(await client.nextFrame()), id);
      assert.deepEqual(await stopped, { connectionsForced: 0 });
      assert.equal(await client.waitClosed(), true);
      assert.equal(server.stats.connectionsOpen, 0);
    } finally {
      client.destroy();
      await server.shutdown(0);
    }
  });

  it('closes connections whose requests are still running at the deadline', async () => {
    const never = deferred<Response>();
    const server = new SocketServer({
      listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' }],
      handler: () => never.promise,
    });
    await server.start();
    const client = await RawClient.connect('127.0.0.1', server.address('PLAINTEXT').port);
    try {
      client.sendRequest({ apiKey: 1, apiVersion: 0, correlationId: 1 });
      await waitFor(() => server.stats.requestsInFlight === 1);
      const started = Date.now();
      assert.deepEqual(await server.shutdown(200), { connectionsForced: 1 });
      assert.ok(Date.now() - started >= 150);
      assert.equal(await client.waitClosed(), true);
      assert.equal(server.stats.requestsInFlight, 0);
    } finally {
      client.destroy();
      never.resolve(null);
    }
  });

  it('fails to start when a port is taken, leaving no listener bound', async () => {
    await withServer({ handler: echoHandler }, async ({ port }) => {
      const clash = new SocketServer({
        listeners: [
          { name: 'FREE', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' },
          { name: 'TAKEN', host: '127.0.0.1', port, securityProtocol: 'PLAINTEXT' },
        ],
        handler: echoHandler,
        logger: new CapturingLogger(),
      });
      await assert.rejects(clash.start(), /EADDRINUSE/);
    });
  });
});

describe('listener security', () => {
  it('closes a SASL connection that sends other requests before authenticating', async () => {
    await withServer(
      { handler: echoHandler, listener: { name: 'SASL', securityProtocol: 'SASL_PLAINTEXT' } },
      async ({ connect, logger }) => {
        const client = await connect();
        client.sendRequest({ apiKey: 18, apiVersion: 3, correlationId: 1, headerVersion: 2 });
        assert.equal(responseCorrelationId(await client.nextFrame()), 1);
        client.sendRequest({ apiKey: 3, apiVersion: 12, correlationId: 2, headerVersion: 2 });
        assert.equal(await client.waitClosed(), true);
        assert.equal(logger.matching('before authentication').length, 1);
      },
    );
  });

  it('keeps the authentication deadline of a SASL connection whose request was throttled', async () => {
    // A quota may throttle ApiVersions before authentication (request_percentage of a <default> user): the mute
    // must not cancel the deadline, or a peer that never authenticates keeps its connection for good.
    const handler = (request: Request): Response => {
      request.connection.throttle(60_000);
      return echoResponse(request);
    };
    await withServer(
      {
        handler,
        options: { 'sasl.authentication.timeout.ms': 300 },
        listener: { name: 'SASL', securityProtocol: 'SASL_PLAINTEXT' },
      },
      async ({ connect, logger }) => {
        const client = await connect();
        client.sendRequest({ apiKey: 18, apiVersion: 3, correlationId: 1, headerVersion: 2 });
        assert.equal(responseCorrelationId(await client.nextFrame()), 1);
        assert.equal(await client.waitClosed(5_000), true, 'closed at the authentication deadline');
        assert.equal(logger.matching('SASL authentication not completed in time').length, 1);
      },
    );
  });

  it('admits every request once the SASL exchange marks the connection authenticated', async () => {
    const handler = (request: Request): Response => {
      if (request.apiKey === 17) chooseMechanism(request);
      if (request.apiKey === 36) request.connection.security.authenticate('User:alice');
      return echoResponse(request);
    };
    await withServer(
      { handler, listener: { name: 'SASL', securityProtocol: 'SASL_PLAINTEXT' } },
      async ({ connect, server }) => {
        const client = await connect();
        client.sendRequest({ apiKey: 17, apiVersion: 1, correlationId: 0 });
        client.sendRequest({ apiKey: 36, apiVersion: 2, correlationId: 1, headerVersion: 2 });
        client.sendRequest({ apiKey: 3, apiVersion: 12, correlationId: 2, headerVersion: 2 });
        assert.equal(responseCorrelationId(await client.nextFrame()), 0);
        assert.equal(responseCorrelationId(await client.nextFrame()), 1);
        assert.equal(responseCorrelationId(await client.nextFrame()), 2);
        const [connection] = [...server.openConnections()];
        assert.equal(connection!.security.principal, 'User:alice');
        assert.equal(connection!.listenerName, 'SASL');
      },
    );
  });

  it('hands bare SASL tokens to the handler after a SaslHandshake v0, then Kafka requests again', async () => {
    const tokens: string[] = [];
    const handler = (request: Request): Response => {
      const security = request.connection.security;
      if (request.apiKey === 17 && request.apiVersion === 0) security.expectRawSaslTokens('PLAIN');
      if (request.apiKey === RAW_SASL_TOKEN_API_KEY) {
        tokens.push(request.frame.toString());
        security.authenticate('User:bob');
        return [Buffer.alloc(0)];
      }
      return echoResponse(request);
    };
    await withServer(
      { handler, listener: { name: 'SASL', securityProtocol: 'SASL_PLAINTEXT' } },
      async ({ connect }) => {
        const client = await connect();
        client.sendRequest({ apiKey: 17, apiVersion: 0, correlationId: 1 }, Buffer.from('\x00\x05PLAIN'));
        assert.equal(responseCorrelationId(await client.nextFrame()), 1);
        client.sendFrame(Buffer.from('\x00bob\x00secret'));
        assert.equal((await client.nextFrame()).length, 0, 'the answer to a bare token is a bare token');
        client.sendRequest({ apiKey: 3, apiVersion: 1, correlationId: 2 });
        assert.equal(responseCorrelationId(await client.nextFrame()), 2);
        assert.deepEqual(tokens, ['\x00bob\x00secret']);
      },
    );
  });

  it('delivers the answer to a failed authentication before closing the connection', async () => {
    const handler = (request: Request): Response => {
      if (request.apiKey === 17) chooseMechanism(request);
      if (request.apiKey === 36) {
        request.connection.security.fail();
        request.connection.closeAfterResponses('authentication failed');
      }
      return echoResponse(request);
    };
    await withServer(
      { handler, listener: { name: 'SASL', securityProtocol: 'SASL_PLAINTEXT' } },
      async ({ connect }) => {
        const client = await connect();
        client.sendRequest({ apiKey: 17, apiVersion: 1, correlationId: 3 });
        assert.equal(responseCorrelationId(await client.nextFrame()), 3);
        client.sendRequest({ apiKey: 36, apiVersion: 1, correlationId: 4 }, Buffer.from('wrong'));
        assert.equal(responseCorrelationId(await client.nextFrame()), 4);
        assert.equal(await client.waitClosed(), true);
      },
    );
  });

  it('serves Kafka framing over a TLS listener', async () => {
    const tls = tlsFixture();
    await withServer(
      { handler: echoHandler, listener: { name: 'SSL', securityProtocol: 'SSL', tls } },
      async ({ connect }) => {
        const client = await connect({ tls: { ca: tls.cert, servername: 'localhost' } });
        client.sendRequest({ apiKey: 18, apiVersion: 0, correlationId: 77 }, Buffer.from('over tls'));
        const frame = await client.nextFrame();
        assert.equal(responseCorrelationId(frame), 77);
        assert.equal(frame.subarray(4).toString().endsWith('over tls'), true);
      },
    );
  });

  it("refuses a TLS 1.2 renegotiation and closes the connection, as Kafka's SslTransportLayer", async () => {
    const fixture = tlsFixture();
    await withServer(
      { handler: echoHandler, listener: { name: 'SSL', securityProtocol: 'SSL', tls: fixture } },
      async ({ port, server, logger }) => {
        const socket = tls.connect({
          host: '127.0.0.1',
          port,
          ca: fixture.cert,
          servername: 'localhost',
          maxVersion: 'TLSv1.2',
        });
        try {
          socket.on('error', () => {});
          await once(socket, 'secureConnect');
          await waitFor(() => server.openConnections().size === 1);
          // Each renegotiation is a full handshake the broker pays for; Kafka refuses every one.
          const renegotiated = await new Promise<boolean>((resolve) => {
            socket.renegotiate({}, (error) => resolve(error === null || error === undefined));
            socket.once('close', () => resolve(false));
          });
          assert.equal(renegotiated, false, 'the renegotiation was refused');
          await waitFor(() => server.openConnections().size === 0, 5_000, 'the connection closed');
          assert.ok(logger.lines.some((line) => /socket error/.test(line.message)));
        } finally {
          socket.destroy();
        }
      },
    );
  });

  it('finishes a TLS request in flight at shutdown and does not wait for a client stuck before its handshake', async () => {
    const handler = async (request: Request): Promise<Response> => {
      await sleep(100);
      return echoResponse(request);
    };
    const server = new SocketServer({
      listeners: [{ name: 'SSL', host: '127.0.0.1', port: 0, securityProtocol: 'SSL', tls: tlsFixture() }],
      handler,
    });
    await server.start();
    const port = server.address('SSL').port;
    const client = await RawClient.connect('127.0.0.1', port, {
      tls: { ca: tlsFixture().cert, servername: 'localhost' },
    });
    const silent = net.connect({ host: '127.0.0.1', port });
    try {
      await once(silent, 'connect');
      client.sendRequest({ apiKey: 1, apiVersion: 0, correlationId: 8 });
      await waitFor(() => server.stats.requestsInFlight === 1 && server.stats.connectionsOpen === 2);
      const started = Date.now();
      const result = await server.shutdown(10_000);
      assert.equal(responseCorrelationId(await client.nextFrame()), 8);
      assert.deepEqual(result, { connectionsForced: 0 });
      assert.ok(Date.now() - started < 5_000, 'shutdown did not wait for the silent client');
      assert.equal(server.stats.connectionsOpen, 0);
    } finally {
      client.destroy();
      silent.destroy();
      await server.shutdown(0);
    }
  });

  it('counts TLS connections against max.connections.per.ip before their handshake', async () => {
    await withServer(
      {
        handler: echoHandler,
        options: { 'max.connections.per.ip': 1 },
        listener: { name: 'SSL', securityProtocol: 'SSL', tls: tlsFixture() },
      },
      async ({ port, server }) => {
        const first = net.connect({ host: '127.0.0.1', port });
        const second = net.connect({ host: '127.0.0.1', port });
        try {
          await once(first, 'connect');
          await waitFor(() => server.stats.connectionsOpen === 1);
          assert.equal(await closedWithin(second, 5_000), true, 'the second connection is closed');
          assert.equal(server.stats.connectionsRejected, 1);
        } finally {
          first.destroy();
          second.destroy();
        }
      },
    );
  });

  it('closes a TLS connection whose handshake does not finish within connections.max.idle.ms', async () => {
    await withServer(
      {
        handler: echoHandler,
        options: { 'connections.max.idle.ms': 200 },
        listener: { name: 'SSL', securityProtocol: 'SSL', tls: tlsFixture() },
      },
      async ({ port, server }) => {
        const silent = net.connect({ host: '127.0.0.1', port });
        try {
          await once(silent, 'connect');
          assert.equal(await closedWithin(silent, 3_000), true, 'closed at about the idle time');
          await waitFor(() => server.stats.connectionsOpen === 0);
        } finally {
          silent.destroy();
        }
      },
    );
  });

  it('closes a connection that sends garbage instead of a TLS handshake, and keeps serving TLS', async () => {
    await withServer(
      { handler: echoHandler, listener: { name: 'SSL', securityProtocol: 'SSL', tls: tlsFixture() } },
      async ({ port, server, connect, logger }) => {
        const garbage = net.connect({ host: '127.0.0.1', port });
        try {
          await once(garbage, 'connect');
          garbage.write(Buffer.from('\x00\x00\x00\x10not a client hello at all'));
          assert.equal(await closedWithin(garbage, 3_000), true);
          assert.equal(logger.matching('TLS handshake failed').length, 1);
          await waitFor(() => server.stats.connectionsOpen === 0);
          const client = await connect({ tls: { ca: tlsFixture().cert, servername: 'localhost' } });
          assert.equal(
            responseCorrelationId(await client.request({ apiKey: 18, apiVersion: 0, correlationId: 3 })),
            3,
          );
        } finally {
          garbage.destroy();
        }
      },
    );
  });

  it('refuses an empty listener list and duplicate listener names', () => {
    const plain = { host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' } as const;
    assert.throws(() => new SocketServer({ listeners: [], handler: echoHandler }), ListenerConfigError);
    assert.throws(
      () =>
        new SocketServer({
          listeners: [
            { name: 'A', ...plain },
            { name: 'A', ...plain },
          ],
          handler: echoHandler,
        }),
      ListenerConfigError,
    );
  });

  it('refuses a TLS listener without TLS options', () => {
    assert.throws(
      () =>
        new SocketServer({
          listeners: [{ name: 'SSL', host: '127.0.0.1', port: 0, securityProtocol: 'SSL' }],
          handler: echoHandler,
        }),
      /no TLS options/,
    );
  });
});
