// The registry of every Kafka API that Brook can encode and decode: API key -> name, version range, flexible
// versions, listeners and the four codecs. Built once from the generated list in messages/index.ts. The
// broker's ApiVersions response advertises from this table, narrowed to the APIs it has handlers for.
//
// Codec signatures: decoders take (reader, version) and return the body; encoders take (writer, version, body).
// Decoders read exactly one body and do not check that the frame ends there: Kafka's broker ignores bytes after
// a request body, and so do these codecs. A caller that wants strictness calls reader.expectEnd().

import type { ApiDescriptor } from './messages/codec-support.js';
import { API_DESCRIPTORS } from './messages/index.js';
import { DecodeError } from './primitives/index.js';

export type { ApiDescriptor } from './messages/codec-support.js';
export { ApiKey } from './messages/index.js';

const byKey: (ApiDescriptor | undefined)[] = [];
for (const api of API_DESCRIPTORS) byKey[api.apiKey] = api;

/** Every API in key order. */
export const APIS: readonly ApiDescriptor[] = API_DESCRIPTORS;

/** The API with this key, or undefined when Brook has no codec for it. */
export function findApi(apiKey: number): ApiDescriptor | undefined {
  return byKey[apiKey];
}

/** The API with this key; an unknown key is a DecodeError('unknown-api-key'), since it comes off the wire. */
export function getApi(apiKey: number): ApiDescriptor {
  const api = byKey[apiKey];
  if (api === undefined) throw new DecodeError('unknown-api-key', `unknown API key ${apiKey}`);
  return api;
}

export function isSupportedVersion(api: ApiDescriptor, version: number): boolean {
  return version >= api.minVersion && version <= api.maxVersion;
}

/** Flexible versions are open-ended, so this also answers for versions newer than maxVersion. */
export function isFlexibleVersion(api: ApiDescriptor, version: number): boolean {
  return api.firstFlexibleVersion !== null && version >= api.firstFlexibleVersion;
}

export interface AdvertisedVersions {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
}

/**
 * The version range to advertise in ApiVersions for an API. Kafka does not advertise a newest version it marks
 * unstable unless told to (unstable.api.versions.enable), so neither does this unless `includeUnstable` is set.
 * Null when nothing is left to advertise (an API whose only version is unstable).
 */
export function advertisedVersions(api: ApiDescriptor, includeUnstable = false): AdvertisedVersions | null {
  const maxVersion = api.latestVersionUnstable && !includeUnstable ? api.maxVersion - 1 : api.maxVersion;
  return maxVersion < api.minVersion ? null : { apiKey: api.apiKey, minVersion: api.minVersion, maxVersion };
}
