// ConfigError: a bad config value or a broken rule between keys, reported in Kafka's ConfigException wording
// ("Invalid value X for configuration K: reason") so operators can search for the same text they know.

export class ConfigError extends Error {
  override name = 'ConfigError';
  /**
   * True for the rules Kafka checks with an InvalidConfigurationException, whose text reaches the client as it
   * is; the others are Kafka's ConfigException, which an AlterConfigs answer prefixes with the resource.
   */
  invalidConfiguration = false;
  constructor(
    readonly key: string,
    readonly value: unknown,
    readonly reason: string,
  ) {
    super(
      value === undefined ? reason : `Invalid value ${String(value)} for configuration ${key}: ${reason}`,
    );
  }

  /** An error about how keys combine, with no single bad value. */
  static rule(key: string, reason: string): ConfigError {
    return new ConfigError(key, undefined, reason);
  }

  /** A rule between keys that Kafka refuses with an InvalidConfigurationException. */
  static invalidConfiguration(key: string, reason: string): ConfigError {
    const error = ConfigError.rule(key, reason);
    error.invalidConfiguration = true;
    return error;
  }
}
