// One-shot watches of the in-process store, with ZooKeeper's trigger rules.
//
// Owns: the registered data watches (set by get and exists) and child watches (set by children), keyed by
// path. A watch is removed as it fires, so it fires at most once. Registering the same watcher function twice
// on the same path and kind from the same session counts once, as in ZooKeeper.
//
// Trigger rules: a create fires data watches on the node (`created`) and child watches on its parent; a delete
// fires data and child watches on the node (`deleted`) and child watches on its parent; a set fires data
// watches on the node (`dataChanged`).

import type { TreeChange } from './data-tree.js';
import { parentOf } from './paths.js';
import type { SessionId, WatchEvent, Watcher } from './store.js';

interface Registration {
  readonly session: SessionId;
  readonly watcher: Watcher;
}

export interface Delivery {
  readonly session: SessionId;
  readonly watcher: Watcher;
  readonly event: WatchEvent;
}

export class WatchRegistry {
  private readonly dataWatches = new Map<string, Registration[]>();
  private readonly childWatches = new Map<string, Registration[]>();

  addDataWatch(path: string, session: SessionId, watcher: Watcher): void {
    add(this.dataWatches, path, { session, watcher });
  }

  addChildWatch(path: string, session: SessionId, watcher: Watcher): void {
    add(this.childWatches, path, { session, watcher });
  }

  /** Drops every watch of a session (it ended); they never fire. */
  dropSession(session: SessionId): void {
    for (const table of [this.dataWatches, this.childWatches]) {
      for (const [path, list] of table) {
        const kept = list.filter((r) => r.session !== session);
        if (kept.length === 0) table.delete(path);
        else table.set(path, kept);
      }
    }
  }

  /** Removes and answers the watches that the changes of one transaction fire, in the order of the changes. */
  trigger(changes: readonly TreeChange[]): Delivery[] {
    const out: Delivery[] = [];
    for (const change of changes) {
      const { path } = change;
      switch (change.kind) {
        case 'created':
          take(this.dataWatches, path, { type: 'created', path }, out);
          if (path !== '/') take(this.childWatches, parentOf(path), childrenChanged(parentOf(path)), out);
          break;
        case 'deleted':
          take(this.dataWatches, path, { type: 'deleted', path }, out);
          take(this.childWatches, path, { type: 'deleted', path }, out);
          take(this.childWatches, parentOf(path), childrenChanged(parentOf(path)), out);
          break;
        case 'dataChanged':
          take(this.dataWatches, path, { type: 'dataChanged', path }, out);
          break;
      }
    }
    return out;
  }

  /** Number of registered watches, for tests and for a bound check by the owner. */
  size(): number {
    let n = 0;
    for (const table of [this.dataWatches, this.childWatches])
      for (const list of table.values()) n += list.length;
    return n;
  }
}

function childrenChanged(path: string): WatchEvent {
  return { type: 'childrenChanged', path };
}

function add(table: Map<string, Registration[]>, path: string, registration: Registration): void {
  const list = table.get(path);
  if (list === undefined) {
    table.set(path, [registration]);
    return;
  }
  if (list.some((r) => r.session === registration.session && r.watcher === registration.watcher)) return;
  list.push(registration);
}

function take(table: Map<string, Registration[]>, path: string, event: WatchEvent, out: Delivery[]): void {
  const list = table.get(path);
  if (list === undefined) return;
  table.delete(path);
  for (const r of list) out.push({ session: r.session, watcher: r.watcher, event });
}
