// Connector and task states as Kafka Connect reports them (AbstractStatus.State), and the traces of failures.

export type State = 'UNASSIGNED' | 'RUNNING' | 'PAUSED' | 'FAILED' | 'RESTARTING' | 'STOPPED';

/** The target a connector should be in (TargetState): what pause, resume and stop set. */
export type TargetState = 'STARTED' | 'PAUSED' | 'STOPPED';

export interface Status {
  state: State;
  workerId: string;
  trace: string | null;
}

/** A Java-like trace: the error's stack and its causes, "Caused by: ..." as Kafka shows them. */
export function traceOf(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e !== undefined && e !== null && depth < 10; depth++) {
    const text = e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e);
    parts.push(depth === 0 ? text : `Caused by: ${text}`);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join('\n');
}
