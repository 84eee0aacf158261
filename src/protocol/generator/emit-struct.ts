// Emits the TypeScript for the structs of one message: an interface per struct, and a reader and a writer per
// struct that branch on the version with plain comparisons (no closures, no tables walked at run time).
//
// Conventions of the emitted code:
// - Fields absent at a version are ignored by the writer and given their default by the reader.
// - Flexible versions use compact strings, bytes and arrays and end every struct with tagged fields. Tagged
//   fields equal to their default are not written, as Kafka does; unknown tags are skipped.
// - Array counts are checked against the smallest encoded size of one element before anything is allocated.

import type { FieldSchema, FieldType, MessageSchema, StructSchema } from './schema.js';
import { contains, formatVersions, intersect, isEmpty, VERSION_MAX, type VersionRange } from './versions.js';

/** Names the emitted functions use for their own locals; a field with one of these names gets a suffix. */
const RESERVED = new Set([
  'r',
  'w',
  'v',
  'version',
  'flexible',
  'count',
  'i',
  'items',
  'item',
  'tag',
  'tagCount',
  'tagEnd',
  'tagged',
  'default',
  'delete',
  'new',
  'function',
  'class',
  'return',
  'in',
  'for',
  'if',
  'else',
  'switch',
  'case',
  'break',
  'continue',
  'var',
  'let',
  'const',
  'this',
  'null',
  'true',
  'false',
  'typeof',
  'instanceof',
  'void',
  'with',
  'yield',
  'await',
  'enum',
  'export',
  'import',
  'extends',
  'super',
  'throw',
  'try',
  'catch',
  'finally',
  'do',
  'while',
  'debugger',
  'static',
  'interface',
  'package',
  'private',
  'protected',
  'public',
  'implements',
]);

function local(field: FieldSchema): string {
  return RESERVED.has(field.property) ? `${field.property}Value` : field.property;
}

/** The specification's name of a field type: `int32`, `[]string`, `[]TopicData`. */
function specTypeName(type: FieldType): string {
  if (type.kind === 'primitive') return type.name;
  if (type.kind === 'array') return `[]${specTypeName(type.element)}`;
  return type.struct.name;
}

function defaultText(field: FieldSchema): string | null {
  const d = field.defaultValue;
  // Zero, false and "" are what every absent field of those types reads as: not worth a word.
  if (d.kind !== 'value' || d.value === 0 || d.value === 0n || d.value === false || d.value === '')
    return null;
  return typeof d.value === 'string' ? JSON.stringify(d.value) : String(d.value);
}

/**
 * A field's TSDoc: the facts the committed schema holds about it (the specification's name and type, the versions
 * it is in, where it may be null, its tag, a default other than zero or empty). The schema keeps no prose, so
 * neither does this.
 */
export function fieldDoc(field: FieldSchema): string {
  const parts = [
    `\`${field.name}\` (${specTypeName(field.type)}), versions ${formatVersions(field.versions)}`,
  ];
  if (!isEmpty(field.nullableVersions)) parts.push(`nullable in ${formatVersions(field.nullableVersions)}`);
  if (field.tag !== null) parts.push(`tag ${field.tag} in ${formatVersions(field.taggedVersions)}`);
  const value = defaultText(field);
  if (value !== null) parts.push(`default ${value}`);
  return `${parts.join('; ')}.`;
}

/**
 * A condition on `version` that holds exactly for the versions of `range` among those of `context`: `true`,
 * `false`, or an expression.
 */
export function versionCondition(range: VersionRange, context: VersionRange): string {
  const within = intersect(range, context);
  if (isEmpty(within)) return 'false';
  const parts: string[] = [];
  if (within.min > context.min) parts.push(`version >= ${within.min}`);
  if (within.max < context.max) parts.push(`version <= ${within.max}`);
  return parts.length === 0 ? 'true' : parts.join(' && ');
}

/** Picks between two expressions on a condition that may be constant. */
function choose(condition: string, whenTrue: string, whenFalse: string): string {
  if (condition === 'true') return whenTrue;
  if (condition === 'false') return whenFalse;
  return `(${condition} ? ${whenTrue} : ${whenFalse})`;
}

/** Emits an if/else statement on a condition that may be constant. */
function branch(condition: string, whenTrue: string, whenFalse: string): string {
  if (condition === 'true') return whenTrue;
  if (condition === 'false') return whenFalse;
  return `if (${condition}) { ${whenTrue} } else { ${whenFalse} }`;
}

function guard(condition: string, body: string): string {
  if (condition === 'true') return body;
  if (condition === 'false') return '';
  return `if (${condition}) { ${body} }`;
}

const FIXED_BYTES: Record<string, number> = {
  bool: 1,
  int8: 1,
  int16: 2,
  uint16: 2,
  int32: 4,
  uint32: 4,
  int64: 8,
  float64: 8,
  uuid: 16,
};

export function typeScriptType(type: FieldType): string {
  switch (type.kind) {
    case 'array': {
      const element = typeScriptType(type.element);
      return `${element}[]`;
    }
    case 'struct':
      return type.struct.typeName;
    default:
      switch (type.name) {
        case 'bool':
          return 'boolean';
        case 'int64':
          return 'bigint';
        case 'uuid':
        case 'string':
          return 'string';
        case 'bytes':
        case 'records':
          return 'Buffer';
        default:
          return 'number';
      }
  }
}

function isNullableAnywhere(field: FieldSchema): boolean {
  return !isEmpty(intersect(field.nullableVersions, field.versions));
}

export function fieldTypeText(field: FieldSchema): string {
  const base = typeScriptType(field.type);
  return isNullableAnywhere(field) ? `${base} | null` : base;
}

/** Smallest number of bytes one value of `type` takes at `version`, for bounding array counts. */
function minimumBytes(type: FieldType, version: number, flexible: boolean, nullable: boolean): number {
  switch (type.kind) {
    case 'array':
      return flexible ? 1 : 4;
    case 'struct':
      return nullable ? 1 : structMinimumBytes(type.struct, version, flexible);
    default: {
      const fixed = FIXED_BYTES[type.name];
      if (fixed !== undefined) return fixed;
      if (flexible) return 1;
      return type.name === 'string' ? 2 : 4;
    }
  }
}

function structMinimumBytes(struct: StructSchema, version: number, flexible: boolean): number {
  let total = flexible ? 1 : 0;
  for (const field of struct.fields) {
    if (!contains(field.versions, version) || field.tag !== null) continue;
    const fieldFlexible = field.flexibleVersions ? contains(field.flexibleVersions, version) : flexible;
    total += minimumBytes(field.type, version, fieldFlexible, contains(field.nullableVersions, version));
  }
  return total;
}

/** Emits the code of every struct of one message. */
export class StructEmitter {
  /** Structs that need a default-value constructor, and those that need a default-value test. */
  private readonly needsDefault = new Set<StructSchema>();
  private readonly needsIsDefault = new Set<StructSchema>();

  constructor(private readonly message: MessageSchema) {
    for (const struct of message.structs) {
      for (const field of struct.fields) {
        if (field.type.kind !== 'struct' || field.defaultValue.kind !== 'struct') continue;
        // A reader needs the default struct for tagged fields and for versions where the field is absent.
        const alwaysPresent = versionCondition(field.versions, struct.versions) === 'true';
        if (field.tag !== null || !alwaysPresent) this.markDefault(field.type.struct);
        if (field.tag !== null) this.markIsDefault(field.type.struct);
      }
    }
  }

  private markDefault(struct: StructSchema): void {
    if (this.needsDefault.has(struct)) return;
    this.needsDefault.add(struct);
    for (const field of struct.fields) {
      if (field.type.kind === 'struct' && field.defaultValue.kind === 'struct')
        this.markDefault(field.type.struct);
    }
  }

  private markIsDefault(struct: StructSchema): void {
    if (this.needsIsDefault.has(struct)) return;
    this.needsIsDefault.add(struct);
    for (const field of struct.fields) {
      if (field.type.kind === 'struct' && field.defaultValue.kind === 'struct') {
        this.markIsDefault(field.type.struct);
      }
    }
  }

  /** The flexible-version condition within a struct's reachable versions. */
  private flexibleCondition(struct: StructSchema): string {
    return versionCondition(this.message.flexibleVersions, struct.versions);
  }

  emitAll(): string {
    const out: string[] = [];
    for (const struct of this.message.structs) out.push(this.emitInterface(struct));
    for (const struct of this.message.structs) {
      if (this.needsDefault.has(struct)) out.push(this.emitDefault(struct));
      if (this.needsIsDefault.has(struct)) out.push(this.emitIsDefault(struct));
      out.push(this.emitReader(struct), this.emitWriter(struct));
    }
    return out.join('\n\n');
  }

  private emitInterface(struct: StructSchema): string {
    const lines = struct.fields.map((f) => `  /** ${fieldDoc(f)} */\n  ${f.property}: ${fieldTypeText(f)};`);
    const doc = `/** \`${struct.name}\`, in versions ${formatVersions(struct.versions)}. */`;
    return `${doc}\nexport interface ${struct.typeName} {\n${lines.join('\n')}\n}`;
  }

  defaultExpression(field: FieldSchema): string {
    const d = field.defaultValue;
    switch (d.kind) {
      case 'null':
        return 'null';
      case 'struct':
        return `default${(field.type as { struct: StructSchema }).struct.typeName}()`;
      case 'empty':
        if (field.type.kind === 'array') return '[]';
        return field.type.kind === 'primitive' && field.type.name === 'uuid' ? 'ZERO_UUID' : 'EMPTY_BYTES';
      case 'value':
        if (typeof d.value === 'bigint') return `${d.value}n`;
        if (typeof d.value === 'string') return JSON.stringify(d.value);
        return String(d.value);
    }
  }

  private emitDefault(struct: StructSchema): string {
    const props = struct.fields.map((f) => `${f.property}: ${this.defaultExpression(f)},`);
    return `function default${struct.typeName}(): ${struct.typeName} {\n  return { ${props.join(' ')} };\n}`;
  }

  /** An expression that is true when `value` holds the field's default. */
  private equalsDefault(field: FieldSchema, value: string): string {
    const nullable = isNullableAnywhere(field);
    const d = field.defaultValue;
    switch (d.kind) {
      case 'null':
        return `${value} === null`;
      case 'struct':
        return `${nullable ? `${value} !== null && ` : ''}isDefault${(field.type as { struct: StructSchema }).struct.typeName}(${value})`;
      case 'empty':
        if (field.type.kind === 'primitive' && field.type.name === 'uuid') return `${value} === ZERO_UUID`;
        return `${nullable ? `${value} !== null && ` : ''}${value}.length === 0`;
      case 'value':
        return `${value} === ${this.defaultExpression(field)}`;
    }
  }

  private emitIsDefault(struct: StructSchema): string {
    const checks = struct.fields.map((f) => `(${this.equalsDefault(f, `v.${f.property}`)})`);
    const body = checks.length === 0 ? 'true' : checks.join(' && ');
    const param = checks.length === 0 ? '_v' : 'v';
    return `function isDefault${struct.typeName}(${param}: ${struct.typeName}): boolean {\n  return ${body};\n}`;
  }

  // ---------------------------------------------------------------------------------------------------------
  // Readers

  private emitReader(struct: StructSchema): string {
    const flexible = this.flexibleCondition(struct);
    const body: string[] = [];
    const tagged = struct.fields.filter((f) => f.tag !== null).sort((a, b) => a.tag! - b.tag!);
    for (const field of struct.fields) {
      if (field.tag !== null) {
        body.push(`let ${local(field)}: ${fieldTypeText(field)} = ${this.defaultExpression(field)};`);
      } else {
        body.push(this.readField(struct, field));
      }
    }
    if (flexible !== 'false') body.push(guard(flexible, this.readTaggedFields(struct, tagged)));
    const props = struct.fields.map((f) =>
      local(f) === f.property ? f.property : `${f.property}: ${local(f)}`,
    );
    body.push(`return { ${props.join(', ')} };`);
    return this.functionText(
      `read${struct.typeName}`,
      'r: Reader',
      struct,
      body.join('\n'),
      `: ${struct.typeName}`,
    );
  }

  /** Wraps a body in a function, declaring `flexible` and naming unused parameters only as needed. */
  private functionText(
    name: string,
    params: string,
    struct: StructSchema,
    body: string,
    returns: string,
  ): string {
    const flexible = this.flexibleCondition(struct);
    // Property accesses (`v.version`) are not uses of the locals of the same name.
    const usesFlexible = /(?<!\.)\bflexible\b/.test(body);
    const text = usesFlexible ? `const flexible = ${flexible};\n${body}` : body;
    const version = /(?<!\.)\bversion\b/.test(text) ? 'version' : '_version';
    const value = params.startsWith('w') ? (/\bv\./.test(text) ? ', v' : ', _v') : '';
    const valueType = value ? `: ${struct.typeName}` : '';
    return `function ${name}(${params}, ${version}: number${value}${valueType})${returns} {\n${text}\n}`;
  }

  /** The flexible condition for a field: constant when the field's versions are all flexible or all not. */
  private fieldFlexible(struct: StructSchema, field: FieldSchema): string {
    const reachable = intersect(field.versions, struct.versions);
    if (field.flexibleVersions) return versionCondition(field.flexibleVersions, reachable);
    const condition = versionCondition(this.message.flexibleVersions, reachable);
    return condition === 'true' || condition === 'false' ? condition : 'flexible';
  }

  private readTaggedFields(struct: StructSchema, tagged: FieldSchema[]): string {
    if (tagged.length === 0) return 'skipTaggedFields(r);';
    const flexibleVersions = intersect(struct.versions, this.message.flexibleVersions);
    const cases = tagged.map((field) => {
      const present = versionCondition(field.versions, flexibleVersions);
      const condition = present === 'true' ? `tag === ${field.tag}` : `tag === ${field.tag} && ${present}`;
      const nullable = versionCondition(field.nullableVersions, intersect(field.versions, struct.versions));
      return `if (${condition}) { ${this.readInto(field, local(field), 'true', nullable)} }`;
    });
    return `const tagCount = r.uvarint();
      for (let i = 0; i < tagCount; i++) {
        const tag = r.uvarint();
        const tagEnd = taggedFieldEnd(r, r.uvarint());
        ${cases.join(' else ')}
        finishTaggedField(r, tagEnd);
      }`;
  }

  /** Declares the field's local and reads it when present. */
  private readField(struct: StructSchema, field: FieldSchema): string {
    const present = versionCondition(field.versions, struct.versions);
    const reachable = intersect(field.versions, struct.versions);
    const flexible = this.fieldFlexible(struct, field);
    const nullable = versionCondition(field.nullableVersions, reachable);
    const name = local(field);
    const type = fieldTypeText(field);
    if (present === 'false') return `const ${name}: ${type} = ${this.defaultExpression(field)};`;
    if (field.type.kind !== 'array') {
      const value = this.readValue(field.type, flexible, nullable);
      if (present === 'true') return `const ${name}: ${type} = ${value};`;
      return `const ${name}: ${type} = ${present} ? ${value} : ${this.defaultExpression(field)};`;
    }
    if (present === 'true' && nullable === 'false') {
      return `const ${name}: ${type} = [];\n${this.readArrayItems(field, name, flexible, 'false')}`;
    }
    // Braces keep the array's own locals out of the function's scope.
    const read = this.readInto(field, name, flexible, nullable);
    const block = present === 'true' ? `{ ${read} }` : guard(present, read);
    return `let ${name}: ${type} = ${this.defaultExpression(field)};\n${block}`;
  }

  /** Statements that read the field's value into an already declared local. */
  private readInto(field: FieldSchema, name: string, flexible: string, nullable: string): string {
    if (field.type.kind !== 'array') return `${name} = ${this.readValue(field.type, flexible, nullable)};`;
    const element = typeScriptType(field.type.element);
    return `const items: ${element}[] = [];\n${this.readArrayItems(field, 'items', flexible, nullable, name)}`;
  }

  /**
   * Reads an array's count and elements into `items` (already declared and empty). When the array may be null,
   * `target` receives null or the items.
   */
  private readArrayItems(
    field: FieldSchema,
    items: string,
    flexible: string,
    nullable: string,
    target?: string,
  ): string {
    const type = field.type as { kind: 'array'; element: FieldType };
    const min = this.minimumElementBytes(field, flexible);
    const counter = (nullableCount: boolean): string => {
      const plain = nullableCount ? 'nullableArrayCount' : 'arrayCount';
      const compact = nullableCount ? 'compactNullableArrayCount' : 'compactArrayCount';
      return choose(flexible, `r.${compact}(${min.flexible})`, `r.${plain}(${min.classic})`);
    };
    const countExpr =
      nullable === 'false'
        ? counter(false)
        : nullable === 'true'
          ? counter(true)
          : `(${nullable} ? ${counter(true)} : ${counter(false)})`;
    const element = this.readValue(type.element, flexible, 'false');
    const loop = `for (let i = 0; i < count; i++) ${items}.push(${element});`;
    if (target === undefined) return `{ const count = ${countExpr};\n${loop} }`;
    if (nullable === 'false') return `const count = ${countExpr};\n${loop}\n${target} = ${items};`;
    return `const count = ${countExpr};\n${loop}\n${target} = count < 0 ? null : ${items};`;
  }

  private minimumElementBytes(field: FieldSchema, flexible: string): { flexible: number; classic: number } {
    const type = field.type as { kind: 'array'; element: FieldType };
    let flexibleMin = Number.POSITIVE_INFINITY;
    let classicMin = Number.POSITIVE_INFINITY;
    const range = intersect(field.versions, this.message.validVersions);
    const last = Math.min(range.max, this.message.validVersions.max, VERSION_MAX);
    for (let version = range.min; version <= last; version++) {
      const isFlexible =
        flexible === 'true'
          ? true
          : flexible === 'false'
            ? false
            : contains(this.message.flexibleVersions, version);
      const bytes = minimumBytes(type.element, version, isFlexible, false);
      if (isFlexible) flexibleMin = Math.min(flexibleMin, bytes);
      else classicMin = Math.min(classicMin, bytes);
    }
    return {
      flexible: Number.isFinite(flexibleMin) ? flexibleMin : 1,
      classic: Number.isFinite(classicMin) ? classicMin : 1,
    };
  }

  /** An expression reading one value of a non-array type. */
  private readValue(type: FieldType, flexible: string, nullable: string): string {
    if (type.kind === 'struct') {
      const read = `read${type.struct.typeName}(r, version)`;
      return choose(nullable, `(r.int8() < 0 ? null : ${read})`, read);
    }
    if (type.kind === 'array') throw new Error('nested arrays are not part of the protocol');
    switch (type.name) {
      case 'string':
        return this.readVariable('String', flexible, nullable);
      case 'bytes':
      case 'records':
        return this.readVariable('Bytes', flexible, nullable);
      default:
        return `r.${type.name}()`;
    }
  }

  private readVariable(kind: 'String' | 'Bytes', flexible: string, nullable: string): string {
    const lower = kind.toLowerCase();
    const nonNull = choose(flexible, `r.compact${kind}()`, `r.${lower}()`);
    const withNull = choose(flexible, `r.compactNullable${kind}()`, `r.nullable${kind}()`);
    return choose(nullable, withNull, nonNull);
  }

  // ---------------------------------------------------------------------------------------------------------
  // Writers

  private emitWriter(struct: StructSchema): string {
    const flexible = this.flexibleCondition(struct);
    const body: string[] = [];
    for (const field of struct.fields) {
      if (field.tag === null) body.push(this.writeField(struct, field));
    }
    const tagged = struct.fields.filter((f) => f.tag !== null).sort((a, b) => a.tag! - b.tag!);
    if (flexible !== 'false') body.push(guard(flexible, this.writeTaggedFields(struct, tagged)));
    return this.functionText(`write${struct.typeName}`, 'w: Writer', struct, body.join('\n'), ': void');
  }

  private writeField(struct: StructSchema, field: FieldSchema): string {
    const present = versionCondition(field.versions, struct.versions);
    const reachable = intersect(field.versions, struct.versions);
    const flexible = this.fieldFlexible(struct, field);
    const nullable = versionCondition(field.nullableVersions, reachable);
    const value = `v.${field.property}`;
    return guard(
      present,
      this.writeValue(field.type, value, flexible, nullable, 'w', isNullableAnywhere(field)),
    );
  }

  private writeTaggedFields(struct: StructSchema, tagged: FieldSchema[]): string {
    if (tagged.length === 0) return 'w.uvarint(0);';
    const lines: string[] = ['let tagCount = 0;'];
    const flexibleVersions = intersect(struct.versions, this.message.flexibleVersions);
    for (const field of tagged) {
      const present = versionCondition(field.versions, flexibleVersions);
      const differs = `!(${this.equalsDefault(field, `v.${field.property}`)})`;
      const condition = present === 'true' ? differs : `${present} && ${differs}`;
      lines.push(`const has${capitalize(field.property)} = ${condition};`);
      lines.push(`if (has${capitalize(field.property)}) tagCount++;`);
    }
    lines.push('w.uvarint(tagCount);');
    for (const field of tagged) {
      const nullable = versionCondition(field.nullableVersions, intersect(field.versions, struct.versions));
      const value = `v.${field.property}`;
      const write = this.writeValue(field.type, value, 'true', nullable, 'tagged', isNullableAnywhere(field));
      lines.push(
        `if (has${capitalize(field.property)}) { const tagged = new Writer(); ${write} writeTaggedField(w, ${field.tag}, tagged); }`,
      );
    }
    return lines.join('\n');
  }

  /** Statements writing one value to the writer named `out`. */
  private writeValue(
    type: FieldType,
    value: string,
    flexible: string,
    nullable: string,
    out: string,
    typedNullable: boolean,
  ): string {
    // Where the value's type admits null but this version does not, the writer asserts it is present.
    const present = typedNullable ? `${value}!` : value;
    if (type.kind === 'array') {
      const element = this.writeValue(type.element, 'items[i]!', flexible, 'false', out, false);
      const loop = `for (let i = 0; i < items.length; i++) { ${element} }`;
      const plainCount = branch(
        flexible,
        `${out}.compactArrayCount(items.length);`,
        `${out}.arrayCount(items.length);`,
      );
      const nonNull = `{ const items = ${present}; ${plainCount} ${loop} }`;
      if (nullable === 'false') return nonNull;
      const size = 'items === null ? null : items.length';
      const nullCount = branch(
        flexible,
        `${out}.compactNullableArrayCount(${size});`,
        `${out}.nullableArrayCount(${size});`,
      );
      const withNull = `{ const items = ${value}; ${nullCount} if (items !== null) { ${loop} } }`;
      return branch(nullable, withNull, nonNull);
    }
    if (type.kind === 'struct') {
      const write = `write${type.struct.typeName}(${out}, version, ${present});`;
      if (nullable === 'false') return write;
      const narrowed = `write${type.struct.typeName}(${out}, version, ${value});`;
      const withNull = `if (${value} === null) { ${out}.int8(-1); } else { ${out}.int8(1); ${narrowed} }`;
      return branch(nullable, withNull, write);
    }
    switch (type.name) {
      case 'string':
        return this.writeVariable('String', value, present, flexible, nullable, out);
      case 'bytes':
      case 'records':
        return this.writeVariable('Bytes', value, present, flexible, nullable, out);
      default:
        return `${out}.${type.name}(${value});`;
    }
  }

  private writeVariable(
    kind: 'String' | 'Bytes',
    value: string,
    present: string,
    flexible: string,
    nullable: string,
    out: string,
  ): string {
    const lower = kind.toLowerCase();
    const nonNull = branch(flexible, `${out}.compact${kind}(${present});`, `${out}.${lower}(${present});`);
    const withNull = branch(
      flexible,
      `${out}.compactNullable${kind}(${value});`,
      `${out}.nullable${kind}(${value});`,
    );
    return branch(nullable, withNull, nonNull);
  }
}

function capitalize(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
