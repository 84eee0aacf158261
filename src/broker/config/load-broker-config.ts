// Startup loading: reads the properties file, lays --override values on top, resolves the BrokerConfig and
// reports each unknown key once (Kafka keeps unknown keys and only logs them). Errors are ConfigError (a bad
// value or rule naming the key, or a syntax error naming the file and line); a missing file is the
// filesystem's own error (ENOENT).

import { readFile } from 'node:fs/promises';
import { type BrokerConfig, resolveBrokerConfig } from './broker-config.js';
import { applyOverrides } from './command-line.js';
import { ConfigError } from './config-error.js';
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
  for (const key of config.unknownKeys) {
    options.warn(`config key '${key}' is not known to Brook; it is kept but has no effect`);
  }
  return { config, staticConfig };
}
