// `brook certs --dir DIR [--hosts 127.0.0.1,localhost] [--days N]`: writes a throw-away CA, a broker and a client
// certificate for local TLS trials (see src/security/dev-certs.ts) and prints the broker and client settings
// that use them.

import { isAbsolute, resolve } from 'node:path';
import { DEV_PKCS12_PASSWORD, writeDevCertificates } from '../security/dev-certs.js';

const USAGE = `usage: brook certs --dir DIR [--hosts 127.0.0.1,localhost] [--days 365]

Writes a development CA, a broker certificate valid for --hosts and a client certificate into DIR, as PEM files
(ca-cert.pem, broker.pem, client.pem, ...) and PKCS12 bundles (broker.p12, client.p12, password ${DEV_PKCS12_PASSWORD}).
For trials only: the CA key sits next to the certificates.
`;

export async function runCerts(args: string[]): Promise<number> {
  let dir: string | undefined;
  let hosts = ['127.0.0.1', 'localhost'];
  let days = 365;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(USAGE);
      return 0;
    }
    const value = args[++i];
    if (value === undefined || !['--dir', '--hosts', '--days'].includes(arg)) {
      process.stderr.write(`brook certs: unexpected argument '${arg}'\n${USAGE}`);
      return 1;
    }
    if (arg === '--dir') dir = value;
    else if (arg === '--hosts')
      hosts = value
        .split(',')
        .map((h) => h.trim())
        .filter((h) => h !== '');
    else days = Number(value);
  }
  if (dir === undefined || hosts.length === 0 || !Number.isInteger(days) || days < 1) {
    process.stderr.write(
      `brook certs: --dir is required, --hosts must name a host, --days a positive number\n${USAGE}`,
    );
    return 1;
  }
  const absolute = isAbsolute(dir) ? dir : resolve(dir);
  let files: ReturnType<typeof writeDevCertificates>;
  try {
    files = writeDevCertificates({ dir: absolute, hosts, days });
  } catch (err) {
    const message =
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'the openssl command is not installed'
        : String((err as Error).message);
    process.stderr.write(`brook certs: ${message}\n`);
    return 1;
  }
  process.stdout.write(`wrote certificates to ${absolute}

broker (server.properties):
  listeners=PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093
  ssl.keystore.type=PEM
  ssl.keystore.location=${files.brokerKeystorePem}
  ssl.truststore.type=PEM
  ssl.truststore.location=${files.caCert}
  # ssl.client.auth=required   (mutual TLS)

kcat:
  kcat -b 127.0.0.1:9093 -X security.protocol=ssl -X ssl.ca.location=${files.caCert} \\
       -X ssl.certificate.location=${files.clientCert} -X ssl.key.location=${files.clientKey} -L
`);
  return 0;
}
