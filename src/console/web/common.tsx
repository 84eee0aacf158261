// What every view of the page shares: calls to the console's API (JSON, with a time bound of the page's own so
// that even a console server that stops answering gives an error, never a spinner forever), a hook that loads and
// refreshes one API path, the hash router, and small pieces (error box, confirm step, tables).

import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** Longer than the server's own deadline (15 s by default), which answers first when the cluster is the problem. */
const PAGE_TIMEOUT_MS = 45_000;

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/api${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(PAGE_TIMEOUT_MS),
    });
  } catch (error) {
    const e = error as Error;
    const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
    throw new ApiFailure(
      0,
      timedOut
        ? `the console did not answer within ${PAGE_TIMEOUT_MS / 1000} s`
        : `the console is unreachable: ${e.message}`,
    );
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ApiFailure(response.status, `HTTP ${response.status}: ${text.slice(0, 200)}`);
  }
  if (!response.ok) {
    const e = json as { error?: string; code?: string };
    throw new ApiFailure(response.status, e.error ?? `HTTP ${response.status}`, e.code);
  }
  return json as T;
}

export interface Loaded<T> {
  data: T | null;
  error: ApiFailure | null;
  loading: boolean;
  reload: () => void;
}

/** GETs `path` now and every `refreshMs` (if given); the last data stays shown beside a later error. */
export function useApi<T>(path: string | null, refreshMs?: number): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiFailure | null>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const inFlight = useRef(false);
  const load = useCallback(() => {
    if (path === null || inFlight.current) return;
    const mine = generation.current;
    inFlight.current = true;
    setLoading(true);
    api<T>('GET', path)
      .then(
        (d) => {
          if (mine !== generation.current) return;
          setData(d);
          setError(null);
        },
        (e: ApiFailure) => {
          if (mine === generation.current) setError(e);
        },
      )
      .finally(() => {
        inFlight.current = false;
        if (mine === generation.current) setLoading(false);
      });
  }, [path]);
  useEffect(() => {
    generation.current++;
    inFlight.current = false;
    setData(null);
    setError(null);
    load();
    if (refreshMs === undefined) return undefined;
    const timer = setInterval(load, refreshMs);
    return () => clearInterval(timer);
  }, [load, refreshMs]);
  return { data, error, loading, reload: load };
}

/** The hash route, as segments: "#/topics/orders" -> ["topics", "orders"]. */
export function useRoute(): string[] {
  const read = () =>
    location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function href(...segments: (string | number)[]): string {
  return `#/${segments.map((s) => encodeURIComponent(String(s))).join('/')}`;
}

export function ErrorBox({ error }: { error: ApiFailure | Error | null }) {
  if (error === null) return null;
  const code = error instanceof ApiFailure && error.code ? ` (${error.code})` : '';
  return (
    <div class="error" role="alert" data-test="error">
      {error.message}
      {code}
    </div>
  );
}

export function Status<T>({
  loaded,
  children,
}: {
  loaded: Loaded<T>;
  children: (data: T) => ComponentChildren;
}) {
  return (
    <>
      <ErrorBox error={loaded.error} />
      {loaded.data === null ? (
        loaded.error === null ? (
          <p class="loading">Loading…</p>
        ) : null
      ) : (
        children(loaded.data)
      )}
    </>
  );
}

/** A two-step action: the first click asks, the second does it. */
export function Confirm({
  label,
  question,
  onConfirm,
  disabled,
}: {
  label: string;
  question: string;
  onConfirm: () => void;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm">
      {question}{' '}
      <button
        type="button"
        class="danger"
        data-test="confirm-yes"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** Runs an action, keeping its error (or success message) for display. */
export function useAction(): {
  busy: boolean;
  error: Error | null;
  done: string | null;
  run: (work: () => Promise<string>) => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const run = (work: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    setDone(null);
    work()
      .then(setDone, (e: Error) => setError(e))
      .finally(() => setBusy(false));
  };
  return { busy, error, done, run };
}

export function ActionResult({ action }: { action: ReturnType<typeof useAction> }) {
  return (
    <>
      <ErrorBox error={action.error} />
      {action.done === null ? null : (
        <div class="ok" role="status">
          {action.done}
        </div>
      )}
    </>
  );
}

/** "k=v" lines to an object; blank lines and lines without "=" are skipped. */
export function parsePairs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
