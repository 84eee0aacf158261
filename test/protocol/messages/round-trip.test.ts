// Every API and version, request and response, with every field set (and again with nulls), survives
// encode then decode, and re-encodes to the same bytes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiPairs, loadMessages } from '../../../src/protocol/generator/generate.js';
import type { MessageSchema } from '../../../src/protocol/generator/schema.js';
import { formatVersions } from '../../../src/protocol/generator/versions.js';
import { Reader, Writer } from '../../../src/protocol/primitives/index.js';
import { APIS, findApi } from '../../../src/protocol/registry.js';
import { SampleBuilder } from './sample-values.js';

const messages = loadMessages();
const pairs = apiPairs(messages);

type Encode = (w: Writer, version: number, value: unknown) => void;
type Decode = (r: Reader, version: number) => unknown;

/** Encodes, decodes, and encodes again: the value must survive and the bytes must not change. */
function roundTrip(encode: Encode, decode: Decode, version: number, value: unknown, what: string): void {
  const w = new Writer();
  encode(w, version, value);
  const bytes = w.toBuffer();
  const r = new Reader(bytes);
  const decoded = decode(r, version);
  assert.equal(r.remaining, 0, `${what}: decoder left ${r.remaining} bytes`);
  assert.deepEqual(decoded, value, `${what}: decoded value differs`);
  const again = new Writer();
  encode(again, version, decoded);
  assert.ok(again.toBuffer().equals(bytes), `${what}: re-encoding changed the bytes`);
}

function checkEveryVersion(message: MessageSchema, encode: Encode, decode: Decode): number {
  let checked = 0;
  for (let version = message.validVersions.min; version <= message.validVersions.max; version++) {
    for (const nulls of [false, true]) {
      const value = new SampleBuilder({ nulls, arrayLength: 2 }).struct(message.root, version);
      roundTrip(encode, decode, version, value, `${message.name} v${version}${nulls ? ' with nulls' : ''}`);
      checked++;
    }
  }
  return checked;
}

describe('generated API codecs round-trip every version with every field set', () => {
  it('the registry holds exactly the broker APIs of the specification, with their version ranges', () => {
    assert.ok(pairs.length >= 70, `only ${pairs.length} APIs`);
    assert.deepEqual(
      APIS.map((a) => a.apiKey),
      pairs.map((p) => p.request.apiKey),
    );
    for (const { request } of pairs) {
      const api = findApi(request.apiKey!)!;
      assert.equal(api.minVersion, request.validVersions.min, request.name);
      assert.equal(api.maxVersion, request.validVersions.max, request.name);
      assert.equal(api.flexibleVersions, formatVersions(request.flexibleVersions), request.name);
    }
  });

  for (const { request, response } of pairs) {
    it(`${request.name.replace(/Request$/, '')} (key ${request.apiKey}) v${formatVersions(request.validVersions)}`, () => {
      const api = findApi(request.apiKey!)!;
      const requests = checkEveryVersion(request, api.encodeRequest, api.decodeRequest);
      const responses = checkEveryVersion(response, api.encodeResponse, api.decodeResponse);
      const versions = request.validVersions.max - request.validVersions.min + 1;
      assert.equal(requests, versions * 2);
      assert.equal(responses, versions * 2);
    });
  }
});
