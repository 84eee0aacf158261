// `brook streams-application-reset`: Kafka's kafka-streams-application-reset.sh. With every instance of a
// Streams application stopped, it moves the application's committed offsets on its input topics (to the
// earliest offsets by default, or --to-latest / --to-offset / --to-datetime / --by-duration / --shift-by), moves
// its intermediate topics to their ends, and deletes its internal topics (`<application.id>-…-repartition` and
// `…-changelog`, or the ones --internal-topics names), so the application reprocesses its input from scratch.
// Local state is the application's to remove (KafkaStreams.cleanUp()), as in Kafka.

import { Admin } from '../client/admin.js';
import type { TopicPartition } from '../client/requests.js';
import { type ParsedArgs, UsageError } from './args.js';
import { clientOptions, err, newClient, out, runTool, type Tool } from './client-tool.js';

const tool: Tool = {
  name: 'streams-application-reset',
  summary: 'Reset a Kafka Streams application so that it reprocesses its input from scratch.',
  specs: {
    'application-id': {
      value: true,
      help: 'REQUIRED: the application.id (the consumer group) of the application.',
    },
    'input-topics': { value: true, repeat: true, help: 'Comma-separated input topics; offsets are reset.' },
    'intermediate-topics': {
      value: true,
      repeat: true,
      help: 'Comma-separated user topics written and read by the application; moved to their end.',
    },
    'internal-topics': {
      value: true,
      repeat: true,
      help: 'Comma-separated internal topics to delete (default: every repartition and changelog topic of the application).',
    },
    'to-earliest': { help: 'Reset input offsets to the earliest offset (the default).' },
    'to-latest': { help: 'Reset input offsets to the latest offset.' },
    'to-offset': { value: true, help: 'Reset input offsets to this offset.' },
    'to-datetime': { value: true, help: "Reset input offsets to this time: 'YYYY-MM-DDTHH:mm:SS.sss'." },
    'by-duration': { value: true, help: 'Reset input offsets to this long ago: PnDTnHnMnS.' },
    'shift-by': { value: true, help: 'Move the committed input offsets by this many (may be negative).' },
    'dry-run': { help: 'Only show what would be done.' },
    force: { help: 'Reset even if the group has active members (they are not removed: stop them first).' },
  },
  run,
};

export function runStreamsApplicationReset(args: string[]): Promise<number> {
  return runTool(tool, args);
}

function list(args: ParsedArgs, name: string): string[] {
  return args
    .all(name)
    .flatMap((v) => v.split(','))
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
}

/** ISO-8601 durations as Kafka's tool takes them (PnDTnHnMnS, fractional seconds allowed). */
function durationMs(text: string): number {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text);
  if (m === null || text === 'P' || text.endsWith('T')) throw new UsageError(`bad --by-duration '${text}'`);
  const [, d, h, min, s] = m;
  return ((Number(d ?? 0) * 24 + Number(h ?? 0)) * 60 + Number(min ?? 0)) * 60_000 + Number(s ?? 0) * 1000;
}

async function partitionsOf(admin: Admin, topics: string[]): Promise<TopicPartition[]> {
  if (topics.length === 0) return [];
  const out: TopicPartition[] = [];
  for (const d of await admin.describeTopics(topics)) {
    if (d.error !== null || d.partitions.length === 0)
      throw new UsageError(`Topic ${d.topic} does not exist`);
    for (const p of d.partitions) out.push({ topic: d.topic, partition: p.partition });
  }
  return out;
}

async function inputTargets(
  admin: Admin,
  args: ParsedArgs,
  group: string,
  tps: TopicPartition[],
): Promise<number[]> {
  const modes = ['to-earliest', 'to-latest', 'to-offset', 'to-datetime', 'by-duration', 'shift-by'].filter(
    (m) => args.has(m),
  );
  if (modes.length > 1) throw new UsageError(`Only one of --${modes.join(', --')} may be given`);
  const mode = modes[0] ?? 'to-earliest';
  const earliest = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'earliest' as const })));
  const latest = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const })));
  const clamp = (i: number, o: number) => Math.min(latest[i]!.offset, Math.max(earliest[i]!.offset, o));
  if (mode === 'to-earliest') return earliest.map((e) => e.offset);
  if (mode === 'to-latest') return latest.map((e) => e.offset);
  if (mode === 'to-offset') return tps.map((_, i) => clamp(i, args.int('to-offset')!));
  if (mode === 'to-datetime' || mode === 'by-duration') {
    const ms =
      mode === 'to-datetime'
        ? Date.parse(args.get('to-datetime')!)
        : Date.now() - durationMs(args.get('by-duration')!);
    if (Number.isNaN(ms)) throw new UsageError(`bad --to-datetime '${args.get('to-datetime')}'`);
    const at = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: ms })));
    return at.map((a, i) => (a.offset < 0 ? latest[i]!.offset : a.offset));
  }
  const committed = await admin.listConsumerGroupOffsets(group, tps);
  return tps.map((tp, i) => {
    const c = committed.find((x) => x.topic === tp.topic && x.partition === tp.partition);
    const from = c === undefined || c.offset < 0 ? latest[i]!.offset : c.offset;
    return clamp(i, from + args.int('shift-by')!);
  });
}

async function run(args: ParsedArgs): Promise<number> {
  const appId = args.required('application-id');
  const dryRun = args.has('dry-run');
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    const [group] = await admin.describeGroups([appId]);
    if (group !== undefined && group.members.length > 0 && !args.has('force')) {
      err(
        `ERROR: java.lang.IllegalStateException: Consumer group '${appId}' is still active and has following members: [${group.members.map((m) => m.memberId).join(', ')}]. Make sure to stop all running application instances before running the reset tool. You can use option '--force' to remove active members from the group.`,
      );
      return 1;
    }
    if (dryRun) out('----Dry run----');
    const inputs = list(args, 'input-topics');
    const inputTps = await partitionsOf(admin, inputs);
    if (inputs.length === 0) out('No input topics specified, skipping seek.');
    else {
      const targets = await inputTargets(admin, args, appId, inputTps);
      out(`Reset-offsets for input topics [${inputs.join(', ')}]`);
      out(`Following input topics offsets will be reset to (for consumer group ${appId})`);
      const plan = inputTps.map((tp, i) => ({ ...tp, offset: targets[i]! }));
      for (const p of plan) out(`Topic: ${p.topic} Partition: ${p.partition} Offset: ${p.offset}`);
      if (!dryRun) {
        for (const r of await admin.alterConsumerGroupOffsets(appId, plan))
          if (r.error !== null) {
            err(`ERROR: resetting ${r.topic}-${r.partition}: ${r.error.message}`);
            return 1;
          }
      }
      out('Done.');
    }
    const intermediate = list(args, 'intermediate-topics');
    if (intermediate.length > 0) {
      const tps = await partitionsOf(admin, intermediate);
      const latest = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const })));
      out(`Seek-to-end for intermediate topics [${intermediate.join(', ')}]`);
      const plan = tps.map((tp, i) => ({ ...tp, offset: latest[i]!.offset }));
      for (const p of plan) out(`Topic: ${p.topic} Partition: ${p.partition} Offset: ${p.offset}`);
      if (!dryRun) await admin.alterConsumerGroupOffsets(appId, plan);
      out('Done.');
    }
    const explicit = list(args, 'internal-topics');
    const prefix = `${appId}-`;
    const internal =
      explicit.length > 0
        ? explicit
        : (await admin.listTopics()).filter(
            (t) => t.startsWith(prefix) && (t.endsWith('-repartition') || t.endsWith('-changelog')),
          );
    for (const t of explicit)
      if (!t.startsWith(prefix))
        throw new UsageError(
          `Topic ${t} is not an internal topic of application ${appId} (it must start with ${prefix})`,
        );
    out(`Deleting inferred internal topics [${internal.join(', ')}]`);
    for (const t of internal) out(`Topic: ${t}`);
    if (!dryRun && internal.length > 0) {
      // The group's offsets on the internal topics go first: a topic created again under the same name must be
      // read from its beginning, not from where the deleted one was left.
      const committed = (await admin.listConsumerGroupOffsets(appId)).filter((o) =>
        internal.includes(o.topic),
      );
      if (committed.length > 0)
        await admin.deleteConsumerGroupOffsets(
          appId,
          committed.map((o) => ({ topic: o.topic, partition: o.partition })),
        );
      for (const r of await admin.deleteTopics(internal))
        if (r.error !== null && r.error.code !== 3 /* UNKNOWN_TOPIC_OR_PARTITION */) {
          err(`ERROR: deleting ${r.topic}: ${r.error.message}`);
          return 1;
        }
    }
    out('Done.');
    return 0;
  } finally {
    await admin.close();
  }
}
