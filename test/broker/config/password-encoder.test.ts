// The password encoder of dynamic password configs: Kafka's stored form (a CSV map with the PBKDF2 and cipher
// parameters), values that decode back under the same secret and not under another, AES-CBC and AES-GCM.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decodePassword,
  encodePassword,
  type PasswordEncoderSettings,
  passwordEncoderSettings,
} from '../../../src/broker/config/password-encoder.js';

const CBC: PasswordEncoderSettings = {
  secret: 'the-secret',
  keyFactoryAlgorithm: null,
  cipherAlgorithm: 'AES/CBC/PKCS5Padding',
  keyLength: 128,
  iterations: 4096,
};

function fields(encoded: string): Map<string, string> {
  return new Map(encoded.split(',').map((e) => [e.slice(0, e.indexOf(':')), e.slice(e.indexOf(':') + 1)]));
}

describe('password encoder', () => {
  test("stores Kafka's fields and decodes back", () => {
    const password = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="pw€";';
    const encoded = encodePassword(CBC, password);
    const f = fields(encoded);
    assert.deepEqual([...f.keys()].sort(), [
      'cipherAlgorithm',
      'encryptedPassword',
      'initializationVector',
      'iterations',
      'keyFactoryAlgorithm',
      'keyLength',
      'passwordLength',
      'salt',
    ]);
    assert.equal(f.get('keyFactoryAlgorithm'), 'PBKDF2WithHmacSHA512');
    assert.equal(f.get('cipherAlgorithm'), 'AES/CBC/PKCS5Padding');
    assert.equal(Buffer.from(f.get('salt')!, 'base64').length, 256);
    assert.equal(Buffer.from(f.get('initializationVector')!, 'base64').length, 16);
    assert.equal(f.get('passwordLength'), String(password.length));
    assert.ok(!encoded.includes('pw€'));
    assert.equal(decodePassword('the-secret', encoded), password);
    // A fresh salt and IV each time.
    assert.notEqual(encodePassword(CBC, password), encoded);
  });

  test('another secret does not decode', () => {
    const encoded = encodePassword(CBC, 'secret value');
    assert.throws(() => decodePassword('another', encoded), /could not be decoded/);
    assert.throws(() => decodePassword('the-secret', 'keyLength:128'), /could not be decoded/);
  });

  test('AES-GCM with a 256-bit key and SHA-256', () => {
    const gcm = {
      ...CBC,
      cipherAlgorithm: 'AES/GCM/NoPadding',
      keyLength: 256,
      keyFactoryAlgorithm: 'PBKDF2WithHmacSHA256',
    };
    const encoded = encodePassword(gcm, 'gcm value');
    assert.equal(fields(encoded).get('authenticationTagLength'), '128');
    assert.equal(decodePassword('the-secret', encoded), 'gcm value');
    // Tampering is detected.
    const f = fields(encoded);
    const data = Buffer.from(f.get('encryptedPassword')!, 'base64');
    data[0]! ^= 1;
    f.set('encryptedPassword', data.toString('base64'));
    const tampered = [...f].map(([k, v]) => `${k}:${v}`).join(',');
    assert.throws(() => decodePassword('the-secret', tampered), /could not be decoded/);
  });

  test('settings come from the static config; none without a secret', () => {
    assert.equal(passwordEncoderSettings(new Map()), null);
    const s = passwordEncoderSettings(
      new Map([
        ['password.encoder.secret', 's'],
        ['password.encoder.iterations', '10000'],
      ]),
    );
    assert.deepEqual(s, { ...CBC, secret: 's', iterations: 10000 });
    assert.throws(() => encodePassword({ ...CBC, cipherAlgorithm: 'DES' }, 'x'), /AES/);
  });
});
