import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { adoptForOwnReads } from '../../src/network/own-reads.js';
import { NO_RESPONSE, type Request, type Response } from '../../src/network/request.js';
import { encodeRequest, responseCorrelationId } from '../helpers/raw-client.js';
import { deferred, echoHandler, echoResponse, sizePrefixed, sleep, waitFor, withServer } from './helpers.js';

describe('ordered responses', () => {
  it('answers pipelined requests in request order when handlers finish in reverse order', async () => {
    const completed: number[] = [];
    const count = 20;
    const handler = async (request: Request): Promise<Response> => {
      await sleep((count - request.correlationId) * 3);
      completed.push(request.correlationId);
      return echoResponse(request);
    };
    await withServer({ handler }, async ({ connect }) => {
      const client = await connect();
      for (let id = 0; id < count; id++) {
        client.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: id }, Buffer.from(`body-${id}`));
      }
      const ids: number[] = [];
      for (let id = 0; id < count; id++) {
        const frame = await client.nextFrame();
        ids.push(responseCorrelationId(frame));
        assert.equal(frame.subarray(4).toString().endsWith(`body-${id}`), true);
      }
      assert.deepEqual(ids, [...Array(count).keys()]);
      assert.notDeepEqual(completed, ids, 'handlers really completed out of order');
    });
  });

  // A Metadata behind the long poll would wait undispatched (one cluster-sized request at a time, bounds.test.ts).
  it('holds a heartbeat answer behind a long poll that started first, then sends both in order', async () => {
    const longPoll = deferred<Response>();
    const handler = (request: Request): Response | Promise<Response> =>
      request.apiKey === 1 ? longPoll.promise : echoResponse(request);
    await withServer({ handler }, async ({ connect, server }) => {
      const client = await connect();
      client.sendRequest({ apiKey: 1, apiVersion: 12, correlationId: 100 });
      client.sendRequest({ apiKey: 12, apiVersion: 4, correlationId: 101 });
      await waitFor(() => server.stats.requestsReceived === 2);
      await assert.rejects(client.nextFrame(100), /no response/);
      const answer = Buffer.alloc(4);
      answer.writeInt32BE(100, 0);
      longPoll.resolve([answer]);
      assert.equal(responseCorrelationId(await client.nextFrame()), 100);
      assert.equal(responseCorrelationId(await client.nextFrame()), 101);
    });
  });

  it('sends nothing for NO_RESPONSE and keeps later responses in order behind it', async () => {
    const slow = deferred<Response>();
    const handler = (request: Request): Response | Promise<Response> => {
      if (request.correlationId === 1) return slow.promise;
      if (request.correlationId === 2) return NO_RESPONSE;
      return echoResponse(request);
    };
    await withServer({ handler }, async ({ connect, server }) => {
      const client = await connect();
      for (const id of [1, 2, 3]) client.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: id });
      await waitFor(() => server.stats.requestsReceived === 3);
      await assert.rejects(client.nextFrame(100), /no response/);
      slow.resolve(NO_RESPONSE);
      assert.equal(responseCorrelationId(await client.nextFrame()), 3);
      assert.equal(server.stats.responsesSent, 1);
    });
  });

  it('reads requests split into two writes at every byte boundary', async () => {
    const frames = [0, 1, 2].map((id) =>
      encodeRequest(
        { apiKey: 18, apiVersion: 3, correlationId: id, clientId: `c${id}` },
        Buffer.from([id, id]),
      ),
    );
    const stream = Buffer.concat(frames.map(sizePrefixed));
    await withServer({ handler: echoHandler }, async ({ connect, server }) => {
      const client = await connect();
      for (let cut = 1; cut < stream.length; cut++) {
        const before = server.stats.bytesIn;
        await client.sendRaw(stream.subarray(0, cut));
        // Wait until the server has read the first part, so the two parts reach it as separate chunks.
        await waitFor(() => server.stats.bytesIn === before + cut);
        await client.sendRaw(stream.subarray(cut));
        for (let id = 0; id < 3; id++) {
          const frame = await client.nextFrame();
          assert.equal(responseCorrelationId(frame), id, `cut at ${cut}`);
          assert.deepEqual(frame.subarray(4), frames[id]!.subarray(8));
        }
      }
    });
  });

  it('answers a thousand requests that arrive in one write, in order', async () => {
    const count = 1000;
    const stream = Buffer.concat(
      Array.from({ length: count }, (_, id) =>
        sizePrefixed(encodeRequest({ apiKey: 3, apiVersion: 0, correlationId: id })),
      ),
    );
    await withServer({ handler: echoHandler }, async ({ connect }) => {
      const client = await connect();
      await client.sendRaw(stream);
      for (let id = 0; id < count; id++) assert.equal(responseCorrelationId(await client.nextFrame()), id);
    });
  });

  it('answers a request larger than a socket read, gathered from many chunks', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = i & 0xff;
    await withServer({ handler: echoHandler }, async ({ connect }) => {
      const client = await connect();
      client.sendRequest({ apiKey: 0, apiVersion: 3, correlationId: 9, headerVersion: 0 }, body);
      const frame = await client.nextFrame();
      assert.equal(responseCorrelationId(frame), 9);
      assert.equal(Buffer.compare(frame.subarray(4), body), 0);
    });
  });

  it('writes responses made of many chunks byte for byte, small ones and large ones', async () => {
    const chunksFor = (count: number): Buffer[] =>
      Array.from({ length: count }, (_, i) => Buffer.alloc(i % 50, i));
    const handler = (request: Request): Response => {
      const header = Buffer.alloc(4);
      header.writeInt32BE(request.correlationId, 0);
      return [header, Buffer.alloc(0), ...chunksFor(request.correlationId)];
    };
    await withServer({ handler }, async ({ connect }) => {
      const client = await connect();
      for (const count of [0, 3, 10, 400]) {
        const frame = await client.request({ apiKey: 1, apiVersion: 0, correlationId: count });
        assert.equal(responseCorrelationId(frame), count);
        assert.deepEqual(frame.subarray(4), Buffer.concat(chunksFor(count)), `${count} chunks`);
      }
    });
  });

  it('answers requests sent before the client half-closes, then closes', async () => {
    const handler = async (request: Request): Promise<Response> => {
      await sleep(20);
      return echoResponse(request);
    };
    await withServer({ handler }, async ({ connect }) => {
      const client = await connect();
      client.sendRequest({ apiKey: 3, apiVersion: 0, correlationId: 1 });
      client.sendRequest({ apiKey: 3, apiVersion: 0, correlationId: 2 });
      client.end();
      assert.equal(responseCorrelationId(await client.nextFrame()), 1);
      assert.equal(responseCorrelationId(await client.nextFrame()), 2);
      assert.equal(await client.waitClosed(), true);
    });
  });

  it('reads large frames straight into their buffers, pipelined with small ones, and answers each intact', async () => {
    const bodies = [
      Buffer.alloc(300 * 1024),
      Buffer.from('small-1'),
      Buffer.alloc(128 * 1024 + 7),
      Buffer.from('small-2'),
      Buffer.alloc(20 * 1024),
    ];
    for (const [i, body] of bodies.entries())
      for (let b = 0; b < body.length; b++) body[b] = (b * 31 + i) & 0xff;
    await withServer({ handler: echoHandler }, async ({ connect, server }) => {
      const client = await connect();
      for (let round = 0; round < 3; round++) {
        for (const [i, body] of bodies.entries()) {
          client.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: round * 10 + i }, body);
        }
        for (const [i, body] of bodies.entries()) {
          const frame = await client.nextFrame();
          assert.equal(responseCorrelationId(frame), round * 10 + i);
          assert.ok(
            frame.subarray(4).subarray(-body.length).equals(body),
            `body ${i} of round ${round} intact`,
          );
        }
      }
      // Without reads into frames every byte would have come through a socket chunk and been copied.
      assert.ok(
        server.stats.bytesReadIntoFrames > server.stats.bytesIn / 2,
        `${server.stats.bytesReadIntoFrames} of ${server.stats.bytesIn} bytes read straight into frames`,
      );
    });
  });

  it('reads the Node way when asked, or when a socket has no handle to move, with the same answers', async () => {
    assert.equal(adoptForOwnReads(new Socket(), Buffer.alloc(16), { allowHalfOpen: true }), null);
    const body = Buffer.alloc(200 * 1024, 0x5a);
    await withServer({ handler: echoHandler, readsIntoFrames: false }, async ({ connect, server }) => {
      const client = await connect();
      client.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: 7 }, body);
      client.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: 8 }, Buffer.from('small'));
      const first = await client.nextFrame();
      assert.equal(responseCorrelationId(first), 7);
      assert.ok(first.subarray(-body.length).equals(body));
      assert.equal(responseCorrelationId(await client.nextFrame()), 8);
      assert.equal(server.stats.bytesReadIntoFrames, 0);
    });
  });
});
