// The security keys of Kafka's Java clients, as the tools read them from --command-config (or
// --producer.config/--consumer.config): security.protocol, ssl.truststore.* and ssl.keystore.* in PEM,
// sasl.mechanism and sasl.jaas.config (PlainLoginModule or ScramLoginModule with username and password;
// OAuthBearerLoginModule with clientId, clientSecret and scope for sasl.oauthbearer.token.endpoint.url, or, with no
// token endpoint, Kafka's unsecured login options unsecuredLoginStringClaim_sub and the like).

import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { tokenProviderFromJaas } from '../client/oauth-token.js';
import type { ClientOptions, OAuthBearerSaslOptions, SaslOptions } from '../client/options.js';
import { parseJaasConfig } from '../security/sasl/jaas.js';
import { UsageError } from './args.js';

const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

function pem(props: Record<string, string>, locationKey: string, inlineKey: string): string | undefined {
  const inline = props[inlineKey];
  if (inline !== undefined) return inline;
  const location = props[locationKey];
  if (location === undefined) return undefined;
  try {
    return readFileSync(location, 'utf8');
  } catch (e) {
    throw new UsageError(`${locationKey}: cannot read ${location}: ${(e as Error).message}`);
  }
}

function tlsOptions(props: Record<string, string>): ConnectionOptions {
  for (const key of ['ssl.truststore.type', 'ssl.keystore.type']) {
    const type = props[key];
    if (type !== undefined && type.toUpperCase() !== 'PEM') {
      throw new UsageError(`${key}=${type}: Brook's tools read PEM files only`);
    }
  }
  const options: ConnectionOptions = {};
  const ca = pem(props, 'ssl.truststore.location', 'ssl.truststore.certificates');
  if (ca !== undefined) options.ca = ca;
  const keystore = pem(props, 'ssl.keystore.location', 'ssl.keystore.key');
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
  options: ReadonlyMap<string, string>,
): OAuthBearerSaslOptions {
  try {
    const token = tokenProviderFromJaas(options, props['sasl.oauthbearer.token.endpoint.url'] ?? null);
    return { mechanism: 'oauthbearer', token };
  } catch (e) {
    throw new UsageError(`sasl.jaas.config: ${(e as Error).message}`);
  }
}

function saslOptions(props: Record<string, string>): SaslOptions {
  const mechanism = (props['sasl.mechanism'] ?? 'GSSAPI').toUpperCase();
  if (
    mechanism !== 'PLAIN' &&
    mechanism !== 'SCRAM-SHA-256' &&
    mechanism !== 'SCRAM-SHA-512' &&
    mechanism !== 'OAUTHBEARER'
  ) {
    throw new UsageError(
      `sasl.mechanism=${mechanism}: Brook's tools speak PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER`,
    );
  }
  const jaas = props['sasl.jaas.config'];
  if (jaas === undefined)
    throw new UsageError('sasl.jaas.config is required with SASL (username="..." password="...")');
  let entry: ReturnType<typeof parseJaasConfig>[number] | undefined;
  try {
    entry = parseJaasConfig(jaas)[0];
  } catch (e) {
    throw new UsageError(`sasl.jaas.config: ${(e as Error).message}`);
  }
  if (mechanism === 'OAUTHBEARER') return oauthBearerOptions(props, entry?.options ?? new Map());
  const username = entry?.options.get('username');
  const password = entry?.options.get('password');
  if (username === undefined || password === undefined) {
    throw new UsageError('sasl.jaas.config must set username and password');
  }
  const lower = mechanism.toLowerCase() as 'plain' | 'scram-sha-256' | 'scram-sha-512';
  return { mechanism: lower, username, password };
}

/** The tls and sasl client options that security.protocol and its keys ask for. */
export function securityOptions(props: Record<string, string>): Pick<ClientOptions, 'tls' | 'sasl'> {
  const protocol = (props['security.protocol'] ?? 'PLAINTEXT').toUpperCase();
  if (!PROTOCOLS.includes(protocol))
    throw new UsageError(`security.protocol=${protocol} is not one of ${PROTOCOLS.join(', ')}`);
  const out: Pick<ClientOptions, 'tls' | 'sasl'> = {};
  if (protocol === 'SSL' || protocol === 'SASL_SSL') out.tls = tlsOptions(props);
  if (protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL') out.sasl = saslOptions(props);
  return out;
}
