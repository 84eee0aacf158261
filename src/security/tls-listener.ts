// TLS settings of one listener, from Kafka's ssl.* keys (each overridable as listener.name.<listener>.ssl.*),
// turned into node:tls server options and checked at startup, so a wrong path, password or format stops the
// broker with the key's name instead of failing every handshake later.
//
// Key stores: PEM (ssl.keystore.location naming a file with the private key and the certificate chain, or the
// inline ssl.keystore.key and ssl.keystore.certificate.chain; an encrypted PKCS#8 key takes ssl.key.password) and
// PKCS12 (ssl.keystore.location, ssl.keystore.password). Trust stores: PEM (ssl.truststore.location or inline
// ssl.truststore.certificates). JKS is Java's own format: refused with a message saying how to convert it.

import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SecureVersion, TLSSocket, TlsOptions } from 'node:tls';
import tls from 'node:tls';
import { listenerKeyName } from '../broker/config/broker-keys.js';
import { ConfigError } from '../broker/config/config-error.js';
import { Password } from '../broker/config/config-types.js';
import type { ParsedConfig } from '../broker/config/parsed-config.js';
import { certificateBlocks, privateKeyBlocks } from './pem.js';
import { distinguishedName, type PrincipalMappingError, SslPrincipalMapper } from './ssl-principal.js';

export type ClientAuth = 'none' | 'requested' | 'required';

export interface ListenerTls {
  readonly options: TlsOptions;
  readonly clientAuth: ClientAuth;
  /**
   * The principal of a connection whose handshake finished: User:ANONYMOUS without a client certificate, the
   * mapped distinguished name with a trusted one; an Error when the connection must be refused (a certificate
   * that is not trusted, or one no mapping rule applies to).
   */
  principalOf(socket: TLSSocket): string | Error;
}

const FORMATS_ACCEPTED = 'PEM and PKCS12';
const TLS_VERSIONS: readonly SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

/**
 * Where the TLS helpers below read Kafka's ssl.* settings, by their broker-wide names: a listener's (with its
 * overrides) or another family of keys under other names (zookeeper.ssl.*, zookeeper-tls.ts).
 */
export interface TlsSettings {
  /** What the settings are for, in error messages ("Listener SSL"). */
  readonly owner: string;
  /** The key a setting is read from, for error messages. */
  keyOf(name: string): string;
  text(name: string): string | null;
  list(name: string): readonly string[];
}

/** Reads one setting of a listener: its listener.name.<l>. override when set, else the broker-wide key. */
class ListenerSettings implements TlsSettings {
  constructor(
    private readonly values: ParsedConfig,
    readonly listenerName: string,
  ) {}

  get owner(): string {
    return `Listener ${this.listenerName}`;
  }

  keyOf(name: string): string {
    const scoped = listenerKeyName(this.listenerName, name);
    return this.values.has(scoped) ? scoped : name;
  }

  text(name: string): string | null {
    const value = this.values.value(this.keyOf(name));
    if (value === null) return null;
    if (value instanceof Password) return value.value;
    return String(value);
  }

  list(name: string): readonly string[] {
    return this.values.list(this.keyOf(name));
  }
}

function readFile(key: string, path: string): string | Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(key, path, `cannot read the file: ${(err as Error).message}`);
  }
}

function refuseFormat(key: string, type: string): never {
  throw new ConfigError(
    key,
    type,
    `Brook reads ${FORMATS_ACCEPTED} stores, not ${type}; convert one with ` +
      '`keytool -importkeystore -srckeystore store.jks -destkeystore store.p12 -deststoretype PKCS12`',
  );
}

export function keyStoreOptions(s: TlsSettings): TlsOptions {
  const typeKey = s.keyOf('ssl.keystore.type');
  const type = (s.text('ssl.keystore.type') ?? 'JKS').toUpperCase();
  const location = s.text('ssl.keystore.location');
  const inlineChain = s.text('ssl.keystore.certificate.chain');
  const inlineKey = s.text('ssl.keystore.key');
  const keyPassword = s.text('ssl.key.password');
  if (inlineChain !== null || inlineKey !== null) {
    if (type !== 'PEM') {
      throw new ConfigError(
        typeKey,
        type,
        'ssl.keystore.certificate.chain and ssl.keystore.key need type PEM',
      );
    }
    if (inlineChain === null || inlineKey === null || location !== null) {
      throw ConfigError.rule(
        s.keyOf('ssl.keystore.key'),
        'Inline PEM needs both ssl.keystore.key and ssl.keystore.certificate.chain, and no ssl.keystore.location',
      );
    }
    return pemKeyStore(s.keyOf('ssl.keystore.key'), inlineKey, inlineChain, keyPassword);
  }
  if (location === null) {
    throw ConfigError.rule(
      s.keyOf('ssl.keystore.location'),
      `${s.owner} uses TLS but has no key store: set ssl.keystore.location, or ssl.keystore.key ` +
        'and ssl.keystore.certificate.chain',
    );
  }
  const locationKey = s.keyOf('ssl.keystore.location');
  if (type === 'PEM') {
    const text = readFile(locationKey, location).toString('utf8');
    return pemKeyStore(locationKey, text, text, keyPassword);
  }
  if (type === 'PKCS12') {
    const passphrase = s.text('ssl.keystore.password') ?? undefined;
    const options: TlsOptions = { pfx: readFile(locationKey, location), passphrase };
    try {
      tls.createSecureContext(options);
    } catch (err) {
      throw new ConfigError(
        locationKey,
        location,
        `cannot load the PKCS12 key store: ${(err as Error).message}`,
      );
    }
    return options;
  }
  return refuseFormat(typeKey, type);
}

function pemKeyStore(key: string, keyText: string, chainText: string, password: string | null): TlsOptions {
  const keys = privateKeyBlocks(keyText);
  const chain = certificateBlocks(chainText);
  if (keys.length !== 1)
    throw new ConfigError(key, '[hidden]', `Expected one PEM private key, found ${keys.length}`);
  if (chain.length === 0)
    throw new ConfigError(key, '[hidden]', 'Expected a PEM certificate chain, found no certificate');
  let privateKey: string;
  try {
    // Decrypted once here: a wrong ssl.key.password is a startup error, not a failure of every handshake.
    privateKey = createPrivateKey({ key: keys[0] as string, passphrase: password ?? undefined })
      .export({ type: 'pkcs8', format: 'pem' })
      .toString();
  } catch (err) {
    throw new ConfigError(
      key,
      '[hidden]',
      `cannot read the private key (is ssl.key.password right?): ${(err as Error).message}`,
    );
  }
  return { key: privateKey, cert: chain.join('') };
}

export function trustStoreOptions(s: TlsSettings): TlsOptions {
  const typeKey = s.keyOf('ssl.truststore.type');
  const type = (s.text('ssl.truststore.type') ?? 'JKS').toUpperCase();
  const location = s.text('ssl.truststore.location');
  const inline = s.text('ssl.truststore.certificates');
  if (location === null && inline === null) return {}; // Node's bundled root certificates, as Java's cacerts
  if (type !== 'PEM') {
    if (type === 'PKCS12') {
      throw new ConfigError(
        typeKey,
        type,
        'Brook reads trust stores as PEM only; export the certificates with `openssl pkcs12 -nokeys`',
      );
    }
    return refuseFormat(typeKey, type);
  }
  const key = location !== null ? s.keyOf('ssl.truststore.location') : s.keyOf('ssl.truststore.certificates');
  const text = inline ?? readFile(key, location as string).toString('utf8');
  const ca = certificateBlocks(text);
  if (ca.length === 0) throw ConfigError.rule(key, 'Expected PEM certificates, found none');
  return { ca };
}

// Kafka names cipher suites as IANA does (Java's names); OpenSSL, and so Node, names the TLS 1.2 ones otherwise.
// TLS 1.3 suites have the same name in both.
function opensslCipherName(name: string): string {
  const match = /^TLS_(ECDHE|DHE)_(RSA|ECDSA)_WITH_(AES)_(128|256)_(GCM|CBC)_(SHA256|SHA384|SHA)$/.exec(name);
  if (match !== null) {
    const [, kx, auth, , bits, mode, mac] = match;
    if (mode === 'GCM') return `${kx}-${auth}-AES${bits}-GCM-${mac}`;
    return `${kx}-${auth}-AES${bits}-${mac === 'SHA' ? 'SHA' : mac}`;
  }
  const chacha = /^TLS_(ECDHE|DHE)_(RSA|ECDSA)_WITH_CHACHA20_POLY1305_SHA256$/.exec(name);
  if (chacha !== null) return `${chacha[1]}-${chacha[2]}-CHACHA20-POLY1305`;
  return name;
}

export function protocolOptions(s: TlsSettings): TlsOptions {
  const enabledKey = s.keyOf('ssl.enabled.protocols');
  const enabled = s.list('ssl.enabled.protocols');
  for (const p of enabled) {
    if (!(TLS_VERSIONS as readonly string[]).includes(p)) {
      throw new ConfigError(
        enabledKey,
        enabled.join(','),
        `Unknown protocol ${p}; Brook accepts ${TLS_VERSIONS.join(', ')}`,
      );
    }
  }
  if (enabled.length === 0) throw new ConfigError(enabledKey, '', 'At least one TLS version must be enabled');
  const protocol = s.text('ssl.protocol') ?? 'TLSv1.3';
  if (!['TLS', 'TLSv1.2', 'TLSv1.3', 'TLSv1.1', 'TLSv1'].includes(protocol)) {
    throw new ConfigError(s.keyOf('ssl.protocol'), protocol, 'Unknown TLS protocol');
  }
  const sorted = TLS_VERSIONS.filter((v) => enabled.includes(v));
  const options: TlsOptions = { minVersion: sorted[0], maxVersion: sorted[sorted.length - 1] };
  const suites = s.list('ssl.cipher.suites');
  if (suites.length > 0) options.ciphers = suites.map(opensslCipherName).join(':');
  return options;
}

/** Builds and checks the TLS server options of one listener; throws ConfigError naming the key at fault. */
export function listenerTls(values: ParsedConfig, listenerName: string, sasl = false): ListenerTls {
  const s = new ListenerSettings(values, listenerName);
  const clientAuthKey = s.keyOf('ssl.client.auth');
  // As in Kafka, a SASL_SSL listener asks for client certificates only when ssl.client.auth is set for it by
  // name: the broker-wide key is meant for SSL listeners, whose clients have no other way to authenticate.
  const clientAuthText = sasl && clientAuthKey === 'ssl.client.auth' ? 'none' : s.text('ssl.client.auth');
  const clientAuth = (clientAuthText ?? 'none').toLowerCase() as ClientAuth;
  if (!['none', 'requested', 'required'].includes(clientAuth)) {
    throw new ConfigError(clientAuthKey, clientAuth, 'Expected none, requested or required');
  }
  const options: TlsOptions = {
    ...keyStoreOptions(s),
    ...trustStoreOptions(s),
    ...protocolOptions(s),
    requestCert: clientAuth !== 'none',
    // With `requested` the handshake lets an untrusted certificate through and principalOf refuses it, so that a
    // client without a certificate is still served.
    rejectUnauthorized: clientAuth === 'required',
  };
  try {
    tls.createSecureContext(options);
  } catch (err) {
    throw ConfigError.rule(
      s.keyOf('ssl.keystore.location'),
      `TLS settings of listener ${listenerName} do not load: ${(err as Error).message}`,
    );
  }
  // Per listener too, as Kafka builds each listener's principal builder from its listener-prefixed configs.
  let mapper: SslPrincipalMapper;
  const rules = s.text('ssl.principal.mapping.rules') ?? 'DEFAULT';
  try {
    mapper = new SslPrincipalMapper(rules);
  } catch (err) {
    throw new ConfigError(
      s.keyOf('ssl.principal.mapping.rules'),
      rules,
      (err as PrincipalMappingError).message,
    );
  }
  return {
    options,
    clientAuth,
    principalOf(socket: TLSSocket): string | Error {
      const certificate = socket.getPeerX509Certificate();
      if (certificate === undefined) return 'User:ANONYMOUS';
      if (!socket.authorized)
        return new Error(`client certificate not trusted: ${String(socket.authorizationError)}`);
      const dn = distinguishedName(certificate);
      const name = mapper.nameOf(dn);
      if (name === null) return new Error(`no ssl.principal.mapping.rules rule applies to ${dn}`);
      return `User:${name}`;
    },
  };
}

/**
 * The node:tls options this broker uses as a client of the inter-broker listener of other brokers, as Kafka
 * configures its inter-broker channel from that listener's `ssl.*` keys: their trust store checks the peer, their
 * key store is this broker's certificate should the peer ask for one, and `ssl.endpoint.identification.algorithm`
 * (https) checks the peer's host name; empty turns that check off.
 */
export function listenerTlsClientOptions(values: ParsedConfig, listenerName: string): tls.ConnectionOptions {
  const s = new ListenerSettings(values, listenerName);
  const { key, cert, pfx, passphrase } = keyStoreOptions(s);
  const { ca } = trustStoreOptions(s);
  const { minVersion, maxVersion, ciphers } = protocolOptions(s);
  const options: tls.ConnectionOptions = {
    key,
    cert,
    pfx,
    passphrase,
    ca,
    minVersion,
    maxVersion,
    ciphers,
    rejectUnauthorized: true,
  };
  const identification = s.text('ssl.endpoint.identification.algorithm') ?? 'https';
  if (identification === '') options.checkServerIdentity = () => undefined;
  else if (identification.toLowerCase() !== 'https') {
    throw new ConfigError(
      s.keyOf('ssl.endpoint.identification.algorithm'),
      identification,
      'Expected https or an empty value',
    );
  }
  return options;
}

/** The files a TLS listener's settings read (key store, trust store): a change to one calls for a reload. */
export function listenerTlsFiles(values: ParsedConfig, listenerName: string): string[] {
  const s = new ListenerSettings(values, listenerName);
  const files = [s.text('ssl.keystore.location'), s.text('ssl.truststore.location')];
  return files.filter((f): f is string => f !== null);
}
