// Kafka Streams' ClientTagAwareStandbyTaskAssignor (KIP-708): with rack.aware.assignment.tags, each stateful
// task's standbys go to clients whose tag values differ from those of the clients already holding the task, so
// that losing one zone (or cluster, or any tagged dimension) leaves a copy elsewhere. Pure; the high-availability
// placement (ha-task-assignor.ts) calls it for its standby step.
//
// Kafka's algorithm, per stateful task in id order, starting from the client running it as active:
//  - the last client given the task marks its tag entries (key = value) as used: every client with that value is
//    excluded, unless the tag has no more values than clients used so far (a dimension already spread as far as
//    it goes): then all of that tag's entries are released, and the other tags still constrain;
//  - the next standby goes to the least loaded client ((active + standby) / threads, ties to the smaller process
//    id) that does not hold the task and is on no used entry; none: the task's remaining standbys wait;
// then every waiting standby goes to the least loaded client not holding the task, with Kafka's warning.
// Only tags named in rack.aware.assignment.tags count; others are ignored (Kafka logs each).
// Standbys are then balanced over threads only between clients with equal tags (Kafka's isAllowedTaskMovement),
// so the spread is kept.

/** What the assignor reads and changes of a client's plan. */
export interface TaggedPlan {
  client: { processId: string; capacity: number; tags?: Record<string, string> };
  active: Set<string>;
  standby: Set<string>;
}

const holds = (p: TaggedPlan, task: string): boolean => p.active.has(task) || p.standby.has(task);
const load = (p: TaggedPlan): number => (p.active.size + p.standby.size) / p.client.capacity;

/** The least loaded plan among the allowed ones; plans are in process id order, so ties go to the smaller id. */
function leastLoaded(plans: TaggedPlan[], allowed: (p: TaggedPlan) => boolean): TaggedPlan | undefined {
  let best: TaggedPlan | undefined;
  for (const p of plans) if (allowed(p) && (best === undefined || load(p) < load(best))) best = p;
  return best;
}

const entry = (key: string, value: string): string => `${key}\u0000${value}`;

/**
 * Places `numStandbyReplicas` standbys of each of `tasks` (their actives already placed) as Kafka's
 * ClientTagAwareStandbyTaskAssignor. Returns Kafka's warnings (one per task it could not spread fully, one per
 * task short of clients), for the caller's log.
 */
export function assignClientTagAwareStandbys(
  plans: TaggedPlan[],
  tasks: string[],
  numStandbyReplicas: number,
  rackAwareTags: string[],
): string[] {
  const warnings: string[] = [];
  const tagKeys = new Set(rackAwareTags);
  // Every value of every tag among the clients, and the clients on each tag entry.
  const valuesOf = new Map<string, Set<string>>();
  const clientsOn = new Map<string, Set<TaggedPlan>>();
  for (const p of plans)
    for (const [k, v] of Object.entries(p.client.tags ?? {})) {
      if (!valuesOf.has(k)) valuesOf.set(k, new Set());
      valuesOf.get(k)!.add(v);
      const e = entry(k, v);
      if (!clientsOn.has(e)) clientsOn.set(e, new Set());
      clientsOn.get(e)!.add(p);
    }
  const pending = new Map<string, number>();
  for (const task of tasks) {
    const active = plans.find((p) => p.active.has(task));
    if (active === undefined || numStandbyReplicas === 0) continue;
    const used = new Map<string, Set<TaggedPlan>>();
    let usedClients = 1; // the active's client counts as used
    let remaining = numStandbyReplicas;
    let last = active;
    do {
      for (const [k, v] of Object.entries(last.client.tags ?? {})) {
        if (!tagKeys.has(k)) continue;
        const values = valuesOf.get(k)!;
        if (values.size <= usedClients) for (const value of values) used.delete(entry(k, value));
        else used.set(entry(k, v), clientsOn.get(entry(k, v))!);
      }
      const next = leastLoaded(
        plans,
        (p) => !holds(p, task) && ![...used.values()].some((clients) => clients.has(p)),
      );
      if (next === undefined) break;
      next.standby.add(task);
      usedClients++;
      remaining--;
      last = next;
    } while (remaining > 0);
    if (remaining > 0) {
      pending.set(task, remaining);
      warnings.push(
        `Rack aware standby task assignment was not able to assign ${remaining} of ${numStandbyReplicas} standby tasks for the active task [${task}] with the rack aware assignment tags [${rackAwareTags.join(', ')}]: falling back to the least loaded clients`,
      );
    }
  }
  for (const [task, count] of pending) {
    let remaining = count;
    for (; remaining > 0; remaining--) {
      const next = leastLoaded(plans, (p) => !holds(p, task));
      if (next === undefined) break;
      next.standby.add(task);
    }
    if (remaining > 0)
      warnings.push(
        `Unable to assign ${remaining} of ${numStandbyReplicas} standby tasks for task [${task}]: not enough clients`,
      );
  }
  return warnings;
}

/** Kafka's isAllowedTaskMovement with client tags: every tag of the source has the same value on the destination. */
export function sameClientTags(source: TaggedPlan, destination: TaggedPlan): boolean {
  const theirs = destination.client.tags ?? {};
  return Object.entries(source.client.tags ?? {}).every(([k, v]) => theirs[k] === v);
}
