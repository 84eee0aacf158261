// `brook topics`: Kafka's kafka-topics.sh. Create, list, describe, alter (partitions) and delete topics, with
// Kafka's option names and output lines; --json prints the same facts as JSON. A partition being reassigned is
// described with its adding and removing replicas, and its replication factor leaves out the removing ones.

import { Admin } from '../client/admin.js';
import { type ParsedArgs, UsageError } from './args.js';
import { clientOptions, err, newClient, out, runTool, type Tool } from './client-tool.js';
import { healthFields, partitionHealth } from './partition-health.js';
import { selfHealingTimeout } from './self-healing-report.js';

const tool: Tool = {
  name: 'topics',
  summary: 'Create, delete, describe, or change a topic.',
  specs: {
    create: { help: 'Create a new topic.' },
    list: { help: 'List all available topics.' },
    describe: { help: 'List details for the given topics.' },
    alter: { help: 'Alter the number of partitions of a topic.' },
    delete: { help: 'Delete a topic.' },
    topic: {
      value: true,
      help: 'The topic to create, alter, describe or delete (a regex for list and describe).',
    },
    partitions: { value: true, help: 'The number of partitions for the topic being created or altered.' },
    'replication-factor': {
      value: true,
      help: 'The replication factor for each partition in the topic being created.',
    },
    'replica-assignment': {
      value: true,
      help: 'A list of manual partition-to-broker assignments: 0:1,1:2,...',
    },
    config: { value: true, repeat: true, help: 'A topic configuration override: key=value (repeatable).' },
    'if-not-exists': { help: 'When creating, only create the topic if it does not exist.' },
    'if-exists': { help: 'When altering, describing or deleting, act only if the topic exists.' },
    'exclude-internal': { help: 'Exclude internal topics when listing or describing.' },
    'under-replicated-partitions': { help: 'When describing, only show under-replicated partitions.' },
    'unavailable-partitions': {
      help: 'When describing, only show partitions whose leader is not available.',
    },
    'under-min-isr-partitions': {
      help: 'When describing, only show partitions whose ISR count is less than the configured minimum.',
    },
    'at-min-isr-partitions': {
      help: 'When describing, only show partitions whose ISR count is equal to the configured minimum.',
    },
  },
  run,
};

export function runTopics(args: string[]): Promise<number> {
  return runTool(tool, args);
}

function topicFilter(args: ParsedArgs): ((name: string) => boolean) | null {
  const t = args.get('topic');
  if (t === undefined) return null;
  // Kafka treats --topic as a regex for list/describe/delete; a plain name matches itself.
  const re = new RegExp(`^(?:${t})$`);
  return (name) => name === t || re.test(name);
}

async function run(args: ParsedArgs): Promise<number> {
  const actions = ['create', 'list', 'describe', 'alter', 'delete'].filter((a) => args.has(a));
  if (actions.length !== 1) {
    throw new UsageError(
      'Command must include exactly one action: --list, --describe, --create, --alter or --delete',
    );
  }
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    switch (actions[0]) {
      case 'create':
        return await create(admin, args);
      case 'list':
        return await list(admin, args);
      case 'describe':
        return await describe(admin, args);
      case 'alter':
        return await alter(admin, args);
      default:
        return await remove(admin, args);
    }
  } finally {
    await admin.close();
  }
}

function parseAssignment(s: string): Record<number, number[]> {
  const out: Record<number, number[]> = {};
  s.split(',').forEach((replicas, partition) => {
    out[partition] = replicas.split(':').map((b) => {
      const n = Number(b);
      if (!Number.isInteger(n)) throw new UsageError(`bad broker id '${b}' in --replica-assignment`);
      return n;
    });
  });
  return out;
}

async function create(admin: Admin, args: ParsedArgs): Promise<number> {
  const topic = args.required('topic');
  const replicaAssignment = args.get('replica-assignment');
  const [r] = await admin.createTopics([
    {
      topic,
      numPartitions: args.int('partitions', -1),
      replicationFactor: args.int('replication-factor', -1),
      replicaAssignment: replicaAssignment === undefined ? undefined : parseAssignment(replicaAssignment),
      configs: args.pairs('config'),
    },
  ]);
  if (r!.error !== null) {
    if (r!.error.type === 'TOPIC_ALREADY_EXISTS' && args.has('if-not-exists')) return 0;
    err(`Error while executing topic command : ${r!.error.message}`);
    return 1;
  }
  if (args.has('json')) out(JSON.stringify({ topic, topicId: r!.topicId, created: true }));
  else out(`Created topic ${topic}.`);
  return 0;
}

async function list(admin: Admin, args: ParsedArgs): Promise<number> {
  const filter = topicFilter(args);
  const names = (await admin.listTopics({ listInternal: !args.has('exclude-internal') })).filter(
    (n) => filter === null || filter(n),
  );
  if (args.has('json')) out(JSON.stringify(names));
  else for (const n of names) out(n);
  return 0;
}

async function describe(admin: Admin, args: ParsedArgs): Promise<number> {
  const filter = topicFilter(args);
  const exact = args.get('topic');
  let names = (await admin.listTopics({ listInternal: !args.has('exclude-internal') })).filter(
    (n) => filter === null || filter(n),
  );
  if (names.length === 0 && exact !== undefined) {
    if (args.has('if-exists')) return 0;
    err(`Error while executing topic command : Topic '${exact}' does not exist as expected`);
    return 1;
  }
  names = names.sort();
  const topics = await admin.describeTopics(names);
  const configs = await admin.describeConfigs(names.map((name) => ({ type: 'topic' as const, name })));
  const moving = await reassignments(
    admin,
    topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.topic, partition: p.partition }))),
  );
  // Kafka's report filters: with none, every partition and the topic lines; with some, only the partitions that
  // at least one of them selects (TopicCommand's DescribeOptions), and no topic lines.
  const reports = {
    underReplicated: args.has('under-replicated-partitions'),
    unavailable: args.has('unavailable-partitions'),
    underMinIsr: args.has('under-min-isr-partitions'),
    atMinIsr: args.has('at-min-isr-partitions'),
  };
  const reporting = Object.values(reports).some((r) => r);
  const cluster = reporting ? await admin.describeCluster() : null;
  const live = new Set(cluster?.brokers.map((b) => b.nodeId) ?? []);
  const selfHealingTimeoutMs =
    cluster === null ? null : await selfHealingTimeout(admin, cluster.controllerId);
  const result = topics.map((t, i) => {
    const topicConfigs = configs[i]?.configs ?? [];
    const overrides = topicConfigs.filter((c) => c.source === 'DYNAMIC_TOPIC_CONFIG');
    // The configured value, not capped at the replication factor as the broker's checks and metrics are (Kafka
    // 3.7+): Kafka's TopicCommand reads it so, and so lists a one-replica topic under a minimum of 2.
    const minIsr = Number(topicConfigs.find((c) => c.name === 'min.insync.replicas')?.value ?? 1);
    const partitions = t.partitions
      .map((p) => {
        const reassignment = moving.get(`${t.topic}-${p.partition}`);
        const health = reporting
          ? partitionHealth(p, { live, minIsr, reassignment, selfHealingTimeoutMs })
          : null;
        return { ...p, reassignment, health };
      })
      .filter((p) => {
        if (!reporting) return true;
        const hasLeader = p.leader >= 0;
        return (
          (reports.underReplicated && p.isr.length < replicationFactor(p, p.reassignment)) ||
          (reports.unavailable && (!hasLeader || !live.has(p.leader))) ||
          (reports.underMinIsr && (!hasLeader || p.isr.length < minIsr)) ||
          (reports.atMinIsr && p.isr.length === minIsr)
        );
      });
    const first = t.partitions[0];
    const factor =
      first === undefined ? 0 : replicationFactor(first, moving.get(`${t.topic}-${first.partition}`));
    return { t, overrides, partitions, factor };
  });
  if (args.has('json')) {
    out(
      JSON.stringify(
        result.map(({ t, overrides, partitions, factor }) => ({
          topic: t.topic,
          topicId: t.topicId,
          partitionCount: t.partitions.length,
          replicationFactor: factor,
          configs: Object.fromEntries(overrides.map((c) => [c.name, c.value])),
          partitions: partitions.map((p) => ({
            partition: p.partition,
            leader: p.leader,
            replicas: p.replicas,
            isr: p.isr,
            ...(p.reassignment === undefined
              ? {}
              : {
                  addingReplicas: p.reassignment.addingReplicas,
                  removingReplicas: p.reassignment.removingReplicas,
                }),
            ...(p.health === null ? {} : { reason: p.health.reason, action: p.health.action }),
          })),
        })),
      ),
    );
    return 0;
  }
  for (const { t, overrides, partitions, factor } of result) {
    if (!reporting) {
      const cfg = overrides.map((c) => `${c.name}=${c.value}`).join(',');
      out(
        `Topic: ${t.topic}\tTopicId: ${t.topicId}\tPartitionCount: ${t.partitions.length}\tReplicationFactor: ${factor}\tConfigs: ${cfg}`,
      );
    }
    for (const p of partitions) out(partitionLine(t.topic, p, p.reassignment) + healthFields(p.health));
  }
  return 0;
}

interface Reassignment {
  addingReplicas: number[];
  removingReplicas: number[];
}

/** Reassignments in progress by "topic-partition"; none when the cluster cannot list them (as Kafka's tool). */
async function reassignments(
  admin: Admin,
  partitions: { topic: string; partition: number }[],
): Promise<Map<string, Reassignment>> {
  if (partitions.length === 0) return new Map();
  try {
    const listed = await admin.listPartitionReassignments(partitions);
    return new Map(listed.map((r) => [`${r.topic}-${r.partition}`, r]));
  } catch {
    return new Map();
  }
}

/** Kafka's replication factor of a partition: its replicas without those a reassignment is removing. */
export function replicationFactor(p: { replicas: number[] }, reassignment: Reassignment | undefined): number {
  return p.replicas.length - (reassignment?.removingReplicas.length ?? 0);
}

/** One partition as kafka-topics.sh --describe prints it. */
export function partitionLine(
  topic: string,
  p: { partition: number; leader: number; replicas: number[]; isr: number[] },
  reassignment: Reassignment | undefined,
): string {
  const moving =
    reassignment === undefined
      ? ''
      : `\tAdding Replicas: ${reassignment.addingReplicas.join(',')}\tRemoving Replicas: ${reassignment.removingReplicas.join(',')}`;
  return `\tTopic: ${topic}\tPartition: ${p.partition}\tLeader: ${p.leader < 0 ? 'none' : p.leader}\tReplicas: ${p.replicas.join(',')}\tIsr: ${p.isr.join(',')}${moving}`;
}

async function alter(admin: Admin, args: ParsedArgs): Promise<number> {
  const topic = args.required('topic');
  const count = args.int('partitions');
  if (count === undefined) throw new UsageError('--alter needs --partitions');
  const [r] = await admin.createPartitions([{ topic, count }]);
  if (r!.error !== null) {
    if (r!.error.type === 'UNKNOWN_TOPIC_OR_PARTITION' && args.has('if-exists')) return 0;
    err(`Error while executing topic command : ${r!.error.message}`);
    return 1;
  }
  if (args.has('json')) out(JSON.stringify({ topic, partitions: count }));
  return 0;
}

async function remove(admin: Admin, args: ParsedArgs): Promise<number> {
  const filter = topicFilter(args);
  if (filter === null) throw new UsageError('--delete needs --topic');
  const names = (await admin.listTopics({ listInternal: false })).filter(filter);
  if (names.length === 0) {
    if (args.has('if-exists')) return 0;
    err(`Error while executing topic command : Topic '${args.get('topic')}' does not exist as expected`);
    return 1;
  }
  const results = await admin.deleteTopics(names);
  let code = 0;
  for (const r of results) {
    if (r.error !== null) {
      err(`Error while executing topic command : ${r.topic}: ${r.error.message}`);
      code = 1;
    }
  }
  if (args.has('json'))
    out(JSON.stringify(results.map((r) => ({ topic: r.topic, error: r.error?.type ?? null }))));
  return code;
}
