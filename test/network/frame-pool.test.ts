// Frames gathered from a FramePool over a real socket: memory is reused only for requests whose handler allows
// it, and only after the socket has taken every byte of the response (a response may send the frame itself by
// reference). The pool poisons idle memory, so a frame reused too early shows as wrong bytes in a response.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FramePool } from '../../src/common/frame-pool.js';
import type { Request, RequestHandler } from '../../src/network/request.js';
import { withServer } from './helpers.js';

const FRAME_BODY_BYTES = 200 * 1024;
const REQUESTS = 60;

/** Echoes the request body by reference, as a fetch sends log bytes, and allows the frame's reuse. */
function echoByReference(allowReuse: boolean): RequestHandler {
  return (request: Request) => {
    const header = Buffer.allocUnsafe(4);
    header.writeInt32BE(request.correlationId, 0);
    if (allowReuse) request.allowFrameReuse();
    return [header, request.frame.subarray(8)];
  };
}

function body(i: number): Buffer {
  const b = Buffer.allocUnsafe(FRAME_BODY_BYTES);
  for (let at = 0; at < b.length; at += 4) b.writeUInt32BE((i * 7919 + at) >>> 0, at);
  return b;
}

describe('frame pool over a socket', () => {
  it('reuses frames only after their responses were written, with a reader that stalls', async () => {
    const pool = new FramePool(8 * 1024 * 1024, true);
    await withServer({ handler: echoByReference(true), framePool: pool }, async ({ connect }) => {
      const client = await connect({ frameBytesMax: 1024 * 1024 });
      // Nothing is read for a while: responses back up in the server's socket, holding their frames.
      client.setReading(false);
      for (let i = 0; i < REQUESTS; i++) {
        client.sendRequest({ apiKey: 18, apiVersion: 0, correlationId: i, headerVersion: 0 }, body(i));
      }
      await new Promise((r) => setTimeout(r, 300));
      client.setReading(true);
      for (let i = 0; i < REQUESTS; i++) {
        const response = await client.nextFrame(10_000);
        assert.equal(response.readInt32BE(0), i);
        assert.ok(response.subarray(4).equals(body(i)), `response ${i} carries its own request's bytes`);
      }
      assert.ok(pool.stats.reused > 0, `frames were reused (${JSON.stringify(pool.stats)})`);
    });
  });

  it('never reuses a frame its handler did not release', async () => {
    const pool = new FramePool(8 * 1024 * 1024, true);
    await withServer({ handler: echoByReference(false), framePool: pool }, async ({ connect }) => {
      const client = await connect({ frameBytesMax: 1024 * 1024 });
      for (let i = 0; i < 10; i++) {
        const response = await client.request(
          { apiKey: 18, apiVersion: 0, correlationId: i, headerVersion: 0 },
          body(i),
        );
        assert.ok(response.subarray(4).equals(body(i)));
      }
      assert.equal(pool.stats.reused, 0);
      assert.equal(pool.stats.recycled, 0);
      assert.ok(pool.stats.allocated >= 10);
    });
  });

  it('a connection closed with responses unwritten gives nothing back for reuse', async () => {
    const pool = new FramePool(8 * 1024 * 1024, true);
    let handled = 0;
    const never: RequestHandler = (request) => {
      handled++;
      request.allowFrameReuse();
      return new Promise(() => {});
    };
    await withServer({ handler: never, framePool: pool }, async ({ connect }) => {
      const client = await connect();
      for (let i = 0; i < 3; i++) {
        client.sendRequest({ apiKey: 18, apiVersion: 0, correlationId: i, headerVersion: 0 }, body(i));
      }
      const deadline = Date.now() + 5_000;
      while (handled < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      assert.equal(handled, 3);
      client.destroy();
      await new Promise((r) => setTimeout(r, 100));
      // The handlers never answered: their frames may still be in use, so none may come back.
      assert.equal(pool.stats.recycled, 0);
      assert.equal(pool.idleByteCount, 0);
    });
  });
});
