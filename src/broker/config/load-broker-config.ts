// Startup loading: reads the properties file, lays --override values on top, resolves the BrokerConfig and
// reports the keys Brook does not define in two warning lines (Kafka keeps unused keys and logs them in one): the
// Kafka keys Brook does not implement, then the keys neither knows, which may be typos. Errors are ConfigError (a bad
// value or rule naming the key, or a syntax error naming the file and line); a missing file is the
// filesystem's own error (ENOENT).

import { readFile } from 'node:fs/promises';
import { type BrokerConfig, resolveBrokerConfig } from './broker-config.js';
import { applyOverrides } from './command-line.js';
import { ConfigError } from './config-error.js';
import { kafkaOnlyKey } from './kafka-only-key-defs.js';
import { isKafkaOnlyKey } from './kafka-only-keys.js';
import { METRIC_REPORTERS, reporterNotFound, unloadableReporter } from './metric-reporters.js';
import { parseKey } from './parsed-config.js';
import { PropertiesSyntaxError, parseProperties } from './properties-parser.js';

export interface LoadOptions {
  readonly configPath: string | null;
  readonly overrides: ReadonlyMap<string, string>;
  /** Where warnings go; the broker passes its logger. */
  readonly warn: (message: string) => void;
}

export interface LoadedConfig {
  readonly config: BrokerConfig;
  /** The static layer (file plus overrides) as text, for DescribeConfigs and dynamic config layering. */
  readonly staticConfig: ReadonlyMap<string, string>;
}

/** A syntax error in the file becomes a ConfigError naming the file and line, like any other bad config. */
async function readPropertiesFile(path: string): Promise<Map<string, string>> {
  const text = await readFile(path, 'utf8');
  try {
    return parseProperties(text);
  } catch (error) {
    if (error instanceof PropertiesSyntaxError) throw ConfigError.rule(path, `${path} ${error.message}`);
    throw error;
  }
}

export async function loadBrokerConfig(options: LoadOptions): Promise<LoadedConfig> {
  const fileProps =
    options.configPath === null ? new Map<string, string>() : await readPropertiesFile(options.configPath);
  const staticConfig = applyOverrides(fileProps, options.overrides);
  const config = resolveBrokerConfig(staticConfig);
  // Kafka parses every key it defines as it starts, those Brook accepts without implementing too.
  for (const [name, text] of staticConfig) {
    const kafkaKey = kafkaOnlyKey(name);
    if (kafkaKey !== undefined) parseKey(kafkaKey.def, text);
  }
  // Kafka's broker loads its reporter classes as it starts, and stops on one it cannot find.
  const unloadable = unloadableReporter(staticConfig.get(METRIC_REPORTERS));
  if (unloadable !== null) throw ConfigError.rule(METRIC_REPORTERS, reporterNotFound(unloadable));
  const kafkaKeys = config.unknownKeys.filter(isKafkaOnlyKey);
  const unknownKeys = config.unknownKeys.filter((key) => !isKafkaOnlyKey(key));
  if (kafkaKeys.length > 0) {
    options.warn(
      `These configurations '[${kafkaKeys.join(', ')}]' were supplied but are not used yet: Brook accepts these Kafka keys but does not implement them`,
    );
  }
  if (unknownKeys.length > 0) {
    options.warn(
      `These configurations '[${unknownKeys.join(', ')}]' are not known to Brook nor to Kafka; they are kept but have no effect`,
    );
  }
  return { config, staticConfig };
}
