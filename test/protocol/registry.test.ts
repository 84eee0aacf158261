// The API registry: which APIs it holds, version questions, and what ApiVersions may advertise.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { peekRequestPrefix } from '../../src/protocol/headers.js';
import { DecodeError, Reader } from '../../src/protocol/primitives/index.js';
import {
  APIS,
  ApiKey,
  advertisedVersions,
  findApi,
  getApi,
  isFlexibleVersion,
  isSupportedVersion,
} from '../../src/protocol/registry.js';

describe('API registry', () => {
  it('lists the broker APIs in key order, each with a name and a sane version range', () => {
    const keys = APIS.map((a) => a.apiKey);
    assert.deepEqual(
      keys,
      [...keys].sort((a, b) => a - b),
    );
    for (const api of APIS) {
      assert.ok(api.listeners.includes('broker') || api.listeners.includes('zkBroker'), api.name);
      assert.ok(api.minVersion >= 0 && api.minVersion <= api.maxVersion, api.name);
      assert.equal(findApi(api.apiKey), api);
    }
    assert.equal(getApi(ApiKey.PRODUCE).name, 'Produce');
    assert.equal(getApi(ApiKey.FETCH).maxVersion, 17);
    assert.equal(getApi(ApiKey.API_VERSIONS).maxVersion, 4);
  });

  it('leaves out controller-only APIs and answers unknown keys with a DecodeError', () => {
    assert.equal(findApi(52), undefined, 'Vote is spoken between KRaft controllers only');
    assert.equal(findApi(62), undefined, 'BrokerRegistration goes to a KRaft controller');
    assert.equal(findApi(-1), undefined);
    assert.throws(
      () => getApi(1000),
      (e: unknown) => e instanceof DecodeError && e.kind === 'unknown-api-key',
    );
  });

  it('knows the ZooKeeper-mode inter-broker APIs', () => {
    for (const key of [
      ApiKey.LEADER_AND_ISR,
      ApiKey.STOP_REPLICA,
      ApiKey.UPDATE_METADATA,
      ApiKey.CONTROLLED_SHUTDOWN,
    ]) {
      assert.ok(getApi(key).listeners.includes('zkBroker'));
    }
  });

  it('answers version questions, including flexible versions beyond the newest', () => {
    const produce = getApi(ApiKey.PRODUCE);
    assert.equal(isSupportedVersion(produce, 11), true);
    assert.equal(isSupportedVersion(produce, 12), false);
    assert.equal(isFlexibleVersion(produce, 8), false);
    assert.equal(isFlexibleVersion(produce, 9), true);
    assert.equal(isFlexibleVersion(produce, 40), true);
    assert.equal(produce.firstFlexibleVersion, 9);
    assert.equal(getApi(ApiKey.SASL_HANDSHAKE).firstFlexibleVersion, null);
    assert.equal(getApi(ApiKey.SASL_HANDSHAKE).flexibleVersions, 'none');
  });

  it('does not advertise a newest version Kafka marks unstable, unless asked', () => {
    const endTxn = getApi(ApiKey.END_TXN);
    assert.equal(endTxn.latestVersionUnstable, true);
    assert.deepEqual(advertisedVersions(endTxn), {
      apiKey: 26,
      minVersion: 0,
      maxVersion: endTxn.maxVersion - 1,
    });
    assert.equal(advertisedVersions(endTxn, true)!.maxVersion, endTxn.maxVersion);
    assert.equal(advertisedVersions(getApi(ApiKey.SHARE_FETCH)), null, 'its only version is unstable');
    const fetch = getApi(ApiKey.FETCH);
    assert.deepEqual(advertisedVersions(fetch), { apiKey: 1, minVersion: 0, maxVersion: 17 });
  });

  it('peeks the request prefix without moving the reader', () => {
    const r = new Reader(Buffer.from('03e8000500000009ffff', 'hex'));
    assert.deepEqual(peekRequestPrefix(r), { requestApiKey: 1000, requestApiVersion: 5, correlationId: 9 });
    assert.equal(r.pos, 0);
    assert.throws(
      () => peekRequestPrefix(new Reader(Buffer.from('0001', 'hex'))),
      (e: unknown) => e instanceof DecodeError && e.kind === 'truncated',
    );
  });
});
