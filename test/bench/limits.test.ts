// A shortened run of every limit (a few seconds in all) and the pure parts of the limits.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { LatencySummary } from '../../bench/harness/histogram.js';
import { AckCountReader, encodeAckCount } from '../../bench/limits/ack-counts.js';
import type { ProducerWindow } from '../../bench/limits/acked-send.js';
import { readDirtyLimit } from '../../bench/limits/dirty-limit.js';
import { planAsyncBytes } from '../../bench/limits/disk-async-limit.js';
import { formatLimits } from '../../bench/limits/main.js';
import { measureLimits } from '../../bench/limits/measure-limits.js';
import { longestMountPrefix } from '../../bench/limits/mount-info.js';
import { readFilesOnce } from '../../bench/limits/read-limit.js';
import { type LimitDefinition, limitDefinitions } from '../../bench/limits/registry.js';
import { measureReplicateOnce } from '../../bench/limits/replicate-limit.js';
import { serveFilesOnce } from '../../bench/limits/serve-limit.js';

describe('limits', () => {
  it('measures positive L_net, L_sink, L_sink_acked, L_tls, L_relay, L_replicate, L_replicate_acked, L_read, L_disk_sync and L_disk_async three times each and removes its files', async () => {
    const parentDir = mkdtempSync(join(tmpdir(), 'brook-limits-test-'));
    try {
      const names = [
        'L_net',
        'L_sink',
        'L_sink_acked',
        'L_tls',
        'L_relay',
        'L_replicate',
        'L_replicate_acked',
        'L_read',
        'L_disk_sync',
        'L_disk_async',
      ];
      const limits = await measureLimits({
        durationMs: 250,
        parentDir,
        diskBytesMax: 32 * 1024 * 1024,
        names,
      });
      assert.deepEqual([...limits.keys()], names, 'every limit asked for');
      for (const limit of limits.values()) {
        assert.equal(limit.unit, 'MB/s');
        assert.equal(limit.summary.values.length, 3);
        assert.ok(limit.summary.min > 0, `${limit.name} measured ${limit.summary.min}`);
        for (const d of limit.details) assert.ok((d.bytes as number) > 0);
      }
      for (const relay of limits.get('L_relay')!.details) {
        // Every byte sent came back through the relay's file, and the figure counts both directions.
        assert.equal(relay.bytesIn, relay.bytesOut);
        assert.equal(relay.bytesWritten, relay.bytesIn);
        assert.equal(relay.bytes, (relay.bytesIn as number) * 2);
      }
      for (const replicate of limits.get('L_replicate')!.details) {
        // The leader and both followers appended every byte produced; three replicas' CPU was counted.
        assert.deepEqual(replicate.bytesWrittenByReplica, [
          replicate.bytes,
          replicate.bytes,
          replicate.bytes,
        ]);
        assert.equal((replicate.followerCpuSeconds as number[]).length, 2);
        assert.ok((replicate.replicasCpuSeconds as number) >= (replicate.leaderCpuSeconds as number));
      }
      for (const acked of limits.get('L_replicate_acked')!.details) {
        // Whole requests of the window, each acknowledged once: every replica appended every byte, and the
        // producer saw one round trip per request.
        const { requestBytes } = acked.window as ProducerWindow;
        assert.equal((acked.bytes as number) % requestBytes, 0);
        assert.deepEqual(acked.bytesWrittenByReplica, [acked.bytes, acked.bytes, acked.bytes]);
        const roundTrip = acked.roundTrip as LatencySummary;
        assert.equal(roundTrip.count, (acked.bytes as number) / requestBytes);
        assert.ok(roundTrip.p50 > 0 && roundTrip.p99 >= roundTrip.p50);
      }
      for (const acked of limits.get('L_sink_acked')!.details) {
        // Whole requests, each acknowledged once the sink had appended it.
        const { requestBytes } = acked.window as ProducerWindow;
        assert.equal((acked.bytes as number) % requestBytes, 0);
        assert.equal(acked.bytesWritten, acked.bytes);
        assert.equal((acked.roundTrip as LatencySummary).count, (acked.bytes as number) / requestBytes);
        assert.equal(acked.inFlightMax, 5);
      }
      for (const sink of limits.get('L_sink')!.details) {
        // The sink appended every byte it received to its file.
        assert.equal(sink.bytesWritten, sink.bytes);
      }
      assert.equal(limits.get('L_net')!.details[0]!.bytesWritten, undefined, 'L_net writes no file');
      // L_tls went through a TLS session (the sink refuses plain TCP when given a certificate).
      for (const tls of limits.get('L_tls')!.details) assert.match(tls.cipher as string, /^TLS_/);
      assert.equal(limits.get('L_net')!.details[0]!.cipher, undefined, 'L_net is plain TCP');
      for (const read of limits.get('L_read')!.details) {
        // Whole passes over a file capped by diskBytesMax.
        assert.equal(read.fileBytes, 32 * 1024 * 1024);
        assert.equal(read.bytes, (read.fileBytes as number) * (read.passes as number));
      }
      const sync = limits.get('L_disk_sync')!.details[0]!;
      assert.ok((sync.syncs as number) >= 1, 'L_disk_sync called fdatasync');
      const async = limits.get('L_disk_async')!.details[0]!;
      assert.ok(['bytes-max', 'time'].includes(async.stoppedBy as string));
      assert.ok((async.bytes as number) <= 32 * 1024 * 1024);
      assert.deepEqual(readdirSync(parentDir), [], 'temporary directories were removed');
      const table = formatLimits(limits);
      for (const name of limits.keys()) assert.match(table, new RegExp(`^${name} `, 'm'));
    } finally {
      rmSync(parentDir, { recursive: true, force: true });
    }
  });

  it('removes the temporary directory of a limit that fails, and reports the failure', async () => {
    const parentDir = mkdtempSync(join(tmpdir(), 'brook-limits-test-'));
    const failing: LimitDefinition = {
      name: 'L_fail',
      unit: 'MB/s',
      description: 'always fails',
      measureOnce: async () => {
        throw new Error('disk on fire');
      },
    };
    try {
      await assert.rejects(
        measureLimits({ durationMs: 10, parentDir, definitions: [failing] }),
        /disk on fire/,
      );
      assert.deepEqual(readdirSync(parentDir), []);
      await assert.rejects(measureLimits({ durationMs: 10, parentDir, names: ['L_none'] }), /no limit named/);
    } finally {
      rmSync(parentDir, { recursive: true, force: true });
    }
  });

  it('has one registry entry per protocol limit measured so far, each with a unit', () => {
    assert.deepEqual(
      limitDefinitions.map((d) => d.name),
      [
        'L_net',
        'L_rtt',
        'L_sink',
        'L_sink_acked',
        'L_tls',
        'L_relay',
        'L_replicate',
        'L_replicate_acked',
        'L_null',
        'L_read',
        'L_disk_sync',
        'L_disk_async',
      ],
    );
  });

  it('L_replicate_acked keeps a window of requests larger than one write buffer, and never more in flight', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'brook-replicate-acked-test-'));
    try {
      // Requests of 512 KiB (the 16-partition cells' four batches of 128 KiB), two in flight: each request is
      // written as two buffers, and an acknowledgement covers a request only once both followers have it all.
      const window = { requestBytes: 512 * 1024, requests: 2 };
      const sample = await measureReplicateOnce({ durationMs: 200, workDir, log: () => {} }, { window });
      const bytes = sample.details.bytes as number;
      assert.ok(bytes >= 2 * window.requestBytes, `sent ${bytes} bytes`);
      assert.equal(bytes % window.requestBytes, 0);
      assert.deepEqual(sample.details.bytesWrittenByReplica, [bytes, bytes, bytes]);
      assert.equal((sample.details.roundTrip as LatencySummary).count, bytes / window.requestBytes);
      assert.deepEqual(sample.details.window, window);
      assert.equal(sample.details.inFlightMax, window.requests, 'the window was filled and never exceeded');
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('L_replicate_acked at a fixed rate sends the requests due inside the window, no more, and times each', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'brook-replicate-acked-test-'));
    try {
      // 50 requests per second for 400 ms: requests 0-19 are due inside the window, request 20 at its end.
      const acked = { window: { requestBytes: 16 * 1024, requests: 5 }, requestsPerSecond: 50 };
      const sample = await measureReplicateOnce({ durationMs: 400, workDir, log: () => {} }, acked);
      const bytes = 20 * 16 * 1024;
      assert.equal(sample.details.bytes, bytes);
      const roundTrip = sample.details.roundTrip as LatencySummary;
      assert.equal(roundTrip.count, 20);
      assert.equal(sample.details.requestsPerSecond, 50);
      // A request is acknowledged long before the next is due (20 ms apart) on an idle loopback; under a loaded
      // machine not always, so only the window is checked: never more than five out.
      assert.ok((sample.details.inFlightMax as number) <= 5);
      assert.deepEqual(sample.details.bytesWrittenByReplica, [bytes, bytes, bytes]);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('reads acknowledgement counts from a stream cut at every place, and refuses a count that goes back', () => {
    const counts = [0, 1, 2 ** 32 - 1, 2 ** 32, 5 * 2 ** 40 + 7];
    const stream = Buffer.concat(counts.map(encodeAckCount));
    for (let cut = 0; cut <= stream.length; cut++) {
      const reader = new AckCountReader();
      const seen: number[] = [];
      for (const piece of [stream.subarray(0, cut), stream.subarray(cut)]) {
        for (let i = 0; i < piece.length; i += 3) {
          if (reader.push(piece.subarray(i, i + 3))) seen.push(reader.latest);
        }
      }
      assert.equal(reader.latest, counts.at(-1));
      assert.ok(seen.every((v, i) => i === 0 || v >= seen[i - 1]!));
    }
    const reader = new AckCountReader();
    reader.push(encodeAckCount(10));
    assert.throws(() => reader.push(encodeAckCount(9)), /went back/);
    assert.throws(() => encodeAckCount(-1), /not a byte count/);
    assert.throws(() => encodeAckCount(0.5), /not a byte count/);
  });

  it('L_serve streams every byte of several files, an empty one among them, over loopback', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-serve-limit-test-'));
    try {
      const paths = [0, 1, 2].map((i) => join(dir, `f${i}`));
      writeFileSync(paths[0]!, Buffer.alloc(3 * 1024 * 1024 + 7, 1));
      writeFileSync(paths[1]!, Buffer.alloc(0));
      writeFileSync(paths[2]!, Buffer.alloc(1024, 2));
      const sample = await serveFilesOnce(paths);
      assert.equal(sample.details.bytes, 3 * 1024 * 1024 + 7 + 1024);
      assert.ok(sample.value > 0);
      await assert.rejects(serveFilesOnce([join(dir, 'missing')]), /ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads every byte of several files once, in chunks smaller and larger than a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-read-limit-test-'));
    try {
      const paths = [0, 1, 2].map((i) => join(dir, `f${i}`));
      writeFileSync(paths[0]!, Buffer.alloc(3 * 1024 + 7, 1));
      writeFileSync(paths[1]!, Buffer.alloc(0));
      writeFileSync(paths[2]!, Buffer.alloc(1024, 2));
      for (const chunk of [1000, 1 << 20]) {
        const read = await readFilesOnce(paths, chunk);
        assert.equal(read.bytes, 4 * 1024 + 7);
        assert.ok(read.seconds >= 0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('plans twice the dirty limit unless half the free disk or a byte cap is smaller', () => {
    assert.deepEqual(planAsyncBytes(10e9, 100e9, undefined), { bytes: 10e9, bound: 'target' });
    assert.deepEqual(planAsyncBytes(10e9, 8e9, undefined), { bytes: 4e9, bound: 'disk-space' });
    assert.deepEqual(planAsyncBytes(10e9, 8e9, 1e9), { bytes: 1e9, bound: 'bytes-max' });
    const dirty = readDirtyLimit();
    assert.ok(dirty.bytes > 0, `dirty limit ${dirty.bytes} from ${dirty.source}`);
  });

  it('finds the filesystem of a path as the longest mount point that contains it', () => {
    const mounts = [
      '/dev/vda / ext4 rw 0 0',
      'tmpfs /tmp tmpfs rw 0 0',
      'tmpfs /tmpx tmpfs rw 0 0',
      '/dev/vdb /mnt/my\\040disk xfs rw 0 0',
    ].join('\n');
    assert.equal(longestMountPrefix(mounts, '/tmp/a')?.fsType, 'tmpfs');
    assert.equal(longestMountPrefix(mounts, '/tmpfoo/a')?.fsType, 'ext4');
    assert.equal(longestMountPrefix(mounts, '/mnt/my disk/x')?.fsType, 'xfs');
  });
});
