// The logger levels of Kafka Connect's /admin/loggers (KIP-495; `scope` from KIP-976), with the rules of Kafka's
// Loggers over log4j: the root logger (`root`, any case) at INFO, loggers created by setting a level on their
// name, a level set on a namespace applied to every known logger whose name starts with it, a logger without a
// level of its own taking its nearest dotted ancestor's, `last_modified` moved only by a real change.
//
// What a level changes in Brook: nothing yet. The worker's log lines carry neither a level nor a logger name, so
// levels are kept and reported (tools that read and set them, such as Strimzi's operator on every reconcile,
// work) and each change is logged, but no line is filtered by them. One instance per worker, owned by its herder.

/** log4j's level names (Level.toLevel); any other text is not a level. */
const LEVELS: readonly string[] = ['OFF', 'FATAL', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE', 'ALL'];

const ROOT = 'root';

/** A logger's level as GET /admin/loggers shows it: its own, else the inherited one. */
export interface LoggerLevel {
  level: string;
  /** When a request last changed it (ms since the epoch), null if none did. */
  last_modified: number | null;
}

/** The log4j level a request names (any case), or null when it names none. */
export function log4jLevel(text: string): string | null {
  const upper = text.toUpperCase();
  return LEVELS.includes(upper) ? upper : null;
}

interface Entry {
  /** Its own level; null when it inherits one. */
  level: string | null;
  lastModifiedMs: number | null;
}

export class Loggers {
  private readonly root: Entry = { level: 'INFO', lastModifiedMs: null };
  /** Every logger other than root that a request created, by name. */
  private readonly named = new Map<string, Entry>();

  constructor(
    private readonly log: (line: string) => void,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** A known logger's level, or null (Kafka's 404) for a name no request created. */
  level(name: string): LoggerLevel | null {
    if (name.toLowerCase() === ROOT) return this.levelOf(ROOT, this.root);
    const entry = this.named.get(name);
    return entry === undefined ? null : this.levelOf(name, entry);
  }

  /** The loggers with a level of their own, root included, by name. */
  allLevels(): Record<string, LoggerLevel> {
    const all: Array<[string, Entry]> = [...this.named, [ROOT, this.root]];
    const out: Record<string, LoggerLevel> = {};
    for (const [name, entry] of all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      if (entry.level !== null) out[name] = this.levelOf(name, entry);
    return out;
  }

  /**
   * Sets `level` (a log4j level name) on the namespace and every known logger under it (root: on every logger),
   * creating the namespace's logger if needed; returns the names of those loggers, sorted, as Kafka does.
   */
  setLevel(namespace: string, level: string): string[] {
    this.log(`Setting level of namespace ${namespace} and children to ${level}`);
    const isRoot = namespace.toLowerCase() === ROOT;
    const affected: Array<[string, Entry]> = [...this.named].filter(
      ([name]) => isRoot || name.startsWith(namespace),
    );
    if (isRoot) affected.push([ROOT, this.root]);
    else if (!this.named.has(namespace)) {
      const created: Entry = { level: null, lastModifiedMs: null };
      this.named.set(namespace, created);
      affected.push([namespace, created]);
    }
    // As Kafka's, a logger already at that level (its own or inherited) is left as it is. The levels are read
    // before any is set, so a child does not count as unchanged for inheriting its parent's new level (in Kafka
    // that depends on the order log4j happens to list them in).
    const changed = affected.filter(([name, entry]) => this.effectiveLevel(name, entry) !== level);
    for (const [, entry] of changed) {
      entry.level = level;
      entry.lastModifiedMs = this.nowMs();
    }
    return affected.map(([name]) => name).sort();
  }

  private levelOf(name: string, entry: Entry): LoggerLevel {
    return { level: this.effectiveLevel(name, entry), last_modified: entry.lastModifiedMs };
  }

  /** Its own level, else that of its nearest dotted ancestor with one, else root's. */
  private effectiveLevel(name: string, entry: Entry): string {
    if (entry.level !== null) return entry.level;
    for (let dot = name.lastIndexOf('.'); dot > 0; dot = name.lastIndexOf('.', dot - 1)) {
      const ancestor = this.named.get(name.slice(0, dot));
      if (ancestor !== undefined && ancestor.level !== null) return ancestor.level;
    }
    return this.root.level!;
  }
}
