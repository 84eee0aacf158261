// TLS for the REST API (`listeners=https://host:port`), with Kafka Connect's keys: `listeners.https.ssl.*`
// (keystore, truststore, client auth, protocols, cipher suites), each falling back to the worker's plain `ssl.*`
// key. Stores are read by the broker's TLS helpers (security/tls-listener.ts): PEM or PKCS12 key stores, PEM
// trust stores. The same trust store (and key store, for client authentication) serves the requests a worker
// sends to other workers' https listeners (rest-client.ts).

import type { TlsOptions } from 'node:tls';
import { ConfigError } from '../../broker/config/config-error.js';
import {
  keyStoreOptions,
  protocolOptions,
  type TlsSettings,
  trustStoreOptions,
} from '../../security/tls-listener.js';
import { ConfigException } from '../errors.js';

const PREFIX = 'listeners.https.';
const DEFAULT_PROTOCOLS = 'TLSv1.2,TLSv1.3';

class RestTlsSettings implements TlsSettings {
  readonly owner = 'REST https listener';
  constructor(private readonly raw: Readonly<Record<string, string>>) {}
  keyOf(name: string): string {
    return this.raw[PREFIX + name] !== undefined ? PREFIX + name : name;
  }
  text(name: string): string | null {
    const v = this.raw[this.keyOf(name)];
    return v === undefined || v.trim() === '' ? null : v.trim();
  }
  list(name: string): readonly string[] {
    const v = this.text(name) ?? (name === 'ssl.enabled.protocols' ? DEFAULT_PROTOCOLS : '');
    return v === '' ? [] : v.split(/\s*,\s*/);
  }
}

export interface RestTls {
  /** Options of the https server. */
  server: TlsOptions;
  /** Options of this worker's requests to other workers' https listeners. */
  client: TlsOptions;
}

/** The https server and client options from the worker config; a ConfigException names the key at fault. */
export function restTls(raw: Readonly<Record<string, string>>): RestTls {
  const s = new RestTlsSettings(raw);
  try {
    const keyStore = keyStoreOptions(s);
    if (keyStore.key === undefined && keyStore.pfx === undefined)
      throw new ConfigError(
        s.keyOf('ssl.keystore.location'),
        undefined,
        'An https listener needs a key store (ssl.keystore.location)',
      );
    const trust = trustStoreOptions(s);
    const protocols = protocolOptions(s);
    const clientAuth = (s.text('ssl.client.auth') ?? 'none').toLowerCase();
    if (!['none', 'requested', 'required'].includes(clientAuth))
      throw new ConfigError(
        s.keyOf('ssl.client.auth'),
        clientAuth,
        'String must be one of: required, requested, none',
      );
    return {
      server: {
        ...keyStore,
        ...trust,
        ...protocols,
        requestCert: clientAuth !== 'none',
        rejectUnauthorized: clientAuth === 'required',
      },
      // Another worker presents the same kind of certificate: this worker's key store and trust store.
      client: { ...keyStore, ...trust, ...protocols },
    };
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigException(err.message);
    throw err;
  }
}
