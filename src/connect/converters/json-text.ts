// JSON text that keeps 64-bit integers: JSON.parse turns 9007199254740993 into ...992, which would corrupt an
// int64 key. parseJson returns integers beyond Number's safe range as bigint; stringifyJson writes bigints as
// plain numbers and RawJsonNumbers verbatim; a fraction that a double cannot hold exactly is parsed as a
// RawJsonNumber, so that a NUMERIC Decimal keeps every digit. Depth and size are bounded by the callers' inputs
// (records and REST bodies are already bounded); nesting deeper than MAX_DEPTH is refused.

import { BigDecimal } from '../data/big-decimal.js';
import { DataException } from '../errors.js';

const MAX_DEPTH = 512;

export function parseJson(text: string): unknown {
  const p = new Parser(text);
  p.ws();
  const v = p.value(0);
  p.ws();
  if (p.i !== text.length) p.fail('Unexpected trailing characters');
  return v;
}

class Parser {
  i = 0;
  constructor(private readonly s: string) {}

  fail(why: string): never {
    throw new DataException(`Invalid JSON at position ${this.i}: ${why}`);
  }

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    const c = this.s[this.i];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    if (c === 't') return this.literal('true', true);
    if (c === 'f') return this.literal('false', false);
    if (c === 'n') return this.literal('null', null);
    return this.number();
  }

  literal<T>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) this.fail(`Unexpected token`);
    this.i += word.length;
    return v;
  }

  number(): number | bigint | RawJsonNumber {
    const m = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
    m.lastIndex = this.i;
    const r = m.exec(this.s);
    if (r === null || r[0] === '' || r[0] === '-') this.fail('Unexpected token');
    this.i += r[0].length;
    if (r[1] === undefined && r[2] === undefined) {
      const n = Number(r[0]);
      return Number.isSafeInteger(n) ? n : BigInt(r[0]);
    }
    const n = Number(r[0]);
    return sameDecimal(r[0], n) ? n : new RawJsonNumber(r[0]);
  }

  string(): string {
    const start = this.i;
    this.i++;
    const s = this.s;
    let simple = true;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === '"') {
        this.i++;
        const raw = s.slice(start, this.i);
        return simple ? raw.slice(1, -1) : (JSON.parse(raw) as string);
      }
      if (c === '\\') {
        simple = false;
        this.i += 2;
      } else {
        if (s.charCodeAt(this.i) < 0x20) this.fail('Control character in string');
        this.i++;
      }
    }
    return this.fail('Unterminated string');
  }

  array(depth: number): unknown[] {
    this.i++;
    const out: unknown[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value(depth + 1));
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') this.fail("Expected ',' or ']'");
    }
  }

  object(depth: number): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('Expected a field name');
      const key = this.string();
      this.ws();
      if (this.s[this.i++] !== ':') this.fail("Expected ':'");
      this.ws();
      Object.defineProperty(out, key, {
        value: this.value(depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return out;
      if (c !== ',') this.fail("Expected ',' or '}'");
    }
  }
}

/** Whether a double holds the decimal text exactly (else the text is kept as a RawJsonNumber). */
function sameDecimal(text: string, n: number): boolean {
  if (!Number.isFinite(n)) return false;
  const a = BigDecimal.parse(text);
  const b = BigDecimal.parse(String(n));
  const scale = Math.max(a.scale, b.scale);
  return a.setScale(scale).equals(b.setScale(scale));
}

/** A value written verbatim as a JSON number (exact decimals). */
export class RawJsonNumber {
  constructor(readonly text: string) {}
}

export function stringifyJson(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

function write(v: unknown, out: string[]): void {
  if (v === null || v === undefined) out.push('null');
  else if (typeof v === 'bigint') out.push(v.toString());
  else if (typeof v === 'number') out.push(Number.isFinite(v) ? String(v) : JSON.stringify(String(v)));
  else if (typeof v === 'string' || typeof v === 'boolean') out.push(JSON.stringify(v));
  else if (v instanceof RawJsonNumber) out.push(v.text);
  else if (Array.isArray(v)) {
    out.push('[');
    v.forEach((x, i) => {
      if (i > 0) out.push(',');
      write(x, out);
    });
    out.push(']');
  } else if (typeof v === 'object') {
    out.push('{');
    let first = true;
    for (const [k, x] of Object.entries(v as object)) {
      if (x === undefined) continue;
      if (!first) out.push(',');
      first = false;
      out.push(JSON.stringify(k), ':');
      write(x, out);
    }
    out.push('}');
  } else out.push(JSON.stringify(String(v)));
}
