// SASL to ZooKeeper as a Kafka broker configures it: not with broker keys but with Java system properties, usually
// passed in KAFKA_OPTS: `-Djava.security.auth.login.config=<JAAS file>`, whose `Client` section (another with
// `-Dzookeeper.sasl.clientconfig=<name>`) holds the login; `-Dzookeeper.sasl.client=false` turns it off. Brook
// reads the same variable, so a broker's start script carries over.
//
// Supported: ZooKeeper's DigestLoginModule (`username`, `password`), i.e. DIGEST-MD5 against a server with
// SASLAuthenticationProvider and a DigestLoginModule `Server` section. Kerberos (Krb5LoginModule, GSSAPI) stops
// startup. A JAAS file without the section means no SASL, as in ZooKeeper's client.

import { readFileSync } from 'node:fs';
import { ConfigError } from '../broker/config/config-error.js';
import type { ZooKeeperSaslExchange } from '../controller/store/zookeeper-sasl.js';
import { DigestMd5Client } from './sasl/digest-md5-client.js';
import { JaasConfigError, parseJaasConfig } from './sasl/jaas.js';

export const DIGEST_LOGIN_MODULE = 'org.apache.zookeeper.server.auth.DigestLoginModule';
/** The server name ZooKeeper's client and server put in DIGEST-MD5's digest-uri ("zookeeper/zk-sasl-md5"). */
const DIGEST_SERVER_NAME = 'zk-sasl-md5';

/** The -Dkey=value system properties in a JVM options string (KAFKA_OPTS). */
export function systemProperties(jvmOptions: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const word of jvmOptions.split(/\s+/)) {
    const m = /^-D([^=]+)=(.*)$/.exec(word);
    if (m !== null) out.set(m[1] as string, (m[2] as string).replace(/^(["'])(.*)\1$/, '$2'));
  }
  return out;
}

/** The text of section `name` of a JAAS file (`Name { entries };`), comments removed; null when absent. */
export function jaasSection(fileText: string, name: string): string | null {
  const text = fileText.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
  const section = /([A-Za-z0-9_.-]+)\s*\{((?:"(?:\\.|[^"\\])*"|[^}"])*)\}\s*;?/g;
  for (let m = section.exec(text); m !== null; m = section.exec(text)) {
    if (m[1] === name) return m[2] as string;
  }
  return null;
}

export interface ZooKeeperSaslLogin {
  readonly username: string;
  readonly password: string;
  /** The service name of digest-uri: zookeeper.sasl.client.username, "zookeeper" by default. */
  readonly service: string;
}

/** The login for ZooKeeper from KAFKA_OPTS, null without SASL; a ConfigError for a login Brook cannot use. */
export function zooKeeperSaslLogin(env: NodeJS.ProcessEnv = process.env): ZooKeeperSaslLogin | null {
  const props = systemProperties(env.KAFKA_OPTS ?? '');
  const jaasPath = props.get('java.security.auth.login.config');
  if (jaasPath === undefined || props.get('zookeeper.sasl.client') === 'false') return null;
  const key = 'java.security.auth.login.config';
  let fileText: string;
  try {
    fileText = readFileSync(jaasPath, 'utf8');
  } catch (err) {
    throw new ConfigError(key, jaasPath, `cannot read the JAAS file: ${(err as Error).message}`);
  }
  const sectionName = props.get('zookeeper.sasl.clientconfig') ?? 'Client';
  const section = jaasSection(fileText, sectionName);
  if (section === null) return null;
  let entries: ReturnType<typeof parseJaasConfig>;
  try {
    entries = parseJaasConfig(section);
  } catch (err) {
    if (!(err instanceof JaasConfigError)) throw err;
    throw new ConfigError(key, jaasPath, `section ${sectionName}: ${err.message}`);
  }
  const entry = entries[0]!;
  if (entry.loginModule !== DIGEST_LOGIN_MODULE) {
    throw new ConfigError(
      key,
      jaasPath,
      `section ${sectionName} uses ${entry.loginModule}; Brook authenticates to ZooKeeper with ${DIGEST_LOGIN_MODULE} (DIGEST-MD5) only`,
    );
  }
  const username = entry.options.get('username');
  const password = entry.options.get('password');
  if (username === undefined || password === undefined) {
    throw new ConfigError(key, jaasPath, `section ${sectionName} must set username and password`);
  }
  return { username, password, service: props.get('zookeeper.sasl.client.username') ?? 'zookeeper' };
}

/** A new DIGEST-MD5 exchange per ZooKeeper connection, for ZooKeeperStoreOptions.sasl. */
export function digestExchanges(login: ZooKeeperSaslLogin): () => ZooKeeperSaslExchange {
  return () =>
    new DigestMd5Client({
      username: login.username,
      password: login.password,
      protocol: login.service,
      serverName: DIGEST_SERVER_NAME,
    });
}
