// Throw-away certificates for local TLS trials and tests: a CA, a broker certificate (with the given hosts as
// subject alternative names) and a client certificate, written as PEM and PKCS12 with the `openssl` command.
// Node 20 can read certificates but not create them, and openssl is part of every Debian base system; this is a
// development helper, never part of serving.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';

/** Password of the PKCS12 bundles; a fixed, documented value because these files are for trials only. */
export const DEV_PKCS12_PASSWORD = 'brook-dev';

export interface DevCertFiles {
  readonly caCert: string;
  readonly brokerCert: string;
  readonly brokerKey: string;
  /** Key, certificate and CA in one PEM file: what ssl.keystore.location takes with ssl.keystore.type=PEM. */
  readonly brokerKeystorePem: string;
  readonly brokerKeystoreP12: string;
  readonly clientCert: string;
  readonly clientKey: string;
  readonly clientKeystorePem: string;
  readonly clientKeystoreP12: string;
}

export interface DevCertOptions {
  readonly dir: string;
  /** Host names and IP addresses the broker certificate is valid for. */
  readonly hosts?: readonly string[];
  readonly days?: number;
  /** Subject of the client certificate, in openssl's /K=V/... form. */
  readonly clientSubject?: string;
}

function openssl(args: readonly string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function signedCertificate(
  dir: string,
  name: string,
  subject: string,
  extensions: string,
  days: number,
): { cert: string; key: string } {
  const key = join(dir, `${name}-key.pem`);
  const cert = join(dir, `${name}-cert.pem`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, extensions);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subject]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    join(dir, 'ca-cert.pem'),
    '-CAkey',
    join(dir, 'ca-key.pem'),
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    String(days),
    '-sha256',
    '-extfile',
    ext,
  ]);
  rmSync(csr);
  rmSync(ext);
  return { cert, key };
}

function bundle(dir: string, name: string, cert: string, key: string): { pem: string; p12: string } {
  const pem = join(dir, `${name}.pem`);
  const ca = readFileSync(join(dir, 'ca-cert.pem'), 'utf8');
  writeFileSync(pem, readFileSync(key, 'utf8') + readFileSync(cert, 'utf8') + ca, { mode: 0o600 });
  const p12 = join(dir, `${name}.p12`);
  openssl([
    'pkcs12',
    '-export',
    '-in',
    cert,
    '-inkey',
    key,
    '-certfile',
    join(dir, 'ca-cert.pem'),
    '-name',
    name,
    '-out',
    p12,
    '-passout',
    `pass:${DEV_PKCS12_PASSWORD}`,
  ]);
  return { pem, p12 };
}

export function writeDevCertificates(options: DevCertOptions): DevCertFiles {
  const { dir } = options;
  const days = options.days ?? 365;
  const hosts = options.hosts ?? ['127.0.0.1', 'localhost'];
  mkdirSync(dir, { recursive: true });
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    join(dir, 'ca-key.pem'),
    '-out',
    join(dir, 'ca-cert.pem'),
    '-days',
    String(days),
    '-sha256',
    '-subj',
    '/O=Brook dev/CN=Brook dev CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const altNames = hosts.map((h) => (isIP(h) === 0 ? `DNS:${h}` : `IP:${h}`)).join(',');
  const broker = signedCertificate(
    dir,
    'broker',
    `/C=US/O=Brook dev/OU=Brook/CN=${hosts[0] ?? 'localhost'}`,
    `subjectAltName=${altNames}\nextendedKeyUsage=serverAuth,clientAuth\n`,
    days,
  );
  const client = signedCertificate(
    dir,
    'client',
    options.clientSubject ?? '/C=US/O=Brook dev/OU=Clients/CN=client',
    'extendedKeyUsage=clientAuth\n',
    days,
  );
  const brokerBundle = bundle(dir, 'broker', broker.cert, broker.key);
  const clientBundle = bundle(dir, 'client', client.cert, client.key);
  return {
    caCert: join(dir, 'ca-cert.pem'),
    brokerCert: broker.cert,
    brokerKey: broker.key,
    brokerKeystorePem: brokerBundle.pem,
    brokerKeystoreP12: brokerBundle.p12,
    clientCert: client.cert,
    clientKey: client.key,
    clientKeystorePem: clientBundle.pem,
    clientKeystoreP12: clientBundle.p12,
  };
}
