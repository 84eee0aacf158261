// `brook get-offsets` (kafka-get-offsets.sh) and `brook delete-records` (kafka-delete-records.sh).
//
// get-offsets prints topic:partition:offset for each partition at --time: -1 or latest, -2 or earliest,
// -3 or max-timestamp, or a timestamp in ms (the first offset at or after it). delete-records reads Kafka's
// offset JSON file {"partitions":[{"topic":"t","partition":0,"offset":5}],"version":1}.

import { readFileSync } from 'node:fs';
import { Admin, type OffsetSpec } from '../client/admin.js';
import { type ParsedArgs, UsageError } from './args.js';
import { clientOptions, err, newClient, out, runTool, type Tool } from './client-tool.js';

const getOffsetsTool: Tool = {
  name: 'get-offsets',
  summary: 'Print the offsets of topic partitions at a time: latest, earliest, max-timestamp or a timestamp.',
  specs: {
    topic: {
      value: true,
      help: 'The topic to get offsets for (a regular expression; all topics when omitted).',
    },
    partitions: { value: true, help: 'Comma-separated partition ids (default all).' },
    'topic-partitions': { value: true, help: 'topic:partition[,topic:partition] to get offsets for.' },
    time: {
      value: true,
      help: '-1 or latest (default), -2 or earliest, -3 or max-timestamp, or a timestamp in ms.',
    },
    'exclude-internal-topics': { help: 'Skip internal topics when --topic is a pattern.' },
  },
  run: getOffsets,
};

export function runGetOffsets(args: string[]): Promise<number> {
  return runTool(getOffsetsTool, args);
}

function parseTime(s: string): OffsetSpec {
  switch (s) {
    case '-1':
    case 'latest':
      return 'latest';
    case '-2':
    case 'earliest':
      return 'earliest';
    case '-3':
    case 'max-timestamp':
      return 'max-timestamp';
  }
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`bad --time '${s}'`);
  return n;
}

async function getOffsets(args: ParsedArgs): Promise<number> {
  const spec = parseTime(args.get('time') ?? 'latest');
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    const wanted: { topic: string; partition: number }[] = [];
    const tps = args.get('topic-partitions');
    if (tps !== undefined) {
      for (const item of tps.split(',')) {
        const m = /^(.+):(\d+)$/.exec(item.trim());
        if (m === null) throw new UsageError(`bad topic:partition '${item}'`);
        wanted.push({ topic: m[1]!, partition: Number(m[2]) });
      }
    } else {
      const pattern = args.get('topic');
      const names = (await admin.listTopics({ listInternal: !args.has('exclude-internal-topics') })).filter(
        (n) => pattern === undefined || n === pattern || new RegExp(`^(?:${pattern})$`).test(n),
      );
      if (names.length === 0 && pattern !== undefined) {
        err(`Error: topic '${pattern}' does not exist`);
        return 1;
      }
      const only = args.get('partitions')?.split(',').map(Number);
      for (const t of await admin.describeTopics(names)) {
        for (const p of t.partitions) {
          if (only === undefined || only.includes(p.partition))
            wanted.push({ topic: t.topic, partition: p.partition });
        }
      }
    }
    const answers = await admin.listOffsets(wanted.map((w) => ({ ...w, spec })));
    if (args.has('json')) {
      out(JSON.stringify(answers.map((a) => ({ topic: a.topic, partition: a.partition, offset: a.offset }))));
    } else {
      for (const a of answers) out(`${a.topic}:${a.partition}:${a.offset < 0 ? '' : a.offset}`);
    }
    return 0;
  } finally {
    await admin.close();
  }
}

const deleteRecordsTool: Tool = {
  name: 'delete-records',
  summary: 'Delete records of the given partitions up to the given offsets.',
  specs: {
    'offset-json-file': {
      value: true,
      help: 'REQUIRED: JSON file with the offsets: {"partitions":[{"topic":"foo","partition":1,"offset":1}],"version":1}',
    },
  },
  run: deleteRecords,
};

export function runDeleteRecords(args: string[]): Promise<number> {
  return runTool(deleteRecordsTool, args);
}

/** The partitions (as topic-partition) that `requests` names more than once, each once. */
function duplicatePartitions(requests: readonly { topic: string; partition: number }[]): string[] {
  // Keyed partition first: "topic-partition" alone would mix up topic "a-" partition 1 with "a" partition -1.
  const seen = new Set<string>();
  const duplicates = new Map<string, string>();
  for (const r of requests) {
    const key = `${r.partition}/${r.topic}`;
    if (seen.has(key)) duplicates.set(key, `${r.topic}-${r.partition}`);
    seen.add(key);
  }
  return [...duplicates.values()];
}

async function deleteRecords(args: ParsedArgs): Promise<number> {
  const file = args.required('offset-json-file');
  let parsed: { partitions?: { topic?: unknown; partition?: unknown; offset?: unknown }[] };
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    err(`Error: cannot read ${file}: ${(e as Error).message}`);
    return 1;
  }
  const requests = (parsed.partitions ?? []).map((p) => {
    if (typeof p.topic !== 'string' || !Number.isInteger(p.partition) || !Number.isInteger(p.offset)) {
      throw new UsageError(`bad entry in ${file}: ${JSON.stringify(p)}`);
    }
    return { topic: p.topic, partition: p.partition as number, offset: p.offset as number };
  });
  if (requests.length === 0) throw new UsageError(`${file} names no partitions`);
  // As Kafka's DeleteRecordsCommand: a partition named twice has no one offset to delete to; nothing is sent.
  const duplicates = duplicatePartitions(requests);
  if (duplicates.length > 0) {
    err(`Offset json file contains duplicate topic partitions: ${duplicates.join(',')}`);
    return 1;
  }
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    if (!args.has('json')) out('Executing records delete operation');
    const results = await admin.deleteRecords(requests);
    let code = 0;
    if (args.has('json')) {
      out(
        JSON.stringify(
          results.map((r) => ({
            topic: r.topic,
            partition: r.partition,
            lowWatermark: r.lowWatermark,
            error: r.error?.type ?? null,
          })),
        ),
      );
    } else {
      out('Records delete operation completed:');
    }
    for (const r of results) {
      if (r.error !== null) code = 1;
      if (args.has('json')) continue;
      if (r.error === null) out(`partition: ${r.topic}-${r.partition}\tlow_watermark: ${r.lowWatermark}`);
      else out(`partition: ${r.topic}-${r.partition}\terror: ${r.error.message}`);
    }
    return code;
  } finally {
    await admin.close();
  }
}
