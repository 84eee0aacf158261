// The keys every connector config has, with Kafka Connect's names, defaults, groups and messages
// (ConnectorConfig, SourceConnectorConfig, SinkConnectorConfig), and what is built from them: the converters
// and the transform chain of a task.

import {
  ConfigDef,
  type ConfigValue,
  nonEmptyString,
  nonEmptyStringWithoutControlChars,
  oneOf,
  range,
} from '../api/config-def.js';
import { type Converter, withPrefixStripped } from '../converters/converter.js';
import { ConfigException } from '../errors.js';
import { TransformChain, type TransformStep } from '../transforms/transformation.js';
import type { Plugins } from './plugins.js';

const COMMON = 'Common';
const TRANSFORMS = 'Transforms';
const PREDICATES = 'Predicates';
const ERRORS = 'Error Handling';

export function commonConnectorDef(): ConfigDef {
  return new ConfigDef()
    .define({
      name: 'name',
      type: 'STRING',
      validator: nonEmptyStringWithoutControlChars,
      importance: 'HIGH',
      documentation: 'Globally unique name to use for this connector.',
      group: COMMON,
      orderInGroup: 1,
      width: 'MEDIUM',
      displayName: 'Connector name',
    })
    .define({
      name: 'connector.class',
      type: 'STRING',
      importance: 'HIGH',
      documentation: 'Name or alias of the class for this connector.',
      group: COMMON,
      orderInGroup: 2,
      width: 'LONG',
      displayName: 'Connector class',
    })
    .define({
      name: 'tasks.max',
      type: 'INT',
      defaultValue: 1,
      validator: range(1),
      importance: 'HIGH',
      documentation: 'Maximum number of tasks to use for this connector.',
      group: COMMON,
      orderInGroup: 3,
      width: 'SHORT',
      displayName: 'Tasks max',
    })
    .define({
      name: 'key.converter',
      type: 'CLASS',
      defaultValue: null,
      importance: 'LOW',
      documentation:
        'Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka.',
      group: COMMON,
      orderInGroup: 5,
      width: 'SHORT',
      displayName: 'Key converter class',
    })
    .define({
      name: 'value.converter',
      type: 'CLASS',
      defaultValue: null,
      importance: 'LOW',
      documentation:
        'Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka.',
      group: COMMON,
      orderInGroup: 6,
      width: 'SHORT',
      displayName: 'Value converter class',
    })
    .define({
      name: 'header.converter',
      type: 'CLASS',
      defaultValue: null,
      importance: 'LOW',
      documentation:
        'HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka.',
      group: COMMON,
      orderInGroup: 7,
      width: 'SHORT',
      displayName: 'Header converter class',
    })
    .define({
      name: 'config.action.reload',
      type: 'STRING',
      defaultValue: 'restart',
      validator: oneOf(['none', 'restart'], true),
      importance: 'LOW',
      documentation:
        "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties.",
      group: COMMON,
      orderInGroup: 8,
      width: 'MEDIUM',
      displayName: 'Reload Action',
    })
    .define({
      name: 'transforms',
      type: 'LIST',
      defaultValue: '',
      importance: 'LOW',
      documentation: 'Aliases for the transformations to be applied to records.',
      group: TRANSFORMS,
      orderInGroup: 1,
      width: 'LONG',
      displayName: 'Transforms',
    })
    .define({
      name: 'predicates',
      type: 'LIST',
      defaultValue: '',
      importance: 'LOW',
      documentation: 'Aliases for the predicates used by transformations.',
      group: PREDICATES,
      orderInGroup: 1,
      width: 'LONG',
      displayName: 'Predicates',
    })
    .define({
      name: 'errors.retry.timeout',
      type: 'LONG',
      defaultValue: 0,
      importance: 'MEDIUM',
      documentation:
        'The maximum duration in milliseconds that a failed operation will be reattempted. -1 for infinite retries.',
      group: ERRORS,
      orderInGroup: 1,
      width: 'MEDIUM',
      displayName: 'Retry Timeout for Errors',
    })
    .define({
      name: 'errors.retry.delay.max.ms',
      type: 'LONG',
      defaultValue: 60_000,
      importance: 'MEDIUM',
      documentation: 'The maximum duration in milliseconds between consecutive retry attempts.',
      group: ERRORS,
      orderInGroup: 2,
      width: 'MEDIUM',
      displayName: 'Maximum Delay Between Retries for Errors',
    })
    .define({
      name: 'errors.tolerance',
      type: 'STRING',
      defaultValue: 'none',
      validator: oneOf(['none', 'all'], true),
      importance: 'MEDIUM',
      documentation: 'Behavior for tolerating errors during connector operation.',
      group: ERRORS,
      orderInGroup: 3,
      width: 'SHORT',
      displayName: 'Error Tolerance',
    })
    .define({
      name: 'errors.log.enable',
      type: 'BOOLEAN',
      defaultValue: false,
      importance: 'MEDIUM',
      documentation:
        'If true, write each error and the details of the failed operation and problematic record to the Connect application log.',
      group: ERRORS,
      orderInGroup: 4,
      width: 'SHORT',
      displayName: 'Log Errors',
    })
    .define({
      name: 'errors.log.include.messages',
      type: 'BOOLEAN',
      defaultValue: false,
      importance: 'MEDIUM',
      documentation: 'Whether to include in the log the Connect record that resulted in a failure.',
      group: ERRORS,
      orderInGroup: 5,
      width: 'SHORT',
      displayName: 'Log Error Details',
    });
}

export function sinkConnectorDef(): ConfigDef {
  return commonConnectorDef()
    .define({
      name: 'topics',
      type: 'LIST',
      defaultValue: '',
      importance: 'HIGH',
      documentation: 'List of topics to consume, separated by commas',
      group: COMMON,
      orderInGroup: 4,
      width: 'LONG',
      displayName: 'Topics',
    })
    .define({
      name: 'topics.regex',
      type: 'STRING',
      defaultValue: '',
      importance: 'HIGH',
      documentation: 'Regular expression giving topics to consume.',
      group: COMMON,
      orderInGroup: 4,
      width: 'LONG',
      displayName: 'Topics regex',
    })
    .define({
      name: 'errors.deadletterqueue.topic.name',
      type: 'STRING',
      defaultValue: '',
      importance: 'MEDIUM',
      documentation:
        'The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters.',
      group: ERRORS,
      orderInGroup: 6,
      width: 'MEDIUM',
      displayName: 'Dead Letter Queue Topic Name',
    })
    .define({
      name: 'errors.deadletterqueue.topic.replication.factor',
      type: 'SHORT',
      defaultValue: 3,
      importance: 'MEDIUM',
      documentation:
        "Replication factor used to create the dead letter queue topic when it doesn't already exist.",
      group: ERRORS,
      orderInGroup: 7,
      width: 'MEDIUM',
      displayName: 'Dead Letter Queue Topic Replication Factor',
    })
    .define({
      name: 'errors.deadletterqueue.context.headers.enable',
      type: 'BOOLEAN',
      defaultValue: false,
      importance: 'MEDIUM',
      documentation:
        'If true, add headers containing error context to the messages written to the dead letter queue.',
      group: ERRORS,
      orderInGroup: 8,
      width: 'MEDIUM',
      displayName: 'Enable Error Context Headers',
    });
}

export function sourceConnectorDef(): ConfigDef {
  return commonConnectorDef()
    .define({
      name: 'exactly.once.support',
      type: 'STRING',
      defaultValue: 'requested',
      validator: oneOf(['requested', 'required'], true),
      importance: 'MEDIUM',
      documentation: 'Permitted values are requested, required.',
      group: 'Exactly Once Support',
      orderInGroup: 1,
      width: 'SHORT',
      displayName: 'Exactly once support',
    })
    .define({
      name: 'transaction.boundary',
      type: 'STRING',
      defaultValue: 'poll',
      validator: oneOf(['poll', 'interval', 'connector'], true),
      importance: 'MEDIUM',
      documentation: 'Permitted values are: poll, interval, connector.',
      group: 'Exactly Once Support',
      orderInGroup: 2,
      width: 'SHORT',
      displayName: 'Transaction Boundary',
    })
    .define({
      name: 'transaction.boundary.interval.ms',
      type: 'LONG',
      defaultValue: null,
      validator: range(0),
      importance: 'LOW',
      documentation:
        "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property.",
      group: 'Exactly Once Support',
      orderInGroup: 3,
      width: 'SHORT',
      displayName: 'Transaction boundary interval',
    })
    .define({
      name: 'offsets.storage.topic',
      type: 'STRING',
      defaultValue: null,
      validator: nonEmptyString,
      importance: 'LOW',
      documentation: 'The name of a separate offsets topic to use for this connector.',
      group: 'offsets.topic',
      orderInGroup: 1,
      width: 'LONG',
      displayName: 'Offsets topic',
    });
}

/** Errors that depend on more than one key, as Kafka's SinkConnectorConfig.validate reports them. */
export function sinkTopicErrors(
  config: Readonly<Record<string, string>>,
): { key: string; message: string }[] {
  const topics = (config.topics ?? '').trim();
  const regex = (config['topics.regex'] ?? '').trim();
  const dlq = (config['errors.deadletterqueue.topic.name'] ?? '').trim();
  const out: { key: string; message: string }[] = [];
  if (topics !== '' && regex !== '') {
    out.push({
      key: 'topics',
      message: 'topics and topics.regex are mutually exclusive options, but both are set.',
    });
  } else if (topics === '' && regex === '') {
    out.push({ key: 'topics', message: 'Must configure one of topics or topics.regex' });
  }
  if (regex !== '') {
    try {
      new RegExp(regex);
    } catch (err) {
      out.push({ key: 'topics.regex', message: `Invalid regex: ${(err as Error).message}` });
    }
  }
  if (dlq !== '' && topics.split(/\s*,\s*/).includes(dlq)) {
    out.push({
      key: 'topics',
      message: `The DLQ topic '${dlq}' may not be included in the list of topics ('topics=${topics}') consumed by the connector`,
    });
  }
  return out;
}

/** Adds multi-key errors to a validation's config values. */
export function addErrors(values: ConfigValue[], errors: { key: string; message: string }[]): void {
  for (const e of errors) values.find((v) => v.name === e.key)?.errors.push(e.message);
}

/** A converter named by the connector config (`key.converter`) or else the worker's, configured with its prefix. */
export function makeConverter(
  plugins: Plugins,
  which: 'key' | 'value',
  connectorConfig: Readonly<Record<string, string>>,
  workerConfig: Readonly<Record<string, string>>,
): Converter {
  const key = `${which}.converter`;
  const fromConnector = connectorConfig[key] !== undefined && connectorConfig[key] !== '';
  const source = fromConnector ? connectorConfig : workerConfig;
  const className = source[key] ?? 'org.apache.kafka.connect.json.JsonConverter';
  const converter = new (plugins.converter(className))();
  converter.configure(withPrefixStripped(source, `${key}.`), which === 'key');
  return converter;
}

/** The transform chain of `transforms` and `predicates`, each configured under its alias. */
export function makeTransformChain(
  plugins: Plugins,
  config: Readonly<Record<string, string>>,
): TransformChain {
  const aliases = splitList(config.transforms);
  const predicateAliases = new Set(splitList(config.predicates));
  const steps: TransformStep[] = aliases.map((alias) => {
    const prefix = `transforms.${alias}.`;
    const type = config[`${prefix}type`];
    if (type === undefined || type === '') {
      throw new ConfigException(`Missing required configuration "${prefix}type" which has no default value.`);
    }
    const transform = new (plugins.transformation(type))();
    const own = withPrefixStripped(config, prefix);
    transform.configure(own);
    let predicate = null;
    const predicateAlias = own.predicate;
    if (predicateAlias !== undefined && predicateAlias !== '') {
      if (!predicateAliases.has(predicateAlias)) {
        throw new ConfigException(
          `Invalid value ${predicateAlias} for configuration ${prefix}predicate: Unknown predicate alias`,
        );
      }
      const ptype = config[`predicates.${predicateAlias}.type`];
      if (ptype === undefined) {
        throw new ConfigException(
          `Missing required configuration "predicates.${predicateAlias}.type" which has no default value.`,
        );
      }
      predicate = new (plugins.predicate(ptype))();
      predicate.configure(withPrefixStripped(config, `predicates.${predicateAlias}.`));
    }
    return { alias, transform, predicate, negate: (own.negate ?? 'false').trim().toLowerCase() === 'true' };
  });
  return new TransformChain(steps);
}

export function splitList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
