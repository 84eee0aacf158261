// Connect's exceptions, named as Kafka Connect names them: a DataException is a value that does not fit its
// schema or cannot be converted; a ConfigException a setting that does not parse or breaks its rule; a
// ConnectException any other failure of a connector, task or the runtime. The REST layer maps them to status codes.

export class ConnectException extends Error {
  override name = 'ConnectException';
}

export class DataException extends ConnectException {
  override name = 'DataException';
}

export class ConfigException extends ConnectException {
  override name = 'ConfigException';
  /** Kafka's message form: "Invalid value V for configuration K: why". */
  static invalid(key: string, value: unknown, why: string): ConfigException {
    return new ConfigException(`Invalid value ${String(value)} for configuration ${key}: ${why}`);
  }
}

/**
 * A distributed worker has read a config change that needs a rebalance and not yet asked for it (Kafka's
 * RebalanceNeededException): answers built now could rest on stale leadership or assignments.
 */
export class RebalanceNeededException extends ConnectException {
  override name = 'RebalanceNeededException';
  constructor() {
    super('Request cannot be completed because a rebalance is expected');
  }
}

/** A REST-level failure with Kafka Connect's status code (404 unknown connector, 409 conflict, 400 bad request). */
export class RestError extends Error {
  override name = 'RestError';
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The request must be served by another worker (Kafka's RequestTargetException): the leader for config changes,
 * the owner of a connector or task for its restart. The REST server forwards it there once.
 */
export class RequestTargetError extends Error {
  override name = 'RequestTargetError';
  constructor(
    /** The base URL of the worker to forward to, e.g. http://host:8083 */
    readonly targetUrl: string,
    message: string,
  ) {
    super(message);
  }
}
