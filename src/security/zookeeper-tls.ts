// TLS to ZooKeeper from Kafka's broker keys (zookeeper.ssl.*), as node:tls client options for the coordination
// store (src/controller/store/zookeeper-tls-socket.ts opens the sockets). Checked at startup, so a wrong path,
// password or format stops the broker with the key's name.
//
// Kafka's rules kept: zookeeper.ssl.client.enable turns TLS on; unset store types are guessed from the file
// name extension as ZooKeeper's X509Util does; zookeeper.ssl.enabled.protocols unset means
// zookeeper.ssl.protocol alone; the key store password also decrypts an encrypted PEM key (ZooKeeper's PEM
// loader has no separate key password); endpoint identification is on only while
// zookeeper.ssl.endpoint.identification.algorithm is HTTPS (its default, in any case), as Kafka's KafkaConfig turns
// it into ZooKeeper's hostnameVerification. Node reads PEM and PKCS12 key stores and PEM trust stores;
// JKS is refused with the conversion command, as for listeners.

import tls from 'node:tls';
import { ConfigError } from '../broker/config/config-error.js';
import { Password } from '../broker/config/config-types.js';
import type { ParsedConfig } from '../broker/config/parsed-config.js';
import { keyStoreOptions, protocolOptions, type TlsSettings, trustStoreOptions } from './tls-listener.js';

/** The one client socket class that speaks TLS in ZooKeeper's Java client, which Kafka asks for with TLS. */
export const NETTY_CLIENT_SOCKET = 'org.apache.zookeeper.ClientCnxnSocketNetty';

/** The listener ssl.* names the shared TLS helpers ask for, and the zookeeper.ssl.* key each one is. */
const KEY_OF: Readonly<Record<string, string>> = {
  'ssl.keystore.location': 'zookeeper.ssl.keystore.location',
  'ssl.keystore.password': 'zookeeper.ssl.keystore.password',
  'ssl.keystore.type': 'zookeeper.ssl.keystore.type',
  'ssl.key.password': 'zookeeper.ssl.keystore.password',
  'ssl.truststore.location': 'zookeeper.ssl.truststore.location',
  'ssl.truststore.type': 'zookeeper.ssl.truststore.type',
  'ssl.protocol': 'zookeeper.ssl.protocol',
  'ssl.enabled.protocols': 'zookeeper.ssl.enabled.protocols',
  'ssl.cipher.suites': 'zookeeper.ssl.cipher.suites',
};

/** ZooKeeper's store type for a file name when none is set (X509Util's guess), JKS when it cannot tell. */
export function storeTypeFromFileName(path: string): string {
  const lower = path.toLowerCase();
  if (lower.endsWith('.pem') || lower.endsWith('.crt')) return 'PEM';
  if (lower.endsWith('.p12') || lower.endsWith('.pfx')) return 'PKCS12';
  return 'JKS';
}

class ZooKeeperTlsSettings implements TlsSettings {
  readonly owner = 'The ZooKeeper connection';

  constructor(private readonly values: ParsedConfig) {}

  keyOf(name: string): string {
    return KEY_OF[name] ?? `zookeeper.${name}`;
  }

  text(name: string): string | null {
    const key = KEY_OF[name];
    // Keys ZooKeeper has no equivalent of (inline PEM material) are simply unset.
    if (key === undefined) return null;
    const value = this.values.value(key);
    if (value !== null) return value instanceof Password ? value.value : String(value);
    if (name === 'ssl.keystore.type' || name === 'ssl.truststore.type') {
      const location = this.text(name.replace('.type', '.location'));
      return location === null ? null : storeTypeFromFileName(location);
    }
    return null;
  }

  list(name: string): readonly string[] {
    const key = KEY_OF[name];
    const value = key === undefined ? null : this.values.value(key);
    if (Array.isArray(value)) return value as readonly string[];
    if (name === 'ssl.enabled.protocols') return [this.text('ssl.protocol') ?? 'TLSv1.2'];
    return [];
  }
}

/** The TLS client options for ZooKeeper, or null when zookeeper.ssl.client.enable is false. */
export function zooKeeperClientTls(values: ParsedConfig): tls.ConnectionOptions | null {
  if (!values.boolean('zookeeper.ssl.client.enable')) return null;
  const socketClass = values.stringOrNull('zookeeper.clientCnxnSocket');
  if (socketClass !== null && socketClass !== NETTY_CLIENT_SOCKET) {
    throw new ConfigError(
      'zookeeper.clientCnxnSocket',
      socketClass,
      `ZooKeeper's TLS needs ${NETTY_CLIENT_SOCKET} (or leave the key unset)`,
    );
  }
  for (const key of ['zookeeper.ssl.crl.enable', 'zookeeper.ssl.ocsp.enable']) {
    if (values.boolean(key)) {
      throw new ConfigError(
        key,
        'true',
        'Brook does not check revocation (CRL, OCSP) of ZooKeeper certificates',
      );
    }
  }
  const s = new ZooKeeperTlsSettings(values);
  // A key store is needed only when the servers ask for a client certificate (ssl.clientAuth); none is fine.
  const keyStore = s.text('ssl.keystore.location') === null ? {} : keyStoreOptions(s);
  const { ca } = trustStoreOptions(s);
  const { minVersion, maxVersion, ciphers } = protocolOptions(s);
  const options: tls.ConnectionOptions = {
    key: keyStore.key,
    cert: keyStore.cert,
    pfx: keyStore.pfx,
    passphrase: keyStore.passphrase,
    ca,
    minVersion,
    maxVersion,
    ciphers,
    rejectUnauthorized: true,
  };
  const identification = values.stringOrNull('zookeeper.ssl.endpoint.identification.algorithm') ?? '';
  if (identification.toUpperCase() !== 'HTTPS') options.checkServerIdentity = () => undefined;
  try {
    tls.createSecureContext(options);
  } catch (err) {
    throw ConfigError.rule(
      'zookeeper.ssl.keystore.location',
      `TLS settings of the ZooKeeper connection do not load: ${(err as Error).message}`,
    );
  }
  return options;
}
