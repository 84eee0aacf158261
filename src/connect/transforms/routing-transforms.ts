// Kafka's routing, filtering and header transforms with their options: TimestampRouter, RegexRouter, Filter,
// HeaderFrom ($Key/$Value), DropHeaders; and the predicates TopicNameMatches, HasHeaderKey and
// RecordIsTombstone that gate any transform (`transforms.<alias>.predicate`, `.negate`).

import type { ConfigDef } from '../api/config-def.js';
import type { ConnectHeader } from '../api/records.js';
import type { Schema } from '../data/schema.js';
import { Struct } from '../data/struct.js';
import { ConfigException, DataException } from '../errors.js';
import {
  copySchemaBasics,
  defWith,
  KeyOrValueTransform,
  listProp,
  requireMap,
  requireStruct,
} from './support.js';
import type { AnyRecord, Predicate, Transformation } from './transformation.js';

// ---- TimestampRouter ------------------------------------------------------------------------------------

/** Java SimpleDateFormat's common letters, in UTC as Kafka's TimestampRouter uses them. */
export function formatTimestamp(ms: number, pattern: string): string {
  const d = new Date(ms);
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  let out = '';
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === "'") {
      const end = pattern.indexOf("'", i + 1);
      out += end === i + 1 ? "'" : pattern.slice(i + 1, end < 0 ? undefined : end);
      i = end < 0 ? pattern.length : end + 1;
      continue;
    }
    let n = 1;
    while (pattern[i + n] === c) n++;
    i += n;
    switch (c) {
      case 'y':
        out += n === 2 ? pad(d.getUTCFullYear() % 100, 2) : pad(d.getUTCFullYear(), n);
        break;
      case 'M':
        out += pad(d.getUTCMonth() + 1, n);
        break;
      case 'd':
        out += pad(d.getUTCDate(), n);
        break;
      case 'H':
        out += pad(d.getUTCHours(), n);
        break;
      case 'm':
        out += pad(d.getUTCMinutes(), n);
        break;
      case 's':
        out += pad(d.getUTCSeconds(), n);
        break;
      case 'S':
        out += pad(d.getUTCMilliseconds(), n);
        break;
      default:
        if (/[a-zA-Z]/.test(c))
          throw new ConfigException(`Unsupported letter '${c}' in timestamp.format ${pattern}`);
        out += c.repeat(n);
    }
  }
  return out;
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: Kafka's placeholders, not a template.
const DEFAULT_TOPIC_FORMAT = '${topic}-${timestamp}';
// biome-ignore lint/suspicious/noTemplateCurlyInString: Kafka's placeholders, not a template.
const TOPIC_FORMAT_DOC = 'Format string which can contain ${topic} and ${timestamp} as placeholders.';

export class TimestampRouter implements Transformation {
  private topicFormat = DEFAULT_TOPIC_FORMAT;
  private timestampFormat = 'yyyyMMdd';

  configure(props: Readonly<Record<string, string>>): void {
    this.topicFormat = props['topic.format'] ?? this.topicFormat;
    this.timestampFormat = props['timestamp.format'] ?? this.timestampFormat;
    formatTimestamp(0, this.timestampFormat);
  }

  config(): ConfigDef {
    return defWith(
      ['topic.format', 'STRING', DEFAULT_TOPIC_FORMAT, TOPIC_FORMAT_DOC],
      [
        'timestamp.format',
        'STRING',
        'yyyyMMdd',
        'Format string for the timestamp that is compatible with java.text.SimpleDateFormat.',
      ],
    );
  }

  apply<R extends AnyRecord>(r: R): R | null {
    if (r.timestamp === null) throw new DataException(`Timestamp missing on record: ${r.topic}`);
    const ts = formatTimestamp(r.timestamp, this.timestampFormat);
    return r.newRecord({
      topic: this.topicFormat.replace(/\$\{topic\}/g, r.topic).replace(/\$\{timestamp\}/g, ts),
    }) as R;
  }

  close(): void {}
}

// ---- RegexRouter ----------------------------------------------------------------------------------------

export class RegexRouter implements Transformation {
  private regex: RegExp = /$^/;
  private replacement = '';

  configure(props: Readonly<Record<string, string>>): void {
    const pattern = props.regex;
    if (pattern === undefined)
      throw new ConfigException('Missing required configuration "regex" which has no default value.');
    try {
      this.regex = new RegExp(`^(?:${pattern})$`);
    } catch (err) {
      throw ConfigException.invalid('regex', pattern, (err as Error).message);
    }
    if (props.replacement === undefined)
      throw new ConfigException('Missing required configuration "replacement" which has no default value.');
    this.replacement = props.replacement;
  }

  config(): ConfigDef {
    return defWith(
      ['regex', 'STRING', undefined, 'Regular expression to use for matching.'],
      ['replacement', 'STRING', undefined, 'Replacement string.'],
    );
  }

  apply<R extends AnyRecord>(r: R): R | null {
    if (!this.regex.test(r.topic)) return r;
    return r.newRecord({ topic: r.topic.replace(this.regex, this.replacement) }) as R;
  }

  close(): void {}
}

// ---- Filter ---------------------------------------------------------------------------------------------

/** Drops every record it is applied to: used with a predicate (and negate) to choose which. */
export class Filter implements Transformation {
  configure(): void {}
  config(): ConfigDef {
    return defWith();
  }
  apply<R extends AnyRecord>(_r: R): R | null {
    return null;
  }
  close(): void {}
}

// ---- HeaderFrom, DropHeaders ----------------------------------------------------------------------------

export class HeaderFrom extends KeyOrValueTransform {
  private fields: string[] = [];
  private headers: string[] = [];
  private move = false;

  configure(props: Readonly<Record<string, string>>): void {
    this.fields = listProp(props, 'fields');
    this.headers = listProp(props, 'headers');
    if (this.fields.length !== this.headers.length) {
      throw ConfigException.invalid(
        'headers',
        props.headers,
        "'fields' config must have the same number of elements as 'headers' config.",
      );
    }
    const op = (props.operation ?? '').trim().toLowerCase();
    if (op !== 'copy' && op !== 'move')
      throw ConfigException.invalid('operation', props.operation, 'String must be one of: move, copy');
    this.move = op === 'move';
  }

  config(): ConfigDef {
    return defWith(
      [
        'fields',
        'LIST',
        undefined,
        'Field names in the record whose values are to be copied or moved to headers.',
      ],
      [
        'headers',
        'LIST',
        undefined,
        'Header names, in the same order as the field names listed in the fields configuration property.',
      ],
      [
        'operation',
        'STRING',
        undefined,
        'Either move if the fields are to be moved to the headers (removed from the key/value), or copy if the fields are to be copied to the headers (retained in the key/value).',
      ],
    );
  }

  protected applySchemaless<R extends AnyRecord>(r: R, value: unknown): R | null {
    const map = requireMap(value, 'header from');
    const headers: ConnectHeader[] = [...r.headers];
    const out = { ...map };
    this.fields.forEach((f, i) => {
      headers.push({ key: this.headers[i]!, schema: null, value: map[f] ?? null });
      if (this.move) delete out[f];
    });
    const next = this.replace(r, null, this.move ? out : value);
    return next.newRecord({ headers }) as R;
  }

  protected applyWithSchema<R extends AnyRecord>(r: R, schema: Schema, value: unknown): R | null {
    const struct = requireStruct(value, 'header from');
    const headers: ConnectHeader[] = [...r.headers];
    this.fields.forEach((f, i) => {
      const field = schema.field(f);
      if (field === undefined) throw new DataException(`${f} is not a valid field name`);
      headers.push({ key: this.headers[i]!, schema: field.schema, value: struct.get(f) });
    });
    if (!this.move) return r.newRecord({ headers }) as R;
    const b = copySchemaBasics(schema);
    const kept = schema.fields().filter((f) => !this.fields.includes(f.name));
    for (const f of kept) b.field(f.name, f.schema);
    const next = new Struct(b.build());
    for (const f of kept) next.put(f.name, struct.getWithoutDefault(f.name) ?? null);
    return this.replace(r, next.schema, next).newRecord({ headers }) as R;
  }
}

export class DropHeaders implements Transformation {
  private headers = new Set<string>();

  configure(props: Readonly<Record<string, string>>): void {
    this.headers = new Set(listProp(props, 'headers'));
    if (this.headers.size === 0)
      throw new ConfigException('Missing required configuration "headers" which has no default value.');
  }

  config(): ConfigDef {
    return defWith(['headers', 'LIST', undefined, 'The name of the headers to be removed.']);
  }

  apply<R extends AnyRecord>(r: R): R | null {
    return r.newRecord({ headers: r.headers.filter((h) => !this.headers.has(h.key)) }) as R;
  }

  close(): void {}
}

// ---- Predicates -----------------------------------------------------------------------------------------

export class TopicNameMatches implements Predicate {
  private pattern: RegExp = /$^/;

  configure(props: Readonly<Record<string, string>>): void {
    const p = props.pattern;
    if (p === undefined || p === '')
      throw new ConfigException('Missing required configuration "pattern" which has no default value.');
    try {
      this.pattern = new RegExp(`^(?:${p})$`);
    } catch (err) {
      throw ConfigException.invalid('pattern', p, (err as Error).message);
    }
  }
  config(): ConfigDef {
    return defWith([
      'pattern',
      'STRING',
      undefined,
      "A Java regular expression for matching against the name of a record's topic.",
    ]);
  }
  test(r: AnyRecord): boolean {
    return this.pattern.test(r.topic);
  }
  close(): void {}
}

export class HasHeaderKey implements Predicate {
  private name = '';

  configure(props: Readonly<Record<string, string>>): void {
    this.name = props.name ?? '';
    if (this.name === '')
      throw new ConfigException('Missing required configuration "name" which has no default value.');
  }
  config(): ConfigDef {
    return defWith(['name', 'STRING', undefined, 'The header name.']);
  }
  test(r: AnyRecord): boolean {
    return r.headers.some((h) => h.key === this.name);
  }
  close(): void {}
}

export class RecordIsTombstone implements Predicate {
  configure(): void {}
  config(): ConfigDef {
    return defWith();
  }
  test(r: AnyRecord): boolean {
    return r.value === null;
  }
  close(): void {}
}
