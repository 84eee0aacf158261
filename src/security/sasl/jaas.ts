// Kafka's sasl.jaas.config value on the broker side: the parser is shared with the client (src/common/jaas-config.ts);
// the broker reads the options of its login modules: PlainLoginModule's `user_<name>="<password>"` entries are
// the PLAIN users it accepts.

import type { JaasEntry } from '../../common/jaas-config.js';

export { JaasConfigError, type JaasEntry, parseJaasConfig } from '../../common/jaas-config.js';

/** The `user_<name>` options of every login module: the static users PLAIN accepts. */
export function plainUsers(entries: readonly JaasEntry[]): Map<string, string> {
  const users = new Map<string, string>();
  for (const entry of entries) {
    for (const [key, value] of entry.options) {
      if (key.startsWith('user_') && key.length > 'user_'.length) users.set(key.slice('user_'.length), value);
    }
  }
  return users;
}
