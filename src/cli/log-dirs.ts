// `brook log-dirs` (kafka-log-dirs.sh --describe): asks brokers (all, or --broker-list) for their log directories
// and the partitions in them, and prints Kafka's three lines: "Querying brokers for log directories information",
// "Received log directory information from brokers 1,2", then one JSON line
// {"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"...","error":null,"partitions":[{"partition":"t-0",
// "size":N,"offsetLag":0,"isFuture":false}]}]}]}, the partitions narrowed to --topic-list when given.

import { Admin } from '../client/admin.js';
import { type ParsedArgs, UsageError } from './args.js';
import { clientOptions, newClient, out, runTool, type Tool } from './client-tool.js';

const tool: Tool = {
  name: 'log-dirs',
  summary: 'This tool helps to query log directory usage on the specified brokers.',
  specs: {
    describe: { help: 'REQUIRED: describe the log directories on the specified brokers.' },
    'broker-list': {
      value: true,
      help: 'The list of brokers to be queried in the form "0,1,2" (default: every broker of the cluster).',
    },
    'topic-list': {
      value: true,
      help: 'The list of topics to be queried in the form "topic1,topic2" (default: all topics).',
    },
  },
  run: logDirs,
};

export function runLogDirs(args: string[]): Promise<number> {
  return runTool(tool, args);
}

function commaList(text: string | undefined): string[] {
  return (text ?? '').split(',').filter((x) => x.length > 0);
}

/** The Java exception class Kafka's admin client reports a log directory's error as. */
function errorClass(type: string): string {
  const name = type === 'KAFKA_STORAGE_ERROR' ? 'KafkaStorage' : type;
  return `org.apache.kafka.common.errors.${name}Exception`;
}

async function logDirs(args: ParsedArgs): Promise<number> {
  if (args.get('bootstrap-server') === undefined)
    throw new UsageError('Missing required argument "[bootstrap-server]"');
  if (!args.has('describe')) throw new UsageError('Missing required argument "[describe]"');
  const topics = new Set(commaList(args.get('topic-list')));
  const asked = commaList(args.get('broker-list')).map((id) => {
    if (!/^\d+$/.test(id)) throw new UsageError(`--broker-list needs broker ids, got '${id}'`);
    return Number(id);
  });
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    const inCluster = (await admin.describeCluster()).brokers.map((b) => b.nodeId).sort((a, b) => a - b);
    const missing = asked.filter((id) => !inCluster.includes(id));
    if (missing.length > 0) {
      process.stderr.write(
        `ERROR: The given brokers do not exist from --broker-list: ${missing.join(',')}. Current existent brokers: ${inCluster.join(',')}\n`,
      );
      return 1;
    }
    const brokers = asked.length > 0 ? [...new Set(asked)] : inCluster;
    out('Querying brokers for log directories information');
    const dirs = await admin.describeLogDirs(brokers);
    out(`Received log directory information from brokers ${brokers.join(',')}`);
    const report = {
      version: 1,
      brokers: brokers.map((broker) => ({
        broker,
        logDirs: dirs
          .filter((d) => d.broker === broker)
          .map((d) => ({
            logDir: d.logDir,
            error: d.error === null ? null : errorClass(d.error.type),
            partitions: d.partitions
              .filter((p) => topics.size === 0 || topics.has(p.topic))
              .map((p) => ({
                partition: `${p.topic}-${p.partition}`,
                size: p.size,
                offsetLag: p.offsetLag,
                isFuture: p.isFuture,
              })),
          })),
      })),
    };
    out(JSON.stringify(report));
    return 0;
  } finally {
    await admin.close();
  }
}
