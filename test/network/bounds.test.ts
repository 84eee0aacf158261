import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request, Response } from '../../src/network/request.js';
import { DecodeError } from '../../src/protocol/primitives/decode-error.js';
import { responseCorrelationId } from '../helpers/raw-client.js';
import { type Deferred, deferred, echoHandler, echoResponse, sleep, waitFor, withServer } from './helpers.js';

/** A handler that answers each request only when the test releases it, in any order it likes. */
function heldHandler(): {
  handler: (request: Request) => Promise<Response>;
  held: Map<number, Deferred<void>>;
} {
  const held = new Map<number, Deferred<void>>();
  const handler = async (request: Request): Promise<Response> => {
    const release = deferred<void>();
    held.set(request.correlationId, release);
    await release.promise;
    return echoResponse(request);
  };
  return { handler, held };
}

describe('connection bounds', () => {
  it('closes a connection idle for connections.max.idle.ms', async () => {
    await withServer(
      { handler: echoHandler, options: { 'connections.max.idle.ms': 150 } },
      async ({ connect, server, logger }) => {
        const client = await connect();
        client.sendRequest({ apiKey: 18, apiVersion: 0, correlationId: 1 });
        await client.nextFrame();
        const started = Date.now();
        assert.equal(await client.waitClosed(2_000), true);
        assert.ok(Date.now() - started >= 100, 'not closed before the idle time');
        assert.equal(server.stats.connectionsClosedIdle, 1);
        assert.equal(logger.matching('idle').length, 1);
      },
    );
  });

  it('closes a connection that sent half a frame and stalled, counting from its last byte as Kafka', async () => {
    // Kafka's idle expiry notes a connection's last read, partial or not: the idle time runs from its last byte.
    await withServer(
      { handler: echoHandler, options: { 'connections.max.idle.ms': 300 } },
      async ({ connect, server, logger }) => {
        const client = await connect();
        const half = Buffer.alloc(4 + 10);
        half.writeInt32BE(100, 0);
        let lastByteAt = 0;
        for (let i = 0; i < 4; i++) {
          await client.sendRaw(half.subarray(i * 3, i * 3 + 3));
          lastByteAt = Date.now();
          await sleep(150);
        }
        assert.equal(client.closed, false, 'bytes of a frame, arriving within the idle time, keep it open');
        assert.equal(await client.waitClosed(2_000), true);
        const idleFor = Date.now() - lastByteAt;
        assert.ok(idleFor >= 250 && idleFor < 1_000, `closed ${idleFor} ms after the last byte`);
        assert.equal(server.stats.connectionsClosedIdle, 1);
        assert.equal(logger.matching('idle').length, 1);
      },
    );
  });

  it('does not close a connection as idle while its own request is still being answered', async () => {
    const handler = async (request: Request): Promise<Response> => {
      await sleep(400);
      return echoResponse(request);
    };
    await withServer({ handler, options: { 'connections.max.idle.ms': 100 } }, async ({ connect }) => {
      const client = await connect();
      client.sendRequest({ apiKey: 1, apiVersion: 0, correlationId: 5 });
      assert.equal(responseCorrelationId(await client.nextFrame(2_000)), 5);
    });
  });

  it('refuses connections beyond max.connections.per.ip and admits again when one closes', async () => {
    await withServer(
      { handler: echoHandler, options: { 'max.connections.per.ip': 2 } },
      async ({ connect, server }) => {
        const first = await connect();
        const second = await connect();
        const third = await connect();
        assert.equal(await third.waitClosed(), true);
        assert.equal(server.stats.connectionsRejected, 1);
        second.sendRequest({ apiKey: 18, apiVersion: 0, correlationId: 2 });
        assert.equal(responseCorrelationId(await second.nextFrame()), 2);
        first.destroy();
        await waitFor(() => server.stats.connectionsOpen === 1);
        const fourth = await connect();
        fourth.sendRequest({ apiKey: 18, apiVersion: 0, correlationId: 4 });
        assert.equal(responseCorrelationId(await fourth.nextFrame()), 4);
      },
    );
  });

  it('lets max.connections.per.ip.overrides raise the bound for one address', async () => {
    await withServer(
      {
        handler: echoHandler,
        options: { 'max.connections.per.ip': 0, 'max.connections.per.ip.overrides': '127.0.0.1:2,[::1]:1' },
      },
      async ({ connect, server }) => {
        const first = await connect();
        await connect();
        const third = await connect();
        assert.equal(await third.waitClosed(), true);
        assert.equal(first.closed, false);
        assert.equal(server.stats.connectionsRejected, 1);
      },
    );
  });

  it('takes host names in max.connections.per.ip.overrides, resolved at start and on update', async () => {
    // Kafka's ConnectionQuotas resolves each override's host with InetAddress.getByName.
    await withServer(
      {
        handler: echoHandler,
        options: { 'max.connections.per.ip': 0, 'max.connections.per.ip.overrides': 'localhost:2' },
      },
      async ({ connect, server }) => {
        const first = await connect();
        await connect();
        const third = await connect();
        assert.equal(await third.waitClosed(), true);
        assert.equal(first.closed, false);
        assert.equal(server.stats.connectionsRejected, 1);
        server.updateConnectionLimits({
          maxConnections: 10,
          maxConnectionsPerIp: 0,
          perIpOverrides: new Map([['localhost', 3]]),
        });
        await waitFor(() => server.limitForAddress('127.0.0.1') === 3, 5_000, 'localhost resolved again');
        const fourth = await connect();
        fourth.sendRequest({ apiKey: 18, apiVersion: 0, correlationId: 4 });
        assert.equal(responseCorrelationId(await fourth.nextFrame()), 4);
      },
    );
  });

  it('counts an IPv4 client of a dual-stack listener under its IPv4 address, as Java does', async () => {
    // On a listener bound to "::" Node reports an IPv4 peer as ::ffff:a.b.c.d; Java's InetAddress gives the IPv4
    // address, so Kafka's overrides (and per-address counts) name it as 127.0.0.1, or as ::ffff:127.0.0.1 alike.
    for (const overrides of ['127.0.0.1:2', '[::ffff:127.0.0.1]:2']) {
      await withServer(
        {
          handler: echoHandler,
          listener: { host: '::' },
          options: { 'max.connections.per.ip': 0, 'max.connections.per.ip.overrides': overrides },
        },
        async ({ connect, server }) => {
          const first = await connect();
          first.sendRequest({ apiKey: 18, apiVersion: 0, correlationId: 1 });
          assert.equal(responseCorrelationId(await first.nextFrame()), 1, overrides);
          await connect();
          const third = await connect();
          assert.equal(await third.waitClosed(), true, overrides);
          assert.equal(server.stats.connectionsRejected, 1, overrides);
        },
      );
    }
  });

  it("holds a connection beyond max.connections until one closes, as Kafka's acceptor waits for a slot", async () => {
    await withServer(
      { handler: echoHandler, options: { 'max.connections': 1 } },
      async ({ connect, server }) => {
        const first = await connect();
        const second = await connect();
        second.sendRequest({ apiKey: 18, apiVersion: 0, correlationId: 7 });
        await assert.rejects(second.nextFrame(300), 'not served while the broker is at max.connections');
        assert.equal(second.closed, false, 'nor closed');
        assert.equal(server.stats.connectionsRejected, 0);
        first.socket.destroy();
        assert.equal(responseCorrelationId(await second.nextFrame()), 7, 'served once a slot is free');
      },
    );
  });

  it('closes a connection beyond the socket.listen.backlog.size waiting ones, so waiting stays bounded', async () => {
    await withServer(
      { handler: echoHandler, options: { 'max.connections': 1, 'socket.listen.backlog.size': 2 } },
      async ({ connect, server }) => {
        await connect();
        const waiting = [await connect(), await connect()];
        const beyond = await connect();
        await waitFor(() => beyond.closed);
        assert.equal(server.stats.connectionsRejected, 1);
        for (const c of waiting) assert.equal(c.closed, false, 'the two within the backlog still wait');
      },
    );
  });
});

describe('request bounds', () => {
  it('stops reading a connection at its in-flight bound and continues as answers leave', async () => {
    const { handler, held } = heldHandler();
    await withServer(
      { handler, options: { 'max.in.flight.requests.per.connection': 3 } },
      async ({ connect, server }) => {
        const client = await connect();
        for (let id = 0; id < 10; id++) client.sendRequest({ apiKey: 0, apiVersion: 0, correlationId: id });
        await waitFor(() => held.size === 3);
        await sleep(50);
        assert.equal(held.size, 3, 'no fourth request dispatched while three are in flight');
        assert.equal(server.stats.requestsInFlight, 3);
        assert.ok(server.stats.readPauses > 0);
        for (let id = 0; id < 10; id++) {
          await waitFor(() => held.has(id));
          held.get(id)!.resolve();
          assert.equal(responseCorrelationId(await client.nextFrame()), id);
          assert.ok(server.stats.requestsInFlight <= 3);
        }
      },
    );
  });

  it('takes one Fetch of a connection at a time, holding the frames behind the next one in order', async () => {
    const { handler: holding, held } = heldHandler();
    const malformed = deferred<void>();
    // Request 10 turns out malformed once the test says so: its connection closes with a Fetch waiting.
    const handler = async (request: Request): Promise<Response> => {
      if (request.correlationId !== 10) return holding(request);
      await malformed.promise;
      throw new DecodeError('bad-value', 'malformed fetch');
    };
    await withServer({ handler }, async ({ connect, server }) => {
      const client = await connect();
      // Fetch, Produce, Fetch, Produce: the second Fetch waits for the first's answer, the Produce behind it too.
      for (let id = 0; id < 4; id++)
        client.sendRequest({ apiKey: id % 2 === 0 ? 1 : 0, apiVersion: 9, correlationId: id });
      await waitFor(() => server.stats.bytesIn > 0 && held.size === 2);
      await sleep(50);
      assert.deepEqual([...held.keys()], [0, 1], 'the second Fetch waits while the first is in flight');
      assert.equal(server.stats.requestsReceived, 2);
      held.get(0)!.resolve();
      assert.equal(responseCorrelationId(await client.nextFrame()), 0);
      await waitFor(() => held.size === 4);
      for (const id of [1, 2, 3]) held.get(id)!.resolve();
      for (const id of [1, 2, 3]) assert.equal(responseCorrelationId(await client.nextFrame()), id);

      // A connection closed with a Fetch waiting gives back the bytes granted to its frame.
      const closing = await connect();
      for (const id of [10, 11]) closing.sendRequest({ apiKey: 1, apiVersion: 12, correlationId: id });
      await waitFor(() => server.stats.requestBytesInFlight === 2 * 20, 5_000, 'both frames read');
      malformed.resolve();
      await waitFor(() => server.stats.connectionsOpen === 1);
      assert.equal(server.stats.requestBytesInFlight, 0);
      assert.ok(!held.has(11), 'the waiting Fetch was never dispatched');
    });
  });

  it('takes one cluster-sized request of each kind (Metadata, Fetch...) of a connection at a time', async () => {
    const { handler, held } = heldHandler();
    await withServer({ handler }, async ({ connect, server }) => {
      // Metadata, Metadata: an all-topic Metadata response grows with the cluster, so the second waits.
      const client = await connect();
      for (const id of [0, 1]) client.sendRequest({ apiKey: 3, apiVersion: 12, correlationId: id });
      await waitFor(() => held.has(0));
      await sleep(50);
      assert.deepEqual([...held.keys()], [0], 'the second Metadata waits while the first is in flight');
      held.get(0)!.resolve();
      assert.equal(responseCorrelationId(await client.nextFrame()), 0);
      await waitFor(() => held.has(1));
      held.get(1)!.resolve();
      assert.equal(responseCorrelationId(await client.nextFrame()), 1);
      held.clear();

      // Each kind waits behind one of its own kind, whatever it is.
      for (const key of [1, 9, 15, 16, 29, 32, 35, 46, 48, 50, 61, 66, 69]) {
        const pair = await connect();
        const base = key * 1000;
        for (const id of [base, base + 1])
          pair.sendRequest({ apiKey: key, apiVersion: 0, correlationId: id });
        await waitFor(() => held.has(base));
        await sleep(20);
        assert.ok(!held.has(base + 1), `a second API ${key} waits while the first is in flight`);
        held.get(base)!.resolve();
        assert.equal(responseCorrelationId(await pair.nextFrame()), base);
        await waitFor(() => held.has(base + 1));
        held.get(base + 1)!.resolve();
        assert.equal(responseCorrelationId(await pair.nextFrame()), base + 1);
      }

      // Other kinds pass: a consumer's Metadata and OffsetFetch do not wait behind its long-poll Fetch. A held
      // frame holds those behind it: Fetch, Metadata, Fetch, OffsetFetch dispatch two, then the other two.
      held.clear();
      const consumer = await connect();
      const order = [1, 3, 1, 9];
      for (let id = 0; id < order.length; id++)
        consumer.sendRequest({ apiKey: order[id]!, apiVersion: 0, correlationId: 900 + id });
      await waitFor(() => held.size === 2);
      await sleep(20);
      assert.deepEqual(
        [...held.keys()],
        [900, 901],
        'Metadata passes the Fetch in flight; the second Fetch waits',
      );
      held.get(900)!.resolve();
      held.get(901)!.resolve();
      await waitFor(() => held.size === 4, 5_000, 'the held Fetch and the OffsetFetch behind it dispatched');
      for (const id of [902, 903]) held.get(id)!.resolve();
      for (let id = 0; id < order.length; id++)
        assert.equal(responseCorrelationId(await consumer.nextFrame()), 900 + id);

      // Produce (a producer pipelines its batches), OffsetCommit, Heartbeat, ApiVersions: all dispatched at once.
      held.clear();
      const producer = await connect();
      const keys = [0, 0, 8, 12, 18, 0, 10, 2];
      for (let id = 0; id < keys.length; id++)
        producer.sendRequest({ apiKey: keys[id]!, apiVersion: 0, correlationId: 500 + id });
      await waitFor(() => held.size === keys.length, 5_000, 'every pipelined request dispatched');
      for (let id = 0; id < keys.length; id++) held.get(500 + id)!.resolve();
      for (let id = 0; id < keys.length; id++)
        assert.equal(responseCorrelationId(await producer.nextFrame()), 500 + id);
      assert.ok(server.stats.requestsReceived > 0);
    });
  });

  it('stops reading every connection at queued.max.requests and resumes them when requests finish', async () => {
    const { handler, held } = heldHandler();
    await withServer({ handler, options: { 'queued.max.requests': 2 } }, async ({ connect, server }) => {
      const a = await connect();
      const b = await connect();
      for (const id of [10, 11]) a.sendRequest({ apiKey: 3, apiVersion: 0, correlationId: id });
      for (const id of [20, 21]) b.sendRequest({ apiKey: 3, apiVersion: 0, correlationId: id });
      await waitFor(() => server.stats.bytesIn >= 4 * 22 && held.size === 2);
      await sleep(50);
      assert.equal(held.size, 2, 'only two requests dispatched across the broker');
      assert.equal(server.stats.requestsInFlight, 2);
      let answered = 0;
      while (answered < 4) {
        await waitFor(() => [...held.values()].length > 0);
        for (const [id, release] of [...held]) {
          held.delete(id);
          release.resolve();
          answered++;
        }
        assert.ok(server.stats.requestsInFlight <= 2);
      }
      const fromA = [responseCorrelationId(await a.nextFrame()), responseCorrelationId(await a.nextFrame())];
      const fromB = [responseCorrelationId(await b.nextFrame()), responseCorrelationId(await b.nextFrame())];
      assert.deepEqual(fromA, [10, 11]);
      assert.deepEqual(fromB, [20, 21]);
    });
  });

  it('does not count long polls marked as waiting against queued.max.requests', async () => {
    const polls: Deferred<void>[] = [];
    const handler = async (request: Request): Promise<Response> => {
      if (request.apiKey === 1) {
        request.markWaiting();
        const poll = deferred<void>();
        polls.push(poll);
        await poll.promise;
      }
      return echoResponse(request);
    };
    await withServer({ handler, options: { 'queued.max.requests': 2 } }, async ({ connect, server }) => {
      const consumers = [await connect(), await connect(), await connect()];
      consumers.forEach((consumer, i) => {
        consumer.sendRequest({ apiKey: 1, apiVersion: 12, correlationId: i });
      });
      await waitFor(() => polls.length === 3, 2_000, 'all three long polls to be dispatched');
      assert.equal(server.stats.requestsWaiting, 3);
      assert.equal(server.stats.requestsInFlight, 0);
      const admin = await connect();
      assert.equal(
        responseCorrelationId(await admin.request({ apiKey: 3, apiVersion: 12, correlationId: 9 })),
        9,
      );
      for (const poll of polls) poll.resolve();
      for (const [i, consumer] of consumers.entries()) {
        assert.equal(responseCorrelationId(await consumer.nextFrame()), i);
      }
      assert.equal(server.stats.requestsWaiting, 0);
      assert.equal(server.stats.requestBytesInFlight, 0);
    });
  });

  it('stops reading when queued.max.request.bytes of requests are in flight', async () => {
    const { handler, held } = heldHandler();
    await withServer(
      { handler, options: { 'queued.max.request.bytes': 1000 } },
      async ({ connect, server }) => {
        const client = await connect();
        const body = Buffer.alloc(600);
        for (let id = 0; id < 3; id++)
          client.sendRequest({ apiKey: 0, apiVersion: 3, correlationId: id }, body);
        await waitFor(() => held.size === 2);
        await sleep(50);
        assert.equal(held.size, 2, 'the third waits until bytes in flight drop below the bound');
        held.get(0)!.resolve();
        await waitFor(() => held.size === 3);
        held.get(1)!.resolve();
        held.get(2)!.resolve();
        for (let id = 0; id < 3; id++) assert.equal(responseCorrelationId(await client.nextFrame()), id);
        assert.equal(server.stats.requestBytesInFlight, 0);
      },
    );
  });

  it('takes no new requests from a throttled connection until its throttle time has passed', async () => {
    const handledAtMs = new Map<number, number>();
    const handler = (request: Request): Response => {
      handledAtMs.set(request.correlationId, Date.now());
      if (request.correlationId === 1) request.connection.throttle(200);
      return echoResponse(request);
    };
    await withServer({ handler }, async ({ connect }) => {
      const throttled = await connect();
      const other = await connect();
      throttled.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: 1 });
      throttled.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: 2 });
      assert.equal(
        responseCorrelationId(await throttled.nextFrame()),
        1,
        'the throttled response itself is sent',
      );
      assert.equal(
        responseCorrelationId(await other.request({ apiKey: 3, apiVersion: 0, correlationId: 3 })),
        3,
      );
      assert.equal(responseCorrelationId(await throttled.nextFrame()), 2);
      const waitedMs = handledAtMs.get(2)! - handledAtMs.get(1)!;
      assert.ok(waitedMs >= 180, `second request handled ${waitedMs} ms after the first`);
      assert.ok(handledAtMs.get(3)! < handledAtMs.get(2)!, 'other connections are not throttled');
    });
  });

  it('never cuts a throttle short: a shorter later one leaves the connection muted until the longer ends', async () => {
    const handledAtMs = new Map<number, number>();
    let mutedAtMs = 0;
    const handler = async (request: Request): Promise<Response> => {
      handledAtMs.set(request.correlationId, Date.now());
      // Both pipelined requests are dispatched before either throttles; the first throttles for longer.
      if (request.correlationId === 1) {
        await sleep(50);
        mutedAtMs = Date.now();
        request.connection.throttle(1000);
      } else if (request.correlationId === 2) {
        await sleep(100);
        request.connection.throttle(50);
      }
      return echoResponse(request);
    };
    await withServer({ handler }, async ({ connect }) => {
      const client = await connect();
      client.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: 1 });
      client.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: 2 });
      assert.equal(responseCorrelationId(await client.nextFrame()), 1);
      assert.equal(responseCorrelationId(await client.nextFrame()), 2);
      assert.equal(
        responseCorrelationId(await client.request({ apiKey: 0, apiVersion: 9, correlationId: 3 })),
        3,
      );
      const waitedMs = handledAtMs.get(3)! - mutedAtMs;
      assert.ok(waitedMs >= 950, `third request handled ${waitedMs} ms after a throttle of 1000 ms began`);
    });
  });

  it('reads no request body beyond queued.max.request.bytes, even from many connections mid-frame', async () => {
    const { handler, held } = heldHandler();
    const frameBytes = 1024 * 1024;
    const bytesMax = 2 * frameBytes;
    const clients = 10;
    await withServer(
      {
        handler,
        options: { 'queued.max.request.bytes': bytesMax, 'socket.request.max.bytes': 2 * frameBytes },
      },
      async ({ connect, server }) => {
        const senders = [];
        for (let id = 0; id < clients; id++) senders.push(await connect());
        senders.forEach((client, id) => {
          client.sendRequest({ apiKey: 0, apiVersion: 9, correlationId: id }, Buffer.alloc(frameBytes - 20));
        });
        await waitFor(() => held.size === 2, 5_000, 'two requests dispatched');
        await sleep(100);
        assert.equal(held.size, 2, 'the bound admits frames while below it, so exactly two');
        assert.equal(server.stats.requestBytesInFlight, 2 * frameBytes);
        // Each refused connection holds at most what the socket read before it was paused.
        const queued = server.bytesQueued();
        assert.ok(queued < (clients - 2) * 256 * 1024, `${queued} bytes held for refused frames`);
        for (let answered = 0; answered < clients; answered++) {
          await waitFor(() => held.size > 0);
          const [id, release] = [...held][0]!;
          held.delete(id);
          release.resolve();
          assert.equal(responseCorrelationId(await senders[id]!.nextFrame()), id);
          assert.ok(server.stats.requestBytesInFlight <= bytesMax + frameBytes);
        }
        await waitFor(() => server.stats.requestBytesInFlight === 0);
      },
    );
  });

  it('keeps unsent bytes bounded when a client sends requests but never reads the answers', async () => {
    const responseBody = Buffer.alloc(64 * 1024, 1);
    const handler = (request: Request): Response => {
      const header = Buffer.alloc(4);
      header.writeInt32BE(request.correlationId, 0);
      return [header, responseBody];
    };
    const requests = 1000;
    const sendBufferBytes = 128 * 1024;
    const inFlightMax = 4;
    await withServer(
      {
        handler,
        options: {
          'socket.send.buffer.bytes': sendBufferBytes,
          'max.in.flight.requests.per.connection': inFlightMax,
        },
      },
      async ({ connect, server }) => {
        const client = await connect();
        await waitFor(() => server.openConnections().size === 1);
        const [connection] = [...server.openConnections()];
        assert.equal(
          connection!.socket.writableHighWaterMark,
          sendBufferBytes,
          'socket.send.buffer.bytes applied',
        );
        client.setReading(false);
        for (let id = 0; id < requests; id++)
          client.sendRequest({ apiKey: 3, apiVersion: 0, correlationId: id });
        let peakQueued = 0;
        let stalledSince = Date.now();
        let lastOut = -1;
        // Sample until the server has stopped making progress for a while.
        while (Date.now() - stalledSince < 300) {
          peakQueued = Math.max(peakQueued, server.bytesQueued());
          if (server.stats.bytesOut !== lastOut) {
            lastOut = server.stats.bytesOut;
            stalledSince = Date.now();
          }
          await sleep(5);
        }
        const totalResponseBytes = requests * (responseBody.length + 8);
        assert.ok(
          server.stats.bytesOut < totalResponseBytes / 4,
          `stalled at ${server.stats.bytesOut} bytes`,
        );
        // The write buffer bound plus the responses of requests already in flight plus one read chunk.
        const bound = sendBufferBytes + (inFlightMax + 1) * (responseBody.length + 8) + 256 * 1024;
        assert.ok(peakQueued <= bound, `peak queued ${peakQueued} above ${bound}`);
        assert.ok(server.stats.readPauses > 0);
        client.setReading(true);
        for (let id = 0; id < requests; id++) {
          assert.equal(responseCorrelationId(await client.nextFrame()), id);
        }
      },
    );
  });
});
