// `brook consumer-groups`: Kafka's kafka-consumer-groups.sh. List groups; describe offsets and lag per partition,
// members, or state; reset offsets (to earliest, latest, an offset, a datetime, or shifted) with --dry-run or
// --execute; delete groups and their offsets.

import { Admin, type GroupDescription } from '../client/admin.js';
import type { TopicPartition } from '../client/requests.js';
import { type ParsedArgs, UsageError } from './args.js';
import { clientOptions, err, newClient, out, runTool, type Tool, table } from './client-tool.js';
import { Progress } from './progress.js';

const tool: Tool = {
  name: 'consumer-groups',
  summary: 'List, describe, reset the offsets of, or delete consumer groups.',
  specs: {
    list: { help: 'List all consumer groups.' },
    describe: { help: 'Describe a consumer group: offsets and lag (default), --members, or --state.' },
    'reset-offsets': { help: 'Reset the offsets of a group (with --dry-run, the default, or --execute).' },
    delete: { help: 'Delete a consumer group.' },
    'delete-offsets': { help: 'Delete the committed offsets of a group for --topic.' },
    group: { value: true, repeat: true, help: 'The consumer group (repeatable).' },
    'all-groups': { help: 'Apply to all groups.' },
    topic: { value: true, repeat: true, help: 'topic or topic:0,1 to reset (repeatable).' },
    'all-topics': { help: 'Reset every topic the group has offsets for.' },
    members: { help: 'Describe the members of the group.' },
    state: { help: 'Describe the state of the group.' },
    offsets: { help: 'Describe offsets and lag (the default).' },
    'to-earliest': { help: 'Reset to the earliest offset.' },
    'to-latest': { help: 'Reset to the latest offset.' },
    'to-current': { help: 'Reset to the committed offset.' },
    'to-offset': { value: true, help: 'Reset to this offset.' },
    'to-datetime': {
      value: true,
      help: "Reset to the first offset at or after this time: 'YYYY-MM-DDTHH:mm:SS.sss'.",
    },
    'shift-by': { value: true, help: 'Move the committed offsets by this many (may be negative).' },
    'dry-run': { help: 'Only show what a reset would do (default).' },
    execute: { help: 'Apply the reset.' },
  },
  run,
};

export function runConsumerGroups(args: string[]): Promise<number> {
  return runTool(tool, args);
}

async function run(args: ParsedArgs): Promise<number> {
  const actions = ['list', 'describe', 'reset-offsets', 'delete', 'delete-offsets'].filter((a) =>
    args.has(a),
  );
  if (actions.length !== 1) {
    throw new UsageError(
      'Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets',
    );
  }
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    if (args.has('list')) {
      const groups = await admin.listGroups();
      if (args.has('json')) out(JSON.stringify(groups));
      else if (args.has('state'))
        out(
          table(
            ['GROUP', 'STATE'],
            groups.map((g) => [g.groupId, g.state]),
          ),
        );
      else for (const g of groups) out(g.groupId);
      return 0;
    }
    let groups = args.all('group');
    if (args.has('all-groups')) groups = (await admin.listGroups()).map((g) => g.groupId);
    if (groups.length === 0) throw new UsageError('--group or --all-groups is required');
    if (args.has('describe')) return await describe(admin, args, groups);
    if (args.has('reset-offsets')) return await reset(admin, args, groups);
    if (args.has('delete')) {
      let code = 0;
      for (const r of await admin.deleteGroups(groups)) {
        if (r.error === null) out(`Deletion of requested consumer groups ('${r.groupId}') was successful.`);
        else {
          err(`Error: Deletion of group '${r.groupId}' failed: ${r.error.message}`);
          code = 1;
        }
      }
      return code;
    }
    const tps = await topicPartitions(admin, args, groups[0]!);
    let code = 0;
    for (const r of await admin.deleteConsumerGroupOffsets(groups[0]!, tps)) {
      if (r.error !== null) code = 1;
      out(`${r.topic} ${r.partition} ${r.error === null ? 'Successful' : `Error: ${r.error.message}`}`);
    }
    return code;
  } finally {
    await admin.close();
  }
}

async function describe(admin: Admin, args: ParsedArgs, groups: string[]): Promise<number> {
  const descriptions = await admin.describeGroups(groups);
  const json: unknown[] = [];
  let code = 0;
  for (const d of descriptions) {
    if (d.error !== null || d.state === 'Dead') {
      err(`Error: Consumer group '${d.groupId}' does not exist.`);
      code = 1;
      continue;
    }
    if (args.has('state')) {
      const row = [d.groupId, `${d.coordinator}`, d.protocol, d.state, d.members.length];
      if (args.has('json'))
        json.push({
          group: d.groupId,
          coordinator: d.coordinator,
          assignmentStrategy: d.protocol,
          state: d.state,
          members: d.members.length,
        });
      else
        out(`\n${table(['GROUP', 'COORDINATOR (ID)', 'ASSIGNMENT-STRATEGY', 'STATE', '#MEMBERS'], [row])}`);
      continue;
    }
    if (args.has('members')) {
      const rows = d.members.map((m) => [
        d.groupId,
        m.memberId,
        m.clientHost,
        m.clientId,
        m.assignment.length,
      ]);
      if (args.has('json')) json.push({ group: d.groupId, members: d.members });
      else out(`\n${table(['GROUP', 'CONSUMER-ID', 'HOST', 'CLIENT-ID', '#PARTITIONS'], rows)}`);
      continue;
    }
    const rows = await lagRows(admin, d);
    if (args.has('json')) json.push({ group: d.groupId, state: d.state, partitions: rows });
    else {
      if (d.state === 'Empty') out(`\nConsumer group '${d.groupId}' has no active members.`);
      out(
        `\n${table(
          [
            'GROUP',
            'TOPIC',
            'PARTITION',
            'CURRENT-OFFSET',
            'LOG-END-OFFSET',
            'LAG',
            'CONSUMER-ID',
            'HOST',
            'CLIENT-ID',
          ],
          rows.map((r) => [
            d.groupId,
            r.topic,
            r.partition,
            r.currentOffset ?? '-',
            r.logEndOffset,
            r.lag ?? '-',
            r.consumerId,
            r.host,
            r.clientId,
          ]),
        )}`,
      );
    }
  }
  if (args.has('json')) out(JSON.stringify(json));
  return code;
}

async function lagRows(admin: Admin, d: GroupDescription) {
  const committed = await admin.listConsumerGroupOffsets(d.groupId);
  const owner = new Map<string, GroupDescription['members'][number]>();
  for (const m of d.members) for (const tp of m.assignment) owner.set(`${tp.topic}:${tp.partition}`, m);
  const keys = new Map<string, TopicPartition>();
  for (const c of committed) keys.set(`${c.topic}:${c.partition}`, c);
  for (const m of d.members) for (const tp of m.assignment) keys.set(`${tp.topic}:${tp.partition}`, tp);
  const tps = [...keys.values()].sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
  );
  const ends =
    tps.length === 0 ? [] : await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const })));
  return tps.map((tp, i) => {
    const c = committed.find((x) => x.topic === tp.topic && x.partition === tp.partition);
    const current = c === undefined || c.offset < 0 ? null : c.offset;
    const end = ends[i]!.offset;
    const m = owner.get(`${tp.topic}:${tp.partition}`);
    return {
      topic: tp.topic,
      partition: tp.partition,
      currentOffset: current,
      logEndOffset: end,
      lag: current === null ? null : Math.max(0, end - current),
      consumerId: m?.memberId ?? '-',
      host: m?.clientHost ?? '-',
      clientId: m?.clientId ?? '-',
    };
  });
}

async function topicPartitions(admin: Admin, args: ParsedArgs, group: string): Promise<TopicPartition[]> {
  if (args.has('all-topics')) return admin.listConsumerGroupOffsets(group);
  const specs = args.all('topic');
  if (specs.length === 0) throw new UsageError('--topic or --all-topics is required');
  const out: TopicPartition[] = [];
  for (const spec of specs) {
    const [topic, list] = spec.split(':') as [string, string | undefined];
    if (list !== undefined) {
      for (const p of list.split(',')) out.push({ topic, partition: Number(p) });
      continue;
    }
    const [d] = await admin.describeTopics([topic]);
    if (d!.error !== null) throw new UsageError(`topic '${topic}' does not exist`);
    for (const p of d!.partitions) out.push({ topic, partition: p.partition });
  }
  return out;
}

async function reset(admin: Admin, args: ParsedArgs, groups: string[]): Promise<number> {
  const modes = ['to-earliest', 'to-latest', 'to-current', 'to-offset', 'to-datetime', 'shift-by'].filter(
    (m) => args.has(m),
  );
  if (modes.length !== 1)
    throw new UsageError(
      'Exactly one reset scenario is required: --to-earliest, --to-latest, --to-current, --to-offset, --to-datetime, --shift-by',
    );
  const json: unknown[] = [];
  // Over thousands of partitions a reset takes a while; a terminal is told which stage it is in.
  const progress = new Progress();
  try {
    for (const group of groups) {
      progress.update(`${group}: describing the group`, true);
      const [d] = await admin.describeGroups([group]);
      if (args.has('execute') && d !== undefined && d.members.length > 0) {
        progress.clear();
        err(
          `Error: Assignments can only be reset if the group '${group}' is inactive, but the current state is ${d.state}.`,
        );
        return 1;
      }
      const tps = await topicPartitions(admin, args, group);
      progress.update(`${group}: reading the offsets of ${tps.length} partitions`, true);
      const earliest = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'earliest' as const })));
      const latest = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const })));
      const committed = await admin.listConsumerGroupOffsets(group, tps);
      const clamp = (i: number, o: number) => Math.min(latest[i]!.offset, Math.max(earliest[i]!.offset, o));
      let targets: number[];
      const mode = modes[0]!;
      if (mode === 'to-earliest') targets = earliest.map((e) => e.offset);
      else if (mode === 'to-latest') targets = latest.map((e) => e.offset);
      else if (mode === 'to-offset') targets = tps.map((_, i) => clamp(i, args.int('to-offset')!));
      else if (mode === 'to-datetime') {
        const ms = Date.parse(args.get('to-datetime')!);
        if (Number.isNaN(ms)) throw new UsageError(`bad --to-datetime '${args.get('to-datetime')}'`);
        const at = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: ms })));
        targets = at.map((a, i) => (a.offset < 0 ? latest[i]!.offset : a.offset));
      } else {
        const current = tps.map((tp, i) => {
          const c = committed.find((x) => x.topic === tp.topic && x.partition === tp.partition);
          return c === undefined || c.offset < 0 ? latest[i]!.offset : c.offset;
        });
        const shift = mode === 'shift-by' ? args.int('shift-by')! : 0;
        targets = current.map((c, i) => clamp(i, c + shift));
      }
      const plan = tps.map((tp, i) => ({ ...tp, offset: targets[i]! }));
      if (args.has('execute')) {
        progress.update(`${group}: committing ${plan.length} offsets`, true);
        const results = await admin.alterConsumerGroupOffsets(group, plan);
        progress.clear();
        for (const r of results) {
          if (r.error !== null) {
            err(`Error: resetting ${r.topic}-${r.partition} of '${group}' failed: ${r.error.message}`);
            return 1;
          }
        }
      }
      progress.clear();
      if (args.has('json')) json.push({ group, offsets: plan, executed: args.has('execute') });
      else
        out(
          `\n${table(
            ['GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET'],
            plan.map((p) => [group, p.topic, p.partition, p.offset]),
          )}`,
        );
    }
  } finally {
    // Every way out of the loop, an early error return included, leaves a clean line.
    progress.clear();
  }
  if (args.has('json')) out(JSON.stringify(json));
  return 0;
}
