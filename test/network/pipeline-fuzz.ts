// A seeded workload for the network layer: many connections pipelining requests of random sizes, written in
// random pieces, answered by handlers that finish after random delays (some synchronously, some with no
// response), under small in-flight bounds. Every response must arrive on its own connection, in request order,
// with the bytes that request carried; nothing may be left in flight at the end. A third of the requests are
// Fetch requests, which a connection takes one at a time while the others pipeline around them.

import assert from 'node:assert/strict';
import { NO_RESPONSE, type Request, type Response } from '../../src/network/request.js';
import { encodeRequest, type RawClient, responseCorrelationId } from '../helpers/raw-client.js';
import { echoResponse, seededRandom, sizePrefixed, sleep, waitFor, withServer } from './helpers.js';

export interface FuzzScale {
  readonly seed: number;
  readonly connections: number;
  readonly requestsPerConnection: number;
  readonly bodyBytesMax: number;
}

/** Correlation ids whose requests get no response: those divisible by 7. */
function unanswered(correlationId: number): boolean {
  return correlationId % 7 === 0;
}

export async function runPipelineFuzz(scale: FuzzScale): Promise<void> {
  const random = seededRandom(scale.seed);
  const handler = (request: Request): Response | Promise<Response> => {
    const response = unanswered(request.correlationId) ? NO_RESPONSE : echoResponse(request);
    // The delay is derived from the request so that it does not depend on arrival order across connections.
    const delayMs = request.frame.length % 5 === 0 ? 0 : request.frame.length % 11;
    if (delayMs === 0) return response;
    // Copy what the response refers to: the frame may be a view of a read buffer.
    const copied = response === null ? null : response.map((chunk) => Buffer.from(chunk));
    return sleep(delayMs).then(() => copied);
  };
  await withServer(
    {
      handler,
      options: {
        'queued.max.requests': Math.max(4, scale.connections),
        'max.in.flight.requests.per.connection': 5,
        'socket.send.buffer.bytes': 16 * 1024,
        // Small enough that frames often wait for their bytes at the size prefix.
        'queued.max.request.bytes': 3 * scale.bodyBytesMax,
      },
    },
    async ({ connect, server }) => {
      const clients: RawClient[] = [];
      const expected: Buffer[][] = [];
      for (let c = 0; c < scale.connections; c++) {
        const client = await connect();
        const frames: Buffer[] = [];
        const bodies: Buffer[] = [];
        for (let id = 0; id < scale.requestsPerConnection; id++) {
          const body = Buffer.alloc(Math.floor(random() * scale.bodyBytesMax));
          for (let i = 0; i < body.length; i += 97) body[i] = Math.floor(random() * 256);
          const frame = encodeRequest(
            { apiKey: id % 3 === 1 ? 1 : 0, apiVersion: 9, correlationId: id, clientId: `c${c}` },
            body,
          );
          frames.push(sizePrefixed(frame));
          if (!unanswered(id)) bodies.push(frame.subarray(8));
        }
        clients.push(client);
        expected.push(bodies);
        // Write the whole stream in random pieces, so frames start and end anywhere within reads.
        const stream = Buffer.concat(frames);
        void (async () => {
          for (let at = 0; at < stream.length; ) {
            const piece = 1 + Math.floor(random() * 3000);
            await client.sendRaw(stream.subarray(at, at + piece));
            at += piece;
          }
        })();
      }
      await Promise.all(
        clients.map(async (client, c) => {
          let previous = -1;
          for (const body of expected[c]!) {
            const frame = await client.nextFrame(30_000);
            const id = responseCorrelationId(frame);
            assert.ok(id > previous, `connection ${c}: response ${id} after ${previous}`);
            assert.equal(unanswered(id), false, `connection ${c}: a response for ${id}`);
            previous = id;
            assert.equal(Buffer.compare(frame.subarray(4), body), 0, `connection ${c}: body of ${id}`);
          }
        }),
      );
      await waitFor(() => server.stats.requestsInFlight === 0, 5_000, 'requests in flight to reach zero');
      assert.equal(server.stats.requestBytesInFlight, 0);
      assert.equal(server.stats.requestsReceived, scale.connections * scale.requestsPerConnection);
    },
  );
}
