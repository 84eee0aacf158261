// The request times of a request that was already read when a quota's throttle muted its connection. Kafka mutes
// the channel and leaves the next request unread in the socket until the throttle ends; RequestQueueTimeMs and
// TotalTimeMs start when a request is read (RequestChannel.Request's start time), so the mute is in neither (it is
// the throttle time, reported apart). Brook reads ahead: a request that came in the same read as the throttled one
// waits in the connection's buffer instead, and counts as read when the mute ends.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request, RequestObserver, Response } from '../../src/network/request.js';
import { encodeRequest, responseCorrelationId } from '../helpers/raw-client.js';
import { echoResponse, sizePrefixed, waitFor, withServer } from './helpers.js';

const THROTTLE_MS = 500;

describe('request times across a throttle', () => {
  it('does not count the mute in the queue or total time of a request read before it', async () => {
    const times = new Map<number, { queueMs: number; totalMs: number }>();
    const requestObserver: RequestObserver = {
      requestDone(apiKey, queueMs, _localMs, _remoteMs, _responseQueueMs, _sendMs, totalMs) {
        times.set(apiKey, { queueMs, totalMs });
      },
    };
    const handler = (request: Request): Response => {
      if (request.correlationId === 1) request.connection.throttle(THROTTLE_MS);
      return echoResponse(request);
    };
    await withServer({ handler, requestObserver }, async ({ connect }) => {
      const client = await connect();
      // Both requests in one write, so that the second is read (and buffered) with the first, before the mute.
      await client.sendRaw(
        Buffer.concat([
          sizePrefixed(encodeRequest({ apiKey: 0, apiVersion: 9, correlationId: 1 })),
          sizePrefixed(encodeRequest({ apiKey: 3, apiVersion: 0, correlationId: 2 })),
        ]),
      );
      assert.equal(responseCorrelationId(await client.nextFrame()), 1);
      assert.equal(responseCorrelationId(await client.nextFrame(5_000)), 2);
      await waitFor(() => times.has(3), 2_000);
      const second = times.get(3)!;
      assert.ok(
        second.queueMs < THROTTLE_MS / 2,
        `queue time ${second.queueMs} ms across a ${THROTTLE_MS} ms mute`,
      );
      assert.ok(
        second.totalMs < THROTTLE_MS / 2,
        `total time ${second.totalMs} ms across a ${THROTTLE_MS} ms mute`,
      );
    });
  });
});
