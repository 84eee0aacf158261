import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ListenerConfigError, parseListeners, parseSecurityProtocolMap } from '../../src/network/listener.js';
import { NetworkConfigError, networkDefaults, resolveNetworkOptions } from '../../src/network/options.js';
import { SecurityState } from '../../src/network/security.js';
import { parsePerAddressOverrides } from '../../src/network/socket-server.js';

describe('network options', () => {
  it("fills in Kafka's defaults", () => {
    const options = resolveNetworkOptions({ 'queued.max.requests': 7 });
    assert.equal(options['socket.request.max.bytes'], 104_857_600);
    assert.equal(options['connections.max.idle.ms'], 600_000);
    assert.equal(options['queued.max.requests'], 7);
    assert.equal(networkDefaults['queued.max.requests'], 500);
  });

  it('rejects unknown keys and out-of-range values with the key named', () => {
    assert.throws(
      () => resolveNetworkOptions({ 'queued.max.requests': 0 }),
      (e: unknown) => e instanceof NetworkConfigError && e.key === 'queued.max.requests',
    );
    assert.throws(
      () => resolveNetworkOptions({ 'socket.request.max.bytes': 2 ** 31 }),
      (e: unknown) => e instanceof NetworkConfigError && e.key === 'socket.request.max.bytes',
    );
    assert.throws(
      () => resolveNetworkOptions({ 'max.connections': '5' } as never),
      (e: unknown) => e instanceof NetworkConfigError && e.key === 'max.connections',
    );
    assert.throws(
      () => resolveNetworkOptions({ 'no.such.key': 1 } as never),
      (e: unknown) => e instanceof NetworkConfigError && e.key === 'no.such.key',
    );
  });
});

describe('listeners', () => {
  it('parses listeners with a protocol map, empty hosts and IPv6 addresses', () => {
    const map = parseSecurityProtocolMap('INTERNAL:PLAINTEXT, EXTERNAL:SASL_SSL');
    const listeners = parseListeners('INTERNAL://127.0.0.1:9092,EXTERNAL://:9093,V6://[::1]:0', {
      ...map,
      V6: 'PLAINTEXT',
    });
    assert.deepEqual(listeners, [
      { name: 'INTERNAL', host: '127.0.0.1', port: 9092, securityProtocol: 'PLAINTEXT' },
      { name: 'EXTERNAL', host: '', port: 9093, securityProtocol: 'SASL_SSL' },
      { name: 'V6', host: '::1', port: 0, securityProtocol: 'PLAINTEXT' },
    ]);
  });

  it('rejects unmapped names, duplicates, bad ports and bad protocols', () => {
    assert.throws(() => parseListeners('FOO://:1'), ListenerConfigError);
    assert.throws(() => parseListeners('PLAINTEXT://:1,PLAINTEXT://:2'), ListenerConfigError);
    assert.throws(() => parseListeners('PLAINTEXT://:70000'), ListenerConfigError);
    assert.throws(() => parseListeners('PLAINTEXT:/:1'), ListenerConfigError);
    assert.throws(() => parseListeners(''), ListenerConfigError);
    assert.throws(() => parseSecurityProtocolMap('A:TLS'), ListenerConfigError);
  });
});

describe('security state', () => {
  it('admits only ApiVersions and SASL requests before a SASL connection authenticates', () => {
    const state = new SecurityState('SASL_PLAINTEXT');
    assert.equal(state.authenticated, false);
    assert.equal(state.admits(18), true);
    assert.equal(state.admits(17), true);
    assert.equal(state.admits(36), false, 'SaslAuthenticate before a handshake');
    assert.equal(state.admits(3), false);
    state.saslState = 'authenticating';
    assert.equal(state.admits(36), true, 'SaslAuthenticate after a v1 handshake');
    assert.equal(state.admits(3), true, 'handed to the broker, which answers ILLEGAL_SASL_STATE and closes');
    state.fail();
    assert.equal(state.admits(3), false);
    state.saslState = 'authenticating';
    state.authenticate('User:alice');
    assert.equal(state.admits(3), true);
    assert.equal(state.principal, 'User:alice');
    assert.equal(new SecurityState('PLAINTEXT').admits(0), true);
  });
});

describe('max.connections.per.ip.overrides', () => {
  it('parses IPv4 and bracketed IPv6 addresses and host names (as Kafka), and rejects bad names and counts', () => {
    assert.deepEqual(
      [...parsePerAddressOverrides(' 10.0.0.1:5, [::1]:0 ,broker-1.example:7')],
      [
        ['10.0.0.1', 5],
        ['::1', 0],
        ['broker-1.example', 7],
      ],
    );
    assert.throws(() => parsePerAddressOverrides('bad host:5'), NetworkConfigError);
    assert.throws(() => parsePerAddressOverrides('-broker:5'), NetworkConfigError);
    assert.throws(() => parsePerAddressOverrides('10.0.0.1:-1'), NetworkConfigError);
    assert.throws(() => parsePerAddressOverrides('10.0.0.1'), NetworkConfigError);
  });
});
