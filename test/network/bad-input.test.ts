import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request, Response } from '../../src/network/request.js';
import { DecodeError } from '../../src/protocol/primitives/decode-error.js';
import { type RawClient, responseCorrelationId } from '../helpers/raw-client.js';
import { echoHandler, echoResponse, seededRandom, sleep, waitFor, withServer } from './helpers.js';

function prefix(size: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(size, 0);
  return bytes;
}

async function assertEchoes(client: RawClient, correlationId: number): Promise<void> {
  client.sendRequest({ apiKey: 18, apiVersion: 0, correlationId });
  assert.equal(responseCorrelationId(await client.nextFrame()), correlationId);
}

describe('bad input closes only the connection that sent it', () => {
  it('closes on a size prefix above socket.request.max.bytes without waiting for the body', async () => {
    await withServer(
      { handler: echoHandler, options: { 'socket.request.max.bytes': 1024 } },
      async ({ connect, logger, server }) => {
        const bystander = await connect();
        await assertEchoes(bystander, 1);
        const offender = await connect();
        await offender.sendRaw(prefix(1025));
        assert.equal(await offender.waitClosed(), true);
        assert.equal(logger.matching('bad frame size').length, 1);
        assert.match(String(logger.matching('bad frame size')[0]!.fields.reason), /1025/);
        assert.equal(server.stats.connectionsClosedMalformed, 1);
        await assertEchoes(bystander, 2);
        await assertEchoes(await connect(), 3);
      },
    );
  });

  it('closes on a negative size prefix', async () => {
    await withServer({ handler: echoHandler }, async ({ connect, logger }) => {
      const bystander = await connect();
      const offender = await connect();
      await offender.sendRaw(prefix(-1));
      assert.equal(await offender.waitClosed(), true);
      assert.match(String(logger.matching('bad frame size')[0]!.fields.reason), /negative/);
      await assertEchoes(bystander, 1);
    });
  });

  it('closes on a frame too short to hold a request header prefix', async () => {
    await withServer({ handler: echoHandler }, async ({ connect, logger }) => {
      const offender = await connect();
      await offender.sendRaw(Buffer.concat([prefix(3), Buffer.from([0, 18, 0])]));
      assert.equal(await offender.waitClosed(), true);
      assert.equal(logger.matching('shorter than a request header').length, 1);
    });
  });

  it('closes an HTTP request sent to the Kafka port', async () => {
    await withServer({ handler: echoHandler }, async ({ connect }) => {
      const offender = await connect();
      await offender.sendRaw(Buffer.from('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'));
      assert.equal(await offender.waitClosed(), true);
    });
  });

  it('closes when the handler reports a DecodeError, synchronously or not, and logs the request', async () => {
    const handler = (request: Request): Response | Promise<Response> => {
      if (request.correlationId === 66) throw new DecodeError('truncated', 'need 4 bytes, have 0', 10);
      if (request.correlationId === 67) return Promise.reject(new DecodeError('bad-value', 'bad thing'));
      return echoResponse(request);
    };
    await withServer({ handler }, async ({ connect, logger, server }) => {
      const bystander = await connect();
      for (const correlationId of [66, 67]) {
        const offender = await connect();
        await assertEchoes(offender, 1);
        offender.sendRequest({ apiKey: 0, apiVersion: 3, correlationId });
        assert.equal(await offender.waitClosed(), true);
      }
      const lines = logger.matching('malformed request');
      assert.deepEqual(
        lines.map((line) => line.fields.correlationId),
        [66, 67],
      );
      assert.equal(server.stats.connectionsClosedMalformed, 2);
      await assertEchoes(bystander, 2);
    });
  });

  it('closes with an error line when a handler fails with a bug or returns something that is not a response', async () => {
    const handler = (request: Request): Response | Promise<Response> => {
      if (request.correlationId === 1) throw new TypeError('handler bug');
      if (request.correlationId === 2) return ['not a buffer'] as unknown as Response;
      return echoResponse(request);
    };
    await withServer({ handler }, async ({ connect, logger }) => {
      for (const correlationId of [1, 2]) {
        const client = await connect();
        client.sendRequest({ apiKey: 3, apiVersion: 0, correlationId });
        assert.equal(await client.waitClosed(), true);
      }
      const lines = logger.matching('request handler failed');
      assert.equal(lines.length, 2);
      assert.ok(lines.every((line) => line.level === 'error'));
      await assertEchoes(await connect(), 3);
    });
  });

  it('forgets requests of clients that reset the connection before their answers are ready', async () => {
    const handler = async (request: Request): Promise<Response> => {
      await sleep(30);
      return echoResponse(request);
    };
    await withServer({ handler }, async ({ connect, server, logger }) => {
      for (let i = 0; i < 20; i++) {
        const client = await connect();
        client.sendRequest({ apiKey: 1, apiVersion: 12, correlationId: i });
        await waitFor(() => server.stats.requestsReceived === i + 1);
        client.socket.resetAndDestroy();
      }
      await waitFor(() => server.stats.connectionsOpen === 0 && server.stats.requestsInFlight === 0);
      await sleep(60);
      assert.equal(server.stats.requestBytesInFlight, 0);
      assert.deepEqual(
        logger.lines.filter((line) => line.level === 'error'),
        [],
      );
      await assertEchoes(await connect(), 99);
    });
  });

  it('survives random garbage from many connections and keeps serving', async () => {
    const random = seededRandom(20261129);
    await withServer(
      { handler: echoHandler, options: { 'socket.request.max.bytes': 4096 } },
      async ({ connect, server }) => {
        const bystander = await connect();
        for (let round = 0; round < 100; round++) {
          const garbage = Buffer.alloc(1 + Math.floor(random() * 2000));
          for (let i = 0; i < garbage.length; i++) garbage[i] = Math.floor(random() * 256);
          // Every few rounds, a small positive size prefix so that the garbage is framed and reaches a handler.
          if (round % 3 === 0) garbage.writeInt32BE(Math.floor(random() * garbage.length), 0);
          const client = await connect();
          await client.sendRaw(garbage);
          client.destroy();
        }
        await waitFor(() => server.stats.connectionsOpen === 1, 5_000, 'garbage connections to close');
        assert.equal(server.stats.requestsInFlight, 0);
        await assertEchoes(bystander, 1);
      },
    );
  });
});
