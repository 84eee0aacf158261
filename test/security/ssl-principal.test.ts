// Certificate principals: the subject DN in Java's RFC 2253 form, Kafka's ssl.principal.mapping.rules, and the
// TLS settings of a listener (inline PEM, an encrypted PKCS#8 key with ssl.key.password) checked on a bare
// node:tls server with a client certificate from `brook certs`.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import { BROKER_KEYS, brokerKey } from '../../src/broker/config/broker-keys.js';
import { ConfigError } from '../../src/broker/config/config-error.js';
import { ParsedConfig } from '../../src/broker/config/parsed-config.js';
import { type DevCertFiles, writeDevCertificates } from '../../src/security/dev-certs.js';
import { SslPrincipalMapper } from '../../src/security/ssl-principal.js';
import { listenerTls } from '../../src/security/tls-listener.js';

const DN = 'CN=client,OU=Clients,O=Brook dev,C=US';

describe('ssl.principal.mapping.rules', () => {
  it('DEFAULT keeps the distinguished name', () => {
    assert.equal(new SslPrincipalMapper('DEFAULT').nameOf(DN), DN);
  });

  it('takes the first rule that matches the whole name, with groups and case folding', () => {
    const mapper = new SslPrincipalMapper(
      'RULE:^CN=(.*?),OU=Admins,.*$/admin-$1/, RULE:^CN=(.*?),OU=(.*?),O=.*$/$1@$2/L, DEFAULT',
    );
    assert.equal(mapper.nameOf(DN), 'client@clients');
    assert.equal(mapper.nameOf('CN=root,OU=Admins,O=X'), 'admin-root');
    assert.equal(mapper.nameOf('C=US'), 'C=US');
    assert.equal(new SslPrincipalMapper('RULE:^CN=(.*?),.*$/$1/U').nameOf(DN), 'CLIENT');
  });

  it('gives no name when no rule applies, and refuses malformed rules', () => {
    assert.equal(new SslPrincipalMapper('RULE:^CN=admin,.*$/admin/').nameOf(DN), null);
    assert.throws(() => new SslPrincipalMapper('RULE:^CN=(.*$/x/'), /Invalid rule/);
    assert.throws(() => new SslPrincipalMapper('FOO'), /Invalid rule/);
  });
});

describe('listener TLS settings', () => {
  let dir: string;
  let certs: DevCertFiles;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'brook-principal-'));
    certs = writeDevCertificates({ dir });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function settings(entries: Record<string, string>): ParsedConfig {
    return ParsedConfig.parse(BROKER_KEYS, new Map(Object.entries(entries)), brokerKey);
  }

  async function principalOver(values: ParsedConfig, client: tls.ConnectionOptions): Promise<string | Error> {
    const listener = listenerTls(values, 'SSL');
    const server = tls.createServer(listener.options);
    const principal = new Promise<string | Error>((resolve) =>
      server.once('secureConnection', (socket) => {
        resolve(listener.principalOf(socket));
        socket.destroy();
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      ca: readFileSync(certs.caCert),
      servername: 'localhost',
      ...client,
    });
    socket.on('error', () => {});
    try {
      return await principal;
    } finally {
      socket.destroy();
      server.close();
    }
  }

  it('names an mTLS client by its DN in RFC 2253 order, an anonymous one User:ANONYMOUS', async () => {
    const values = settings({
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.brokerKeystorePem,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': certs.caCert,
      'ssl.client.auth': 'requested',
    });
    const withCert = await principalOver(values, {
      cert: readFileSync(certs.clientCert),
      key: readFileSync(certs.clientKey),
    });
    assert.equal(withCert, `User:${DN}`);
    assert.equal(await principalOver(values, {}), 'User:ANONYMOUS');
  });

  it('ignores the broker-wide ssl.client.auth on a SASL_SSL listener, as Kafka does', () => {
    const base = {
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.brokerKeystorePem,
      'ssl.client.auth': 'required',
    };
    assert.equal(listenerTls(settings(base), 'SASL_SSL', true).clientAuth, 'none');
    assert.equal(listenerTls(settings(base), 'SSL').clientAuth, 'required');
    const scoped = { ...base, 'listener.name.sasl_ssl.ssl.client.auth': 'requested' };
    assert.equal(listenerTls(settings(scoped), 'SASL_SSL', true).clientAuth, 'requested');
  });

  it('maps the principal with listener-scoped inline PEM and an encrypted key', async () => {
    const encrypted = execFileSync('openssl', [
      'pkcs8',
      '-topk8',
      '-in',
      certs.brokerKey,
      '-v2',
      'aes-256-cbc',
      '-passout',
      'pass:key-secret',
    ]).toString();
    const values = settings({
      'listener.name.ssl.ssl.keystore.type': 'PEM',
      'listener.name.ssl.ssl.keystore.key': encrypted,
      'listener.name.ssl.ssl.keystore.certificate.chain': readFileSync(certs.brokerCert, 'utf8'),
      'listener.name.ssl.ssl.key.password': 'key-secret',
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.certificates': readFileSync(certs.caCert, 'utf8'),
      'ssl.client.auth': 'required',
      'ssl.principal.mapping.rules': 'RULE:^CN=(.*?),OU=.*$/$1/U',
    });
    const principal = await principalOver(values, {
      cert: readFileSync(certs.clientCert),
      key: readFileSync(certs.clientKey),
    });
    assert.equal(principal, 'User:CLIENT');
    assert.throws(
      () =>
        listenerTls(
          settings({
            ...Object.fromEntries([...values.originals]),
            'listener.name.ssl.ssl.key.password': 'wrong',
          }),
          'SSL',
        ),
      (err: Error) =>
        err instanceof ConfigError && /listener\.name\.ssl\.ssl\.keystore\.key/.test(err.message),
    );
  });
});
