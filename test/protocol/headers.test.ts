// Request and response headers: which version goes with which API version, and their byte layouts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodeRequestHeader,
  decodeResponseHeader,
  encodeRequestHeader,
  encodeResponseHeader,
  requestHeaderVersion,
  responseHeaderVersion,
} from '../../src/protocol/headers.js';
import { DecodeError, Reader, Writer } from '../../src/protocol/primitives/index.js';
import { ApiKey } from '../../src/protocol/registry.js';

function hex(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ''), 'hex');
}

describe('request and response headers', () => {
  it('pick header versions the way Kafka does', () => {
    assert.equal(requestHeaderVersion(ApiKey.PRODUCE, 8), 1);
    assert.equal(requestHeaderVersion(ApiKey.PRODUCE, 9), 2);
    assert.equal(requestHeaderVersion(ApiKey.API_VERSIONS, 2), 1);
    assert.equal(requestHeaderVersion(ApiKey.API_VERSIONS, 3), 2);
    assert.equal(requestHeaderVersion(ApiKey.CONTROLLED_SHUTDOWN, 0), 0);
    assert.equal(requestHeaderVersion(ApiKey.CONTROLLED_SHUTDOWN, 1), 1);
    assert.equal(requestHeaderVersion(ApiKey.CONTROLLED_SHUTDOWN, 3), 2);
    assert.equal(responseHeaderVersion(ApiKey.FETCH, 11), 0);
    assert.equal(responseHeaderVersion(ApiKey.FETCH, 12), 1);
    assert.equal(responseHeaderVersion(ApiKey.METADATA, 9), 1);
  });

  it('answer ApiVersions with response header v0 at every version, even unknown newer ones', () => {
    for (let v = 0; v <= 10; v++) assert.equal(responseHeaderVersion(ApiKey.API_VERSIONS, v), 0);
    assert.equal(requestHeaderVersion(ApiKey.API_VERSIONS, 10), 2);
  });

  it('reject an unknown API key with a DecodeError', () => {
    assert.throws(
      () => requestHeaderVersion(9999, 0),
      (e: unknown) => e instanceof DecodeError && e.kind === 'unknown-api-key',
    );
    const frame = hex('7fff 0000 00000001 0000');
    assert.throws(
      () => decodeRequestHeader(new Reader(frame)),
      (e: unknown) => e instanceof DecodeError && e.kind === 'unknown-api-key',
    );
  });

  it('encode request header v2 with a classic (non-compact) client id and an empty tag section', () => {
    const w = new Writer();
    encodeRequestHeader(w, { requestApiKey: 18, requestApiVersion: 3, correlationId: 7, clientId: 'kcat' });
    assert.deepEqual(w.toBuffer(), hex('0012 0003 00000007 0004 6b636174 00'));
    const r = new Reader(w.toBuffer());
    const { header, headerVersion } = decodeRequestHeader(r);
    assert.equal(headerVersion, 2);
    assert.deepEqual(header, { requestApiKey: 18, requestApiVersion: 3, correlationId: 7, clientId: 'kcat' });
    assert.equal(r.remaining, 0);
  });

  it('read request header v1 with a null client id and v0 without one', () => {
    const v1 = new Reader(hex('0003 0001 0000002a ffff'));
    assert.deepEqual(decodeRequestHeader(v1).header, {
      requestApiKey: 3,
      requestApiVersion: 1,
      correlationId: 42,
      clientId: null,
    });
    const v0 = new Reader(hex('0007 0000 00000005 ffff'));
    const decoded = decodeRequestHeader(v0);
    assert.equal(decoded.headerVersion, 0);
    assert.equal(decoded.header.clientId, '');
    assert.equal(v0.remaining, 2, 'v0 has no client id, so the next bytes belong to the body');
  });

  it('skip unknown tagged fields in a v2 request header', () => {
    const r = new Reader(hex('0000 0009 00000001 0001 61 01 05 02 aabb 99'));
    const { header } = decodeRequestHeader(r);
    assert.equal(header.clientId, 'a');
    assert.equal(r.remaining, 1);
  });

  it('write response headers v0 and v1', () => {
    const v0 = new Writer();
    encodeResponseHeader(v0, ApiKey.API_VERSIONS, 3, 9);
    assert.deepEqual(v0.toBuffer(), hex('00000009'));
    const v1 = new Writer();
    encodeResponseHeader(v1, ApiKey.METADATA, 12, 9);
    assert.deepEqual(v1.toBuffer(), hex('00000009 00'));
    assert.deepEqual(decodeResponseHeader(new Reader(v1.toBuffer()), ApiKey.METADATA, 12), {
      correlationId: 9,
    });
  });
});
