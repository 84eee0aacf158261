// The security keys of Kafka's Java clients translated into the client's tls and sasl options: security.protocol,
// ssl.truststore.* and ssl.keystore.* in PEM, sasl.mechanism and sasl.jaas.config (PlainLoginModule or
// ScramLoginModule with username and password; OAuthBearerLoginModule with clientId, clientSecret and scope for
// sasl.oauthbearer.token.endpoint.url, or, with no token endpoint, Kafka's unsecured login options
// unsecuredLoginStringClaim_sub and the like). What Node.js cannot do is refused with the key named: Java key
// stores (JKS, Kafka's default ssl.*.type; a store file that is not PEM) and GSSAPI (Kafka's default mechanism).
//
// Who reads Kafka properties files uses it: the command-line tools (--command-config, which turn a ConfigError into
// a usage error) and Connect's workers (worker and connector client keys, as a ConfigException). A wrong or
// unreadable key is a ConfigError naming it, as Kafka's ConfigException does.

import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { parseJaasConfig } from '../common/jaas-config.js';
import { ConfigError } from './errors.js';
import { tokenProviderFromJaas } from './oauth-token.js';
import type { ClientOptions, OAuthBearerSaslOptions, SaslOptions } from './options.js';

const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

// A Java key store (JKS) starts with 0xFEEDFEED, a JCEKS store with 0xCECECECE: Java's own formats, which
// neither Node.js nor OpenSSL read.
const JAVA_STORE_MAGICS = [0xfeedfeed, 0xcececece];

/** How to turn a Java key store into the PEM file Brook's client reads. */
const CONVERT =
  'convert it with `keytool -importkeystore -srckeystore store.jks -destkeystore store.p12 -deststoretype PKCS12` ' +
  'then `openssl pkcs12 -in store.p12 -nodes -out store.pem`';

function pem(
  props: Record<string, string>,
  kp: string,
  store: 'truststore' | 'keystore',
  inlineKey: string,
): string | undefined {
  const inline = props[inlineKey];
  if (inline !== undefined) return inline;
  const locationKey = `ssl.${store}.location`;
  const location = props[locationKey];
  if (location === undefined) return undefined;
  let bytes: Buffer;
  try {
    bytes = readFileSync(location);
  } catch (e) {
    throw new ConfigError(`${kp}${locationKey}: cannot read ${location}: ${(e as Error).message}`);
  }
  // Kafka's default ssl.*.type is JKS: a worker or tool config brought over from Java names a Java store and no
  // type. Say so at startup instead of failing every TLS handshake later.
  const text = bytes.toString('utf8');
  if (!text.includes('-----BEGIN ')) {
    const javaStore = bytes.length >= 4 && JAVA_STORE_MAGICS.includes(bytes.readUInt32BE(0));
    throw new ConfigError(
      `${kp}${locationKey}=${location}: ${javaStore ? 'a Java key store (JKS), which Node.js cannot read' : 'not a PEM file'}; ` +
        `Brook's client reads ${kp}ssl.${store}.type=PEM only (Kafka's default type is JKS); ${CONVERT}`,
    );
  }
  return text;
}

function tlsOptions(props: Record<string, string>, kp: string): ConnectionOptions {
  for (const key of ['ssl.truststore.type', 'ssl.keystore.type']) {
    const type = props[key];
    if (type !== undefined && type.toUpperCase() !== 'PEM') {
      throw new ConfigError(
        `${kp}${key}=${type}: Node.js cannot read ${type} stores; Brook's client reads PEM only (${kp}${key}=PEM); ${CONVERT}`,
      );
    }
  }
  const options: ConnectionOptions = {};
  const ca = pem(props, kp, 'truststore', 'ssl.truststore.certificates');
  if (ca !== undefined) options.ca = ca;
  const keystore = pem(props, kp, 'keystore', 'ssl.keystore.key');
  if (keystore !== undefined) {
    options.key = props['ssl.keystore.key'] ?? keystore;
    options.cert = props['ssl.keystore.certificate.chain'] ?? keystore;
    if (props['ssl.key.password'] !== undefined) options.passphrase = props['ssl.key.password'];
  }
  // Kafka's default https checks the host name; an empty value turns the check off.
  if (props['ssl.endpoint.identification.algorithm'] === '') options.checkServerIdentity = () => undefined;
  return options;
}

/** OAUTHBEARER from Kafka's client keys: a token endpoint with client credentials, or an unsecured token. */
function oauthBearerOptions(
  props: Record<string, string>,
  kp: string,
  options: ReadonlyMap<string, string>,
): OAuthBearerSaslOptions {
  try {
    const token = tokenProviderFromJaas(options, props['sasl.oauthbearer.token.endpoint.url'] ?? null);
    return { mechanism: 'oauthbearer', token };
  } catch (e) {
    throw new ConfigError(`${kp}sasl.jaas.config: ${(e as Error).message}`);
  }
}

function saslOptions(props: Record<string, string>, kp: string): SaslOptions {
  const mechanism = (props['sasl.mechanism'] ?? 'GSSAPI').toUpperCase();
  if (mechanism === 'GSSAPI') {
    // Kafka's default mechanism: a config that names no mechanism means Kerberos.
    throw new ConfigError(
      `${kp}sasl.mechanism=GSSAPI${props['sasl.mechanism'] === undefined ? " (Kafka's default)" : ''}: ` +
        "Kerberos is not supported by Brook's client; set it to PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
    );
  }
  if (
    mechanism !== 'PLAIN' &&
    mechanism !== 'SCRAM-SHA-256' &&
    mechanism !== 'SCRAM-SHA-512' &&
    mechanism !== 'OAUTHBEARER'
  ) {
    throw new ConfigError(
      `${kp}sasl.mechanism=${mechanism}: Brook's client speaks PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER`,
    );
  }
  const jaas = props['sasl.jaas.config'];
  if (jaas === undefined)
    throw new ConfigError(`${kp}sasl.jaas.config is required with SASL (username="..." password="...")`);
  let entry: ReturnType<typeof parseJaasConfig>[number] | undefined;
  try {
    entry = parseJaasConfig(jaas)[0];
  } catch (e) {
    throw new ConfigError(`${kp}sasl.jaas.config: ${(e as Error).message}`);
  }
  if (mechanism === 'OAUTHBEARER') return oauthBearerOptions(props, kp, entry?.options ?? new Map());
  const username = entry?.options.get('username');
  const password = entry?.options.get('password');
  if (username === undefined || password === undefined) {
    throw new ConfigError(`${kp}sasl.jaas.config must set username and password`);
  }
  const lower = mechanism.toLowerCase() as 'plain' | 'scram-sha-256' | 'scram-sha-512';
  // The ScramLoginModule's tokenauth="true": username and password are a delegation token's id and HMAC.
  if (lower !== 'plain' && entry?.options.get('tokenauth')?.toLowerCase() === 'true') {
    return { mechanism: lower, username, password, tokenauth: true };
  }
  return { mechanism: lower, username, password };
}

/**
 * The tls and sasl client options that security.protocol and its keys ask for; a ConfigError when they are wrong.
 * `keyPrefix` is how the keys were spelled where they came from (Connect's `producer.`), for the messages.
 */
export function securityOptionsFromProperties(
  props: Record<string, string>,
  keyPrefix = '',
): Pick<ClientOptions, 'tls' | 'sasl'> {
  const protocol = (props['security.protocol'] ?? 'PLAINTEXT').toUpperCase();
  if (!PROTOCOLS.includes(protocol))
    throw new ConfigError(`${keyPrefix}security.protocol=${protocol} is not one of ${PROTOCOLS.join(', ')}`);
  const out: Pick<ClientOptions, 'tls' | 'sasl'> = {};
  if (protocol === 'SSL' || protocol === 'SASL_SSL') out.tls = tlsOptions(props, keyPrefix);
  if (protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL') out.sasl = saslOptions(props, keyPrefix);
  return out;
}
