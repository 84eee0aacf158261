// A structured value with a struct schema (Kafka's Struct): one slot per field, in the schema's order. put()
// checks each value against its field's schema; validate() checks that every required field is set.

import { DataException } from '../errors.js';
import type { Field, Schema } from './schema.js';
import { validateValue } from './values.js';

export class Struct {
  private readonly values: unknown[];

  constructor(readonly schema: Schema) {
    if (schema.type !== 'struct') throw new DataException(`Not a struct schema: ${schema.toString()}`);
    this.values = new Array(schema.fields().length).fill(undefined);
  }

  private lookup(name: string): Field {
    const field = this.schema.field(name);
    if (field === undefined) throw new DataException(`${name} is not a valid field name`);
    return field;
  }

  /** The field's value, or its default when unset. */
  get(name: string): unknown {
    const field = this.lookup(name);
    const value = this.values[field.index];
    if (value === undefined || value === null) {
      return field.schema.hasDefault() ? field.schema.defaultValue : (value ?? null);
    }
    return value;
  }

  /** The value as set, without defaults (undefined when never set). */
  getWithoutDefault(name: string): unknown {
    return this.values[this.lookup(name).index];
  }

  put(name: string, value: unknown): this {
    const field = this.lookup(name);
    validateValue(field.schema, value, name);
    this.values[field.index] = value;
    return this;
  }

  validate(): void {
    validateValue(this.schema, this);
  }

  equals(other: unknown): boolean {
    if (!(other instanceof Struct) || !this.schema.equals(other.schema)) return false;
    return this.schema.fields().every((f) => valuesEqual(this.get(f.name), other.get(f.name)));
  }

  toString(): string {
    return `Struct{${this.schema
      .fields()
      .filter((f) => this.values[f.index] !== undefined && this.values[f.index] !== null)
      .map((f) => `${f.name}=${String(this.values[f.index])}`)
      .join(',')}}`;
  }
}

export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Struct) return a.equals(b);
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return BigInt(a) === BigInt(b);
  }
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => valuesEqual(x, b[i]));
  if (a instanceof Map && b instanceof Map) {
    return a.size === b.size && [...a].every(([k, v]) => b.has(k) && valuesEqual(v, b.get(k)));
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    if (typeof (a as { equals?: unknown }).equals === 'function')
      return (a as { equals(o: unknown): boolean }).equals(b);
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => valuesEqual((a as never)[k], (b as never)[k]));
  }
  return false;
}
