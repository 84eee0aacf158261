// Kafka's client security keys read by the client itself (src/client/security-config.ts): the options they give,
// and a ConfigError naming the key when they are wrong, which the tools turn into a usage error and Connect
// into a ConfigException. The module is the client's, so nothing here depends on the command line.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { UsageError } from '../../src/cli/args.js';
import { securityOptions } from '../../src/cli/client-security.js';
import { ConfigError } from '../../src/client/errors.js';
import { securityOptionsFromProperties } from '../../src/client/security-config.js';
import { clientSecurity } from '../../src/connect/runtime/client-configs.js';

describe('client security keys', () => {
  it('PLAINTEXT gives no tls or sasl; SASL_SSL gives both from PEM files and the JAAS login', (t) => {
    assert.deepEqual(securityOptionsFromProperties({}), {});
    const dir = mkdtempSync(join(tmpdir(), 'brook-security-config-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    writeFileSync(join(dir, 'ca.pem'), ca);
    const options = securityOptionsFromProperties({
      'security.protocol': 'SASL_SSL',
      'ssl.truststore.location': join(dir, 'ca.pem'),
      'sasl.mechanism': 'SCRAM-SHA-512',
      'sasl.jaas.config':
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="a;b";',
    });
    assert.equal(options.tls?.ca, ca);
    assert.deepEqual(options.sasl, { mechanism: 'scram-sha-512', username: 'alice', password: 'a;b' });
  });

  it('a wrong key is a ConfigError naming it, never a command-line error', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ 'security.protocol': 'SASL_FOO' }, /security\.protocol=SASL_FOO/],
      [
        { 'security.protocol': 'SSL', 'ssl.truststore.location': '/nonexistent/ca.pem' },
        /ssl\.truststore\.location/,
      ],
      [{ 'security.protocol': 'SSL', 'ssl.truststore.type': 'JKS' }, /ssl\.truststore\.type=JKS/],
      [
        { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN' },
        /sasl\.jaas\.config is required/,
      ],
      [{ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'GSSAPI' }, /sasl\.mechanism=GSSAPI/],
      [
        { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': 'x' },
        /sasl\.jaas\.config/,
      ],
    ];
    for (const [props, message] of cases) {
      assert.throws(
        () => securityOptionsFromProperties(props),
        (e: unknown) => e instanceof ConfigError && !(e instanceof UsageError) && message.test(e.message),
        JSON.stringify(props),
      );
    }
  });

  it('the tools see a UsageError and Connect a ConfigException, with the same message', () => {
    const props = { 'security.protocol': 'SASL_FOO' };
    assert.throws(
      () => securityOptions(props),
      (e: unknown) => e instanceof UsageError && /SASL_FOO/.test(e.message),
    );
    assert.throws(
      () => clientSecurity(props),
      (e: unknown) => (e as Error).name === 'ConfigException' && /SASL_FOO/.test((e as Error).message),
    );
  });
});
