// The plugins a worker knows: connectors, converters, transforms and predicates, each under its class name
// and Kafka's aliases (the simple name, and for connectors, converters and transforms the simple name without
// its "Connector"/"Converter" suffix), so `connector.class=FileStreamSource` finds
// org.apache.kafka.connect.file.FileStreamSourceConnector as in Kafka. Built-ins are registered by
// builtin-plugins.ts; plugin.path folders add more (loadPluginPath): each entry is a .js/.mjs file or a package
// folder (its package.json "main", else index.js), and every exported class that extends SourceConnector or
// SinkConnector, or carries a static `pluginType` ('source', 'sink', 'transformation', 'predicate', 'converter',
// 'header_converter': a custom SMT is a class with apply()), is registered under its static `className` or
// export name.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Connector, SinkConnector, SourceConnector } from '../api/connector.js';
import type { ConverterClass } from '../converters/converter.js';
import { ConnectException } from '../errors.js';
import type { PredicateClass, TransformationClass } from '../transforms/transformation.js';

export type PluginType =
  | 'source'
  | 'sink'
  | 'converter'
  | 'header_converter'
  | 'transformation'
  | 'predicate';

export interface PluginDesc {
  readonly className: string;
  readonly type: PluginType;
  readonly version: string;
  // biome-ignore lint/suspicious/noExplicitAny: plugin classes of several kinds share the registry.
  readonly ctor: new () => any;
}

export class Plugins {
  private readonly byName = new Map<string, PluginDesc>();
  private readonly descs: PluginDesc[] = [];

  register(desc: PluginDesc, extraAliases: readonly string[] = []): void {
    this.descs.push(desc);
    const simple = desc.className.slice(desc.className.lastIndexOf('.') + 1);
    const names = [desc.className, simple, ...extraAliases];
    for (const suffix of ['Connector', 'Converter', 'Transformation']) {
      if (simple.endsWith(suffix) && simple.length > suffix.length)
        names.push(simple.slice(0, -suffix.length));
    }
    for (const n of names) if (!this.byName.has(n)) this.byName.set(n, desc);
  }

  find(name: string): PluginDesc | undefined {
    return this.byName.get(name.trim());
  }

  list(): readonly PluginDesc[] {
    return this.descs;
  }

  connector(name: string): PluginDesc {
    const d = this.find(name);
    if (d === undefined || (d.type !== 'source' && d.type !== 'sink')) {
      throw new ConnectException(
        `Failed to find any class that implements Connector and which name matches ${name}, available connectors are: ${this.descs
          .filter((x) => x.type === 'source' || x.type === 'sink')
          .map((x) => x.className)
          .join(', ')}`,
      );
    }
    return d;
  }

  newConnector(name: string): Connector {
    return new (this.connector(name).ctor)() as Connector;
  }

  converter(name: string): ConverterClass {
    return this.ofType(name, ['converter'], 'Converter') as ConverterClass;
  }

  transformation(name: string): TransformationClass {
    return this.ofType(name, ['transformation'], 'Transformation') as TransformationClass;
  }

  predicate(name: string): PredicateClass {
    return this.ofType(name, ['predicate'], 'Predicate') as PredicateClass;
  }

  private ofType(name: string, types: PluginType[], what: string): new () => unknown {
    const d = this.find(name);
    if (d === undefined || !types.includes(d.type)) {
      throw new ConnectException(`Class ${name} could not be found as a ${what}.`);
    }
    return d.ctor;
  }

  /** Registers the connectors exported by the packages in the given folders; returns the class names found. */
  async loadPluginPath(folders: readonly string[]): Promise<string[]> {
    const found: string[] = [];
    for (const folder of folders) {
      for (const entry of readdirSync(folder).sort()) {
        const file = moduleOf(join(folder, entry));
        if (file === null) continue;
        const mod = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
        for (const [exportName, value] of Object.entries(mod)) {
          const type = pluginTypeOf(value);
          if (type === null) continue;
          const ctor = value as (new () => Connector) & { className?: string };
          const className = typeof ctor.className === 'string' ? ctor.className : exportName;
          const version = safeVersion(ctor as new () => { version?: () => string });
          this.register({ className, type, version, ctor });
          found.push(className);
        }
      }
    }
    return found;
  }
}

function moduleOf(path: string): string | null {
  const st = statSync(path);
  if (st.isFile()) return /\.(m?js)$/.test(path) ? path : null;
  if (!st.isDirectory()) return null;
  let main = 'index.js';
  try {
    const pkg = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { main?: string };
    if (typeof pkg.main === 'string') main = pkg.main;
  } catch {
    // no package.json: index.js
  }
  try {
    statSync(join(path, main));
    return join(path, main);
  } catch {
    return null;
  }
}

const PLUGIN_TYPES: readonly PluginType[] = [
  'source',
  'sink',
  'converter',
  'header_converter',
  'transformation',
  'predicate',
];

/**
 * What an export of a plugin package is: a connector by its base class, anything else (transformations,
 * predicates, converters, which are interfaces in TypeScript as in Java) by its static `pluginType`.
 */
function pluginTypeOf(value: unknown): PluginType | null {
  if (typeof value !== 'function') return null;
  const proto = (value as { prototype?: unknown }).prototype;
  if (proto instanceof SourceConnector) return 'source';
  if (proto instanceof SinkConnector) return 'sink';
  const declared = (value as { pluginType?: unknown }).pluginType;
  return PLUGIN_TYPES.find((t) => t === declared) ?? null;
}

/**
 * What a plugin without a version() reports (Kafka's PluginDesc.UNDEFINED_VERSION, for a plugin that is not
 * Versioned): GET /connector-plugins leaves its "version" out.
 */
export const UNDEFINED_VERSION = 'undefined';

/** The plugin's version() (connectors have one; Kafka's Versioned for the others), else UNDEFINED_VERSION. */
function safeVersion(ctor: new () => { version?: () => string }): string {
  try {
    const v = new ctor().version?.();
    return typeof v === 'string' ? v : UNDEFINED_VERSION;
  } catch {
    return UNDEFINED_VERSION;
  }
}
