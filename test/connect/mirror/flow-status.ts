// What a dedicated-mode flow's Connect workers report, read from the flow's status topic on the target
// (`mm2-status.<source>.internal`): the latest state and worker id of every connector and task. Shared by the
// multi-process tests.

import assert from 'node:assert/strict';
import { Admin, Consumer } from '../../../src/client/index.js';
import { sleep } from '../../helpers/wait.js';
import { type MirrorProcess, startMirrorMaker } from './mirror-process.js';

export interface UnitStatus {
  state: string;
  worker: string;
}

/** Polls an async condition every 250 ms until it holds, failing after `timeoutMs` with `describe()`. */
export async function waitFor(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting:\n${describe()}`);
    await sleep(250);
  }
}

/**
 * The latest status of every connector and task of the flow from `source`, keyed as Connect keys them
 * (`status-connector-<name>`, `status-task-<name>-<n>`); empty while the topic does not exist yet.
 */
export async function flowStatuses(bootstrap: string, source = 'A'): Promise<Map<string, UnitStatus>> {
  const topic = `mm2-status.${source}.internal`;
  const admin = new Admin({ bootstrapServers: bootstrap });
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    enableAutoCommit: false,
    autoOffsetReset: 'earliest',
  });
  const out = new Map<string, UnitStatus>();
  try {
    const partitions = (await admin.describeTopics([topic]))[0]?.partitions.length ?? 0;
    if (partitions === 0) return out;
    const tps = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    const ends = await consumer.endOffsets(tps);
    consumer.assign(tps);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const positions = await Promise.all(tps.map((tp) => consumer.position(tp)));
      if (positions.every((p, i) => p >= ends.find((e) => e.partition === i)!.offset)) break;
      if (Date.now() > deadline) break;
      for (const r of await consumer.poll(300)) {
        const key = r.key?.toString() ?? '';
        if (!key.startsWith('status-')) continue;
        if (r.value === null) out.delete(key);
        else {
          const v = JSON.parse(r.value.toString()) as { state: string; worker_id: string };
          out.set(key, { state: v.state, worker: v.worker_id });
        }
      }
    }
  } catch {
    return out;
  } finally {
    await consumer.close();
    await admin.close();
  }
  return out;
}

/** The statuses whose key starts with `prefix` (`status-task-MirrorSourceConnector-`, ...). */
export function withPrefix(s: Map<string, UnitStatus>, prefix: string): Map<string, UnitStatus> {
  return new Map([...s].filter(([k]) => k.startsWith(prefix)));
}

export function describeStatuses(s: Map<string, UnitStatus>): string {
  return [...s].map(([k, v]) => `${k}: ${v.state} on ${v.worker}`).join('\n');
}

/** The worker id a process's flow runs under, from its output: its internal REST address and the flow. */
export function workerId(output: string, flow = 'A->B'): string {
  const match = /Internal REST server listening at https?:\/\/([^/]+)\//.exec(output);
  if (match === null) throw new Error(`no internal REST address in the output:\n${output}`);
  return `${match[1]}/${flow}`;
}

/**
 * Starts two processes of the flow in `file` as the multi-process tests need them: the second only once the
 * first runs all `tasks` MirrorSourceConnector tasks and the heartbeat task, so that its join is a pure
 * balancing round. Both go into `mirrors` (stopped after the file); their worker ids differ.
 */
export async function startTwoProcesses(
  file: string,
  targetBootstrap: string,
  tasks: number,
  mirrors: MirrorProcess[],
): Promise<{ first: MirrorProcess; second: MirrorProcess; ids: [string, string] }> {
  const first = await startMirrorMaker(file);
  mirrors.push(first);
  let statuses = new Map<string, UnitStatus>();
  await waitFor(
    async () => {
      statuses = await flowStatuses(targetBootstrap);
      const running = [...statuses].filter(([, s]) => s.state === 'RUNNING').map(([k]) => k);
      return (
        running.filter((k) => k.startsWith('status-task-MirrorSourceConnector-')).length === tasks &&
        running.includes('status-task-MirrorHeartbeatConnector-0')
      );
    },
    120_000,
    () => `the first process never ran every task:\n${describeStatuses(statuses)}\n${first.output()}`,
  );
  const second = await startMirrorMaker(file);
  mirrors.push(second);
  const ids: [string, string] = [workerId(first.output()), workerId(second.output())];
  assert.notEqual(ids[0], ids[1]);
  return { first, second, ids };
}
