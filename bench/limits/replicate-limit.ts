// L_replicate: the data path of a partition with three replicas on this machine, without any protocol; the limit
// issue 21 reads rf=3 acks=all produce against, as it reads single-node produce against L_sink. Four processes,
// as in the cluster benchmark (the load generator and three brokers): this process writes 256 KiB buffers on one
// loopback connection to a forked leader (relay-process.ts), which appends every chunk it receives to a file in
// the page cache and forwards it on a connection to each of two forked followers (net-sink.ts given a
// directory), which append it to files of their own. Per byte produced the kernel copies it seven times (send,
// receive, page cache, and send, receive, page cache for each follower) where L_sink copies it three times, on
// the same two cores.
//
// The figure is the bytes produced per second, from the first write until both followers have appended the last
// byte: the unit of the cluster benchmark's wire MB/s. A broker's acks=all round trip (the followers' fetches,
// the acknowledgements) is not here: back-pressure through the sockets bounds what is in flight instead, so
// this is a ceiling for throughput, not a model of its latency. L_replicate / L_sink, from the same minutes, is
// the highest ratio of rf=3 to single-node produce any broker could reach here.
//
// L_replicate_acked adds the acks=all round trip and the producer's window: the same four processes, but the
// producer sends requests of a fixed size with at most a fixed number unacknowledged (the cluster benchmark's
// generator: 128 KiB, 5 in flight), each follower answers every append with its appended byte count, and the leader
// tells the producer how far it and both followers have appended, as a leader answers acks=all once its high
// watermark passes a request. The hops are a broker's (produce, leader append, follower append, the follower's word
// back, the answer); nothing else is. When what is in flight, not the cores, bounds a cell (one partition: 640 KiB
// over a round trip of a few ms), this is the limit it is read against. It also gives the bare round trip's latency
// under that load.
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assert } from '../../src/common/assert.js';
import { type ProcessWatch, watchProcess } from '../harness/process-usage.js';
import { megabytesPerSecond } from '../harness/ratio.js';
import { formatFigure } from '../harness/table.js';
import { type AckedSending, onePartitionWindow, roundTripNote, sendLoad } from './acked-send.js';
import { megabytesPerCpuSecondRange, nextMessage, stopHelper } from './loopback.js';
import type { SinkMessage } from './net-sink.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';
import type { RelayMessage } from './relay-process.js';

const relayModule = fileURLToPath(new URL('./relay-process.js', import.meta.url));
const sinkModule = fileURLToPath(new URL('./net-sink.js', import.meta.url));

/** A forked helper in its own folder of the repetition's directory, watched from its start. */
interface Replica {
  child: ChildProcess;
  usage: ProcessWatch;
}

function forkReplica(module: string, dir: string, args: string[]): Replica {
  mkdirSync(dir);
  const child = fork(module, [dir, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  assert(child.pid !== undefined, `forked ${module} has no pid`);
  return { child, usage: watchProcess(child.pid) };
}

/**
 * One repetition of L_replicate, or given how to send acknowledged requests of L_replicate_acked; the replicas'
 * files go into folders of the repetition's directory.
 */
export async function measureReplicateOnce(
  context: LimitContext,
  acked?: AckedSending,
): Promise<LimitSample> {
  const replicas: Replica[] = [];
  let socket: Socket | undefined;
  const ackArgs = acked === undefined ? [] : ['--ack'];
  try {
    const followers = [1, 2].map((i) =>
      forkReplica(sinkModule, join(context.workDir, `follower-${i}`), ackArgs),
    );
    replicas.push(...followers);
    const followerPorts = await Promise.all(
      followers.map((f) => nextMessage<SinkMessage, 'listening'>(f.child, 'listening', 'follower')),
    );
    const leader = forkReplica(relayModule, join(context.workDir, 'leader'), [
      ...ackArgs,
      ...followerPorts.map((p) => String(p.port)),
    ]);
    replicas.push(leader);
    const { inputPort } = await nextMessage<RelayMessage, 'listening'>(leader.child, 'listening', 'leader');
    socket = connect({ host: '127.0.0.1', port: inputPort, noDelay: true });
    await once(socket, 'connect');
    // The replicas' CPU counts from here: their start-up is not the data path's.
    const watched = [leader, ...followers];
    const before = watched.map((r) => r.usage.current());
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const {
      bytes: sent,
      acknowledgedAtMs,
      details: load,
    } = await sendLoad(socket, start + context.durationMs, acked);
    socket.end();
    // Only now (see nextMessage): the report follows the end, and no event comes between end() and this line.
    const relayed = nextMessage<RelayMessage, 'relayed'>(leader.child, 'relayed', 'leader');
    relayed.catch(() => {}); // awaited after the followers; a rejection meanwhile must not surface as unhandled
    // A follower reports when the leader ends its connection, after its own input ended.
    const received = await Promise.all(
      followers.map((f) => nextMessage<SinkMessage, 'received'>(f.child, 'received', 'follower')),
    );
    // Acknowledged, every byte was appended by both followers when the last acknowledgement came: the end of the
    // connections after it is not the data path's time.
    const seconds = ((acknowledgedAtMs ?? performance.now()) - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const [leaderUsage, ...followerUsage] = watched.map((r, i) => {
      const after = r.usage.stop();
      return {
        cpuSeconds: after.cpuSeconds - before[i]!.cpuSeconds,
        systemSeconds: after.systemSeconds - before[i]!.systemSeconds,
      };
    });
    const leaderWritten = (await relayed).bytes;
    assert(leaderWritten === sent, `leader wrote ${leaderWritten} bytes to its file of ${sent} sent`);
    for (const r of received) {
      assert(r.bytes === sent, `a follower received ${r.bytes} bytes of ${sent} sent`);
      assert(r.bytesWritten === sent, `a follower wrote ${r.bytesWritten} bytes of ${sent} sent`);
    }
    return {
      value: megabytesPerSecond(sent, seconds),
      details: {
        bytes: sent,
        seconds,
        ...load,
        bytesWrittenByReplica: [leaderWritten, ...received.map((r) => r.bytesWritten)],
        producerCpuSeconds: (cpu.user + cpu.system) / 1e6,
        leaderCpuSeconds: leaderUsage!.cpuSeconds,
        leaderSystemCpuSeconds: leaderUsage!.systemSeconds,
        followerCpuSeconds: followerUsage.map((u) => u.cpuSeconds),
        followerSystemCpuSeconds: followerUsage.map((u) => u.systemSeconds),
        replicasCpuSeconds: [leaderUsage!, ...followerUsage].reduce((a, u) => a + u.cpuSeconds, 0),
      },
    };
  } finally {
    socket?.destroy();
    for (const r of replicas) r.usage.stop();
    await Promise.all(replicas.map((r) => stopHelper(r.child)));
  }
}

function replicasNote(details: readonly Record<string, unknown>[]): string {
  const cores = details.map((d) => (d.replicasCpuSeconds as number) / (d.seconds as number));
  return (
    `three replicas ${megabytesPerCpuSecondRange(details, 'replicasCpuSeconds')} MB per CPU-second, ` +
    `${formatFigure(Math.min(...cores))}-${formatFigure(Math.max(...cores))} cores`
  );
}

export const replicateLimit: LimitDefinition = {
  name: 'L_replicate',
  unit: 'MB/s',
  description: 'produce through a leader to two followers, each appending to the page cache, no protocol',
  measureOnce: (context) => measureReplicateOnce(context),
  note: replicasNote,
};

export const replicateAckedLimit: LimitDefinition = {
  name: 'L_replicate_acked',
  unit: 'MB/s',
  description:
    'L_replicate acknowledged once both followers appended, 5 requests of 128 KiB in flight (acks=all, one partition)',
  measureOnce: (context) => measureReplicateOnce(context, { window: onePartitionWindow }),
  note: (details) => `${replicasNote(details)}; ${roundTripNote(details)}`,
};
