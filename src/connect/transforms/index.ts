// Registers Kafka's built-in transforms and predicates under their class names
// (org.apache.kafka.connect.transforms.InsertField$Value, ...predicates.TopicNameMatches) and simple names.

import type { Plugins } from '../runtime/plugins.js';
import {
  Cast,
  ExtractField,
  Flatten,
  HoistField,
  InsertField,
  keyAndValue,
  MaskField,
  ReplaceField,
  ValueToKey,
} from './field-transforms.js';
import {
  DropHeaders,
  Filter,
  HasHeaderKey,
  HeaderFrom,
  RecordIsTombstone,
  RegexRouter,
  TimestampRouter,
  TopicNameMatches,
} from './routing-transforms.js';

const PACKAGE = 'org.apache.kafka.connect.transforms';

export function registerTransforms(plugins: Plugins, version: string): void {
  const both = { InsertField, ReplaceField, MaskField, ExtractField, HoistField, Flatten, Cast, HeaderFrom };
  for (const [name, ctor] of Object.entries(both)) {
    const { Key, Value } = keyAndValue(ctor);
    plugins.register({ className: `${PACKAGE}.${name}$Key`, type: 'transformation', version, ctor: Key });
    plugins.register({ className: `${PACKAGE}.${name}$Value`, type: 'transformation', version, ctor: Value });
  }
  const single = { ValueToKey, TimestampRouter, RegexRouter, Filter, DropHeaders };
  for (const [name, ctor] of Object.entries(single)) {
    plugins.register({ className: `${PACKAGE}.${name}`, type: 'transformation', version, ctor });
  }
  const predicates = { TopicNameMatches, HasHeaderKey, RecordIsTombstone };
  for (const [name, ctor] of Object.entries(predicates)) {
    plugins.register({ className: `${PACKAGE}.predicates.${name}`, type: 'predicate', version, ctor });
  }
}
