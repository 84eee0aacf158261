// L_rtt: one request in flight over loopback, each answered by a response of the size asked for, from another
// process. The figure counts only whole answers; the responder closes a connection that sends a malformed request.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { findLimit } from '../../bench/limits/registry.js';
import { RTT_REQUEST_BYTES, type RttMessage } from '../../bench/limits/rtt-frames.js';
import { measureRoundTripsOnce } from '../../bench/limits/rtt-limit.js';

const responderModule = fileURLToPath(new URL('../../bench/limits/rtt-responder.js', import.meta.url));
const context = { durationMs: 300, workDir: tmpdir(), log: () => {} };

describe('L_rtt', { timeout: 30_000 }, () => {
  it('counts whole answers of the size asked for', async () => {
    for (const size of [1, 1024 * 1024]) {
      const sample = await measureRoundTripsOnce(context, size);
      const roundTrips = sample.details.roundTrips as number;
      assert.ok(roundTrips > 0, `round trips for ${size} bytes`);
      assert.equal(sample.details.bytes, roundTrips * size);
      assert.equal(sample.details.responseBytes, size);
      assert.ok(sample.value > 0);
    }
  });

  it('refuses a response size outside 1 byte .. 64 MiB', async () => {
    await assert.rejects(measureRoundTripsOnce(context, 0), /L_rtt response of 0 bytes/);
    await assert.rejects(measureRoundTripsOnce(context, 65 * 1024 * 1024), /L_rtt response of/);
  });

  it('is registered as L_rtt in MB/s, 1 MiB answers', async () => {
    const limit = findLimit('L_rtt');
    assert.ok(limit);
    assert.equal(limit.unit, 'MB/s');
    const sample = await limit.measureOnce(context, 0);
    assert.equal(sample.details.responseBytes, 1024 * 1024);
  });

  it('the responder closes a connection whose request is malformed, and keeps serving others', async () => {
    const responder = fork(responderModule, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    responder.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    try {
      const [message] = (await once(responder, 'message')) as [RttMessage];
      const bad = connect({ host: '127.0.0.1', port: message.port });
      await once(bad, 'connect');
      const request = Buffer.alloc(RTT_REQUEST_BYTES);
      request.writeInt32BE(RTT_REQUEST_BYTES - 4, 0);
      request.writeInt32BE(-5, 4);
      bad.write(request);
      bad.resume();
      await once(bad, 'close');
      assert.match(stderr, /malformed request/);
      // A well-formed request on a new connection is still answered.
      const good = connect({ host: '127.0.0.1', port: message.port });
      await once(good, 'connect');
      request.writeInt32BE(10, 4);
      good.write(request);
      let received = 0;
      for await (const chunk of good) {
        received += (chunk as Buffer).length;
        if (received >= 14) break;
      }
      assert.equal(received, 14);
      good.destroy();
    } finally {
      responder.kill();
      await once(responder, 'exit');
    }
  });
});
