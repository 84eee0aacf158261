// Group coordinator benchmark against a real broker process: the time for 50 members to settle a rebalance
// (every JoinGroup answered, the leader's assignment synced to all), first when they join and again when one
// leaves; and offset commits per second, one at a time and 64 in flight. The baseline measured in the same run
// is the round trip of an ApiVersions request on the same loopback connection: a rebalance is reported as a
// number of such round trips, and commits per second against round trips per second.

import { parseArgs } from 'node:util';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../../test/helpers/broker-process.js';
import { commitOffsets, waitForCoordinator } from '../../test/helpers/offset-commits.js';
import { WireClient } from '../../test/helpers/wire-client.js';
import { repeat, summarize } from '../harness/repeat.js';
import { ResultWriter } from '../harness/results.js';
import { formatTable } from '../harness/table.js';

const MEMBER_ID_REQUIRED = 79;

function joinBody(group: string, memberId: string) {
  return {
    groupId: group,
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }],
    reason: null,
  };
}

function syncBody(
  group: string,
  generationId: number,
  memberId: string,
  assignments: { memberId: string }[],
) {
  return {
    groupId: group,
    generationId,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: assignments.map((a) => ({
      memberId: a.memberId,
      assignment: Buffer.from(`for ${a.memberId}`),
    })),
  };
}

/** Every member joins (with the member id the coordinator issues) and syncs; answers the elapsed ms. */
async function rebalance(clients: WireClient[], group: string, memberIds: string[]): Promise<number> {
  const started = performance.now();
  for (const [i, c] of clients.entries()) c.send(ApiKey.JOIN_GROUP, 5, joinBody(group, memberIds[i]!));
  const joined = await Promise.all(clients.map((c) => c.receive()));
  const leader = joined.find((j) => j.members.length > 0);
  for (const [i, c] of clients.entries()) {
    const j = joined[i];
    memberIds[i] = j.memberId;
    c.send(ApiKey.SYNC_GROUP, 3, syncBody(group, j.generationId, j.memberId, j === leader ? j.members : []));
  }
  const synced = await Promise.all(clients.map((c) => c.receive()));
  if (synced.some((s) => s.errorCode !== 0)) throw new Error('a member failed to sync');
  return performance.now() - started;
}

async function settle(
  broker: BrokerProcess,
  members: number,
  group: string,
): Promise<{ join: number; leave: number }> {
  const clients = await Promise.all(
    Array.from({ length: members }, () => WireClient.connect(broker.host, broker.port)),
  );
  try {
    const memberIds = clients.map(() => '');
    // JoinGroup v4+ first answers MEMBER_ID_REQUIRED with an id to join with: collect those ids.
    for (const c of clients) c.send(ApiKey.JOIN_GROUP, 5, joinBody(group, ''));
    const first = await Promise.all(clients.map((c) => c.receive()));
    for (const [i, j] of first.entries()) {
      if (j.errorCode !== MEMBER_ID_REQUIRED) throw new Error(`unexpected join error ${j.errorCode}`);
      memberIds[i] = j.memberId;
    }
    const join = await rebalance(clients, group, memberIds);
    const leaving = clients.pop()!;
    await leaving.call(ApiKey.LEAVE_GROUP, 3, {
      groupId: group,
      memberId: '',
      members: [{ memberId: memberIds.pop()!, groupInstanceId: null, reason: null }],
    });
    leaving.close();
    const leave = await rebalance(clients, group, memberIds);
    return { join, leave };
  } finally {
    for (const c of clients) c.close();
  }
}

async function commitsPerSecond(client: WireClient, count: number, window: number): Promise<number> {
  return (count * 1000) / (await commitOffsets(client, 'bench-commits', 0, count, window));
}

async function roundTripMs(client: WireClient, count: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < count; i++)
    await client.call(ApiKey.API_VERSIONS, 3, { clientSoftwareName: 'bench', clientSoftwareVersion: '1' });
  return (performance.now() - started) / count;
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { members: { type: 'string' }, commits: { type: 'string' } },
  });
  const members = Number(values.members ?? 50);
  const commits = Number(values.commits ?? 2000);
  const writer = new ResultWriter({ bench: 'coordinator', args });
  const broker = await startBroker();
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    await waitForCoordinator(client, 'bench-commits');
    let group = 0;
    const rtt = summarize(await repeat(3, () => roundTripMs(client, 200)));
    const joins: number[] = [];
    const leaves: number[] = [];
    await repeat(3, async () => {
      const r = await settle(broker, members, `bench-group-${group++}`);
      joins.push(r.join);
      leaves.push(r.leave);
      return r.join;
    });
    const sequential = summarize(await repeat(3, () => commitsPerSecond(client, commits, 1)));
    const pipelined = summarize(await repeat(3, () => commitsPerSecond(client, commits, 64)));
    const join = summarize(joins);
    const leave = summarize(leaves);
    writer.figure('round_trip', 'ms', rtt);
    writer.figure('rebalance_join', 'ms', join, { members, inRoundTrips: join.median / rtt.median });
    writer.figure('rebalance_leave', 'ms', leave, {
      members: members - 1,
      inRoundTrips: leave.median / rtt.median,
    });
    writer.figure('commits_sequential', 'commits/s', sequential, {
      ratioToRoundTrips: (sequential.median * rtt.median) / 1000,
    });
    writer.figure('commits_pipelined', 'commits/s', pipelined, {
      ratioToRoundTrips: (pipelined.median * rtt.median) / 1000,
    });
    const row = (
      name: string,
      s: { median: number; min: number; max: number },
      unit: string,
      ratio: string,
    ) => [name, `${s.median.toFixed(1)} ${unit}`, `${s.min.toFixed(1)}-${s.max.toFixed(1)}`, ratio];
    console.log(
      formatTable(
        ['figure', 'median', 'range', 'vs round trip'],
        [
          row('ApiVersions round trip', rtt, 'ms', '1'),
          row(
            `rebalance of ${members} joining`,
            join,
            'ms',
            `${(join.median / rtt.median).toFixed(1)} round trips`,
          ),
          row(
            `rebalance of ${members - 1} after a leave`,
            leave,
            'ms',
            `${(leave.median / rtt.median).toFixed(1)} round trips`,
          ),
          row(
            'commits, one at a time',
            sequential,
            '/s',
            `${((sequential.median * rtt.median) / 1000).toFixed(2)} x round trips/s`,
          ),
          row(
            'commits, 64 in flight',
            pipelined,
            '/s',
            `${((pipelined.median * rtt.median) / 1000).toFixed(2)} x round trips/s`,
          ),
        ],
      ),
    );
    console.log(`results: ${writer.path}`);
  } finally {
    client.close();
    await broker.stop();
  }
}
