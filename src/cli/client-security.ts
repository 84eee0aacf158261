// Kafka's client security keys for the tools (--command-config, --producer.config, --consumer.config): the
// translation is the client's (src/client/security-config.ts); here a wrong key becomes a usage error, so the tool
// prints it and exits 2 instead of failing with a stack trace.

import { ConfigError } from '../client/errors.js';
import type { ClientOptions } from '../client/options.js';
import { securityOptionsFromProperties } from '../client/security-config.js';
import { UsageError } from './args.js';

/** The tls and sasl client options that security.protocol and its keys ask for; a UsageError when they are wrong. */
export function securityOptions(props: Record<string, string>): Pick<ClientOptions, 'tls' | 'sasl'> {
  try {
    return securityOptionsFromProperties(props);
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message);
    throw e;
  }
}
