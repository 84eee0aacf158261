// The message browser of one topic: newest first, from the start, from an offset or from a time, one partition or
// all; keys, values and headers shown as text, pretty-printed JSON or hex; and a form to produce a test message.

import { useEffect, useState } from 'preact/hooks';
import type { BrowseMode, BrowseResult, ProduceResult, RecordView } from '../api-types.js';
import { type ShowAs, show } from '../format.js';
import { ActionResult, type ApiFailure, api, ErrorBox, parsePairs, useAction } from './common.js';

export function MessagesView({ topic, partitions }: { topic: string; partitions: number }) {
  const [partition, setPartition] = useState('');
  const [mode, setMode] = useState<BrowseMode>('newest');
  const [offset, setOffset] = useState('0');
  const [time, setTime] = useState('');
  const [limit, setLimit] = useState('50');
  const [showAs, setShowAs] = useState<ShowAs>('text');
  const [result, setResult] = useState<BrowseResult | null>(null);
  const [error, setError] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);

  const load = () => {
    const q = new URLSearchParams({ mode, limit });
    if (partition !== '') q.set('partition', partition);
    if (mode === 'offset') q.set('offset', offset);
    if (mode === 'timestamp') q.set('timestamp', String(time === '' ? Date.now() : new Date(time).getTime()));
    setBusy(true);
    setError(null);
    api<BrowseResult>('GET', `/topics/${encodeURIComponent(topic)}/messages?${q}`)
      .then(setResult, (e: ApiFailure) => setError(e))
      .finally(() => setBusy(false));
  };
  // The newest records show at once; other modes wait for their parameters.
  useEffect(load, [topic]);

  return (
    <>
      <form
        class="panel row"
        data-test="browse"
        onSubmit={(e) => {
          e.preventDefault();
          load();
        }}
      >
        <label>
          partition{' '}
          <select name="partition" value={partition} onChange={(e) => setPartition(e.currentTarget.value)}>
            <option value="">all</option>
            {Array.from({ length: partitions }, (_, p) => (
              <option key={p} value={String(p)}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          read{' '}
          <select name="mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as BrowseMode)}>
            <option value="newest">newest first</option>
            <option value="oldest">from the start</option>
            <option value="offset">from an offset</option>
            <option value="timestamp">from a time</option>
          </select>
        </label>
        {mode === 'offset' ? (
          <label>
            offset{' '}
            <input
              name="offset"
              type="number"
              min="0"
              value={offset}
              onInput={(e) => setOffset(e.currentTarget.value)}
            />
          </label>
        ) : null}
        {mode === 'timestamp' ? (
          <label>
            time{' '}
            <input
              name="time"
              type="datetime-local"
              step="1"
              value={time}
              onInput={(e) => setTime(e.currentTarget.value)}
            />
          </label>
        ) : null}
        <label>
          at most{' '}
          <input
            name="limit"
            type="number"
            min="1"
            max="500"
            value={limit}
            onInput={(e) => setLimit(e.currentTarget.value)}
          />
        </label>
        <label>
          show as{' '}
          <select name="show-as" value={showAs} onChange={(e) => setShowAs(e.currentTarget.value as ShowAs)}>
            <option value="text">text</option>
            <option value="json">JSON</option>
            <option value="hex">hex</option>
          </select>
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Reading…' : 'Read'}
        </button>
      </form>
      <ErrorBox error={error} />
      {result === null ? null : <Records records={result.records} showAs={showAs} />}
      <Produce topic={topic} partitions={partitions} onProduced={load} />
    </>
  );
}

function Records({ records, showAs }: { records: RecordView[]; showAs: ShowAs }) {
  if (records.length === 0) return <p class="meta">No records in this window.</p>;
  return (
    <table data-test="records" class="records">
      <thead>
        <tr>
          <th class="num">partition</th>
          <th class="num">offset</th>
          <th>timestamp</th>
          <th>key</th>
          <th>value</th>
          <th>headers</th>
        </tr>
      </thead>
      <tbody>
        {records.map((r) => (
          <tr key={`${r.partition}-${r.offset}`}>
            <td class="num">{r.partition}</td>
            <td class="num">{r.offset}</td>
            <td class="meta">{new Date(r.timestamp).toISOString()}</td>
            <td>
              <pre class="key">{show(r.key, showAs)}</pre>
            </td>
            <td>
              <pre class="value">{show(r.value, showAs)}</pre>
              {r.truncated ? <span class="meta">(first 64 KiB of {r.valueBytes} bytes)</span> : null}
            </td>
            <td>
              {r.headers.map((h) => (
                <div key={h.key}>
                  <code>{h.key}</code>: <pre class="inline">{show(h.value, showAs)}</pre>
                </div>
              ))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Produce({
  topic,
  partitions,
  onProduced,
}: {
  topic: string;
  partitions: number;
  onProduced: () => void;
}) {
  const [partition, setPartition] = useState('');
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [headers, setHeaders] = useState('');
  const action = useAction();
  return (
    <details class="panel">
      <summary>Produce a test message</summary>
      <form
        data-test="produce"
        onSubmit={(e) => {
          e.preventDefault();
          action.run(async () => {
            const r = await api<ProduceResult>('POST', `/topics/${encodeURIComponent(topic)}/messages`, {
              partition: partition === '' ? undefined : Number(partition),
              key,
              value,
              headers: parsePairs(headers),
            });
            onProduced();
            return `written to partition ${r.partition} at offset ${r.offset}`;
          });
        }}
      >
        <label>
          partition{' '}
          <select name="partition" value={partition} onChange={(e) => setPartition(e.currentTarget.value)}>
            <option value="">by key</option>
            {Array.from({ length: partitions }, (_, p) => (
              <option key={p} value={String(p)}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          key <input name="key" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        </label>
        <label class="wide">
          value{' '}
          <textarea name="value" rows={3} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </label>
        <label class="wide">
          headers (key=value, one a line){' '}
          <textarea
            name="headers"
            rows={2}
            value={headers}
            onInput={(e) => setHeaders(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={action.busy}>
          Produce
        </button>
        <ActionResult action={action} />
      </form>
    </details>
  );
}
