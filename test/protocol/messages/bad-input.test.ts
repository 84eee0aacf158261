// Malformed bodies: truncation at every byte, huge counts, negative lengths, bad varints, overrunning tagged
// fields and unknown versions each end in a DecodeError of the expected kind.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiPairs, loadMessages } from '../../../src/protocol/generator/generate.js';
import { decodeProduceRequest } from '../../../src/protocol/messages/00-produce.js';
import { decodeMetadataRequest } from '../../../src/protocol/messages/03-metadata.js';
import { decodeApiVersionsResponse } from '../../../src/protocol/messages/18-api-versions.js';
import { DecodeError, type DecodeErrorKind, Reader, Writer } from '../../../src/protocol/primitives/index.js';
import { APIS, findApi } from '../../../src/protocol/registry.js';
import { SampleBuilder } from './sample-values.js';

function hex(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ''), 'hex');
}

function expectDecodeError(fn: () => unknown, kind?: DecodeErrorKind): void {
  assert.throws(fn, (e: unknown) => e instanceof DecodeError && (kind === undefined || e.kind === kind));
}

const pairs = apiPairs(loadMessages());

/** (API key, version, direction) samples for the truncation test: old and flexible layouts, tags, records. */
const TRUNCATION_SAMPLES: [number, number, 'request' | 'response'][] = [
  [0, 3, 'request'],
  [0, 11, 'request'],
  [0, 11, 'response'],
  [1, 4, 'request'],
  [1, 17, 'request'],
  [1, 16, 'response'],
  [3, 12, 'response'],
  [11, 9, 'request'],
  [18, 4, 'response'],
  [19, 7, 'request'],
  [68, 1, 'response'],
];

describe('decoders on bad input', () => {
  it('reject a body cut at every byte with a DecodeError', () => {
    for (const [apiKey, version, direction] of TRUNCATION_SAMPLES) {
      const pair = pairs.find((p) => p.request.apiKey === apiKey)!;
      const api = findApi(apiKey)!;
      const message = direction === 'request' ? pair.request : pair.response;
      const encode = direction === 'request' ? api.encodeRequest : api.encodeResponse;
      const decode = direction === 'request' ? api.decodeRequest : api.decodeResponse;
      const w = new Writer();
      encode(w, version, new SampleBuilder({ nulls: false, arrayLength: 2 }).struct(message.root, version));
      const bytes = w.toBuffer();
      for (let cut = 0; cut < bytes.length; cut++) {
        expectDecodeError(() => decode(new Reader(bytes.subarray(0, cut)), version));
      }
      decode(new Reader(bytes), version);
    }
  });

  it('reject a huge array count before allocating anything', () => {
    expectDecodeError(
      () => decodeMetadataRequest(new Reader(hex('7fffffff 0001 61')), 1),
      'length-exceeds-input',
    );
    // Flexible: compact count 0xfffffffe elements, in a five-byte varint.
    expectDecodeError(
      () => decodeMetadataRequest(new Reader(hex('ffffffff0f 00 01 00')), 12),
      'length-exceeds-input',
    );
    // A count that fits the bytes only if elements were one byte, while a topic takes at least six.
    expectDecodeError(
      () => decodeProduceRequest(new Reader(hex(`ffff ffff 00000000 00000004 ${'00'.repeat(8)}`)), 3),
      'length-exceeds-input',
    );
  });

  it('reject negative string and array lengths', () => {
    expectDecodeError(() => decodeMetadataRequest(new Reader(hex('00000001 fffe')), 1), 'negative-length');
    expectDecodeError(() => decodeMetadataRequest(new Reader(hex('fffffffe')), 1), 'negative-length');
    expectDecodeError(() => decodeMetadataRequest(new Reader(hex('ffffffff')), 0), 'negative-length');
    // A compact string of length -1 (null) where the field may not be null.
    expectDecodeError(
      () => decodeProduceRequest(new Reader(hex('00 0001 00000000 02 00 01 00 00')), 9),
      'bad-value',
    );
  });

  it('reject varints longer than their width', () => {
    expectDecodeError(() => decodeMetadataRequest(new Reader(hex('ffffffffffff')), 12), 'bad-varint');
    expectDecodeError(() => decodeProduceRequest(new Reader(hex('80808080807f')), 9), 'bad-varint');
  });

  it('reject tagged fields that overrun the input or their declared size', () => {
    // ApiVersions v3 response: no keys, throttle 0, one tagged field (tag 1, the epoch) claiming 100 bytes.
    expectDecodeError(
      () => decodeApiVersionsResponse(new Reader(hex('0000 01 00000000 01 01 64 00')), 3),
      'length-exceeds-input',
    );
    // Tag 1 declares 2 bytes but an int64 epoch reads 8.
    expectDecodeError(
      () => decodeApiVersionsResponse(new Reader(hex('0000 01 00000000 01 01 02 0000000000000005')), 3),
      'bad-value',
    );
    // An unknown tag is skipped by its size.
    const r = new Reader(hex('0000 01 00000000 01 63 02 abcd'));
    assert.equal(decodeApiVersionsResponse(r, 3).finalizedFeaturesEpoch, -1n);
    assert.equal(r.remaining, 0);
  });

  it('refuse versions outside every API range in both directions', () => {
    for (const api of APIS) {
      for (const version of [api.minVersion - 1, api.maxVersion + 1, Number.NaN]) {
        expectDecodeError(
          () => api.decodeRequest(new Reader(Buffer.alloc(64)), version),
          'unsupported-version',
        );
        expectDecodeError(
          () => api.decodeResponse(new Reader(Buffer.alloc(64)), version),
          'unsupported-version',
        );
        expectDecodeError(() => api.encodeRequest(new Writer(), version, {}), 'unsupported-version');
        expectDecodeError(() => api.encodeResponse(new Writer(), version, {}), 'unsupported-version');
      }
    }
  });
});
