// The error responses of src/protocol/error-response.ts for every API and version the codecs know: built from any
// request (with nulls where allowed, with empty and with filled collections), each encodes and decodes as its API's
// response. The wire test of every advertised API is in test/security/sasl.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorResponseBody } from '../../src/protocol/error-response.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { loadMessages } from '../../src/protocol/generator/generate.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { ApiKey, findApi } from '../../src/protocol/registry.js';
import { SampleBuilder } from './messages/sample-values.js';

const ERROR = { code: ErrorCode.ILLEGAL_SASL_STATE, message: 'refused' };

describe('error responses', () => {
  it('every API, every version: the error response to any request encodes and decodes', () => {
    const failures: string[] = [];
    let built = 0;
    for (const message of loadMessages().filter((m) => m.kind === 'request')) {
      const api = findApi(message.apiKey!);
      if (api === undefined) continue;
      for (let version = api.minVersion; version <= api.maxVersion; version++) {
        for (const nulls of [false, true]) {
          for (const arrayLength of [0, 2]) {
            const request = new SampleBuilder({ nulls, arrayLength }).struct(message.root, version);
            try {
              const response = errorResponseBody(api.apiKey, version, request, ERROR);
              assert.notEqual(response, null);
              const w = new Writer(64);
              api.encodeResponse(w, version, response);
              api.decodeResponse(new Reader(w.toBuffer()), version);
              built++;
            } catch (err) {
              failures.push(
                `${api.name} v${version} nulls=${nulls} length=${arrayLength}: ${(err as Error).message}`,
              );
            }
          }
        }
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(built > 1000, String(built));
  });

  it('a Produce with acks=0 gets no response, as Kafka', () => {
    const request = { transactionalId: null, acks: 0, timeoutMs: 1000, topicData: [] };
    assert.equal(errorResponseBody(ApiKey.PRODUCE, 9, request, ERROR), null);
  });
});
