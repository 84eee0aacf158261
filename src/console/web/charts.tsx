// The live charts: throughput in and out, request latency and lag per group, drawn as SVG lines from the points
// the console's sampler keeps (live-metrics.ts), polled every two seconds while the page is open.

import type { MetricsPoint, MetricsSeries } from '../api-types.js';
import { formatBytes } from '../format.js';
import { ErrorBox, Status, useApi } from './common.js';

const WIDTH = 520;
const HEIGHT = 140;
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2'];

interface Line {
  label: string;
  values: (number | null)[];
}

function Chart({ title, lines, unit }: { title: string; lines: Line[]; unit: (v: number) => string }) {
  const all = lines.flatMap((l) => l.values.filter((v): v is number => v !== null));
  const max = Math.max(1e-9, ...all);
  const n = Math.max(2, ...lines.map((l) => l.values.length));
  const x = (i: number) => (i / (n - 1)) * WIDTH;
  const y = (v: number) => HEIGHT - (v / max) * (HEIGHT - 10);
  return (
    <figure class="chart" data-test="chart">
      <figcaption>
        {title} <span class="meta">(max {unit(all.length === 0 ? 0 : max)})</span>
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT} role="img" aria-label={title}>
        <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} class="axis" />
        {lines.map((l, li) => {
          const points = l.values
            .map((v, i) => (v === null ? null : `${x(i).toFixed(1)},${y(v).toFixed(1)}`))
            .filter((p) => p !== null)
            .join(' ');
          return (
            <polyline
              key={l.label}
              points={points}
              fill="none"
              stroke={COLORS[li % COLORS.length]}
              stroke-width="2"
            />
          );
        })}
      </svg>
      <div class="legend">
        {lines.map((l, li) => {
          const last = [...l.values].reverse().find((v) => v !== null);
          return (
            <span key={l.label}>
              <svg width="10" height="10" aria-hidden="true">
                <rect width="10" height="10" fill={COLORS[li % COLORS.length]} />
              </svg>{' '}
              {l.label}: {last === undefined ? '-' : unit(last)}
            </span>
          );
        })}
      </div>
    </figure>
  );
}

const perSec = (v: number) => `${v.toFixed(1)}/s`;
const bytesPerSec = (v: number) => `${formatBytes(Math.round(v))}/s`;
const ms = (v: number) => `${v.toFixed(1)} ms`;
const count = (v: number) => `${Math.round(v)}`;

function series(points: MetricsPoint[], pick: (p: MetricsPoint) => number | null): (number | null)[] {
  return points.map(pick);
}

export function ChartsView() {
  const loaded = useApi<MetricsSeries>('/metrics', 2_000);
  return (
    <section>
      <h2>Live charts</h2>
      <Status loaded={loaded}>
        {(s) => {
          const groups = [...new Set(s.points.flatMap((p) => Object.keys(p.lag)))].sort();
          const fromMetrics = s.source === 'prometheus';
          return (
            <>
              <p class="meta" data-test="charts-source">
                {fromMetrics
                  ? "Throughput and latency from the brokers' Prometheus metrics"
                  : 'Throughput from log end and committed offsets (start with --metrics-url for bytes and request latency)'}
                ; lag from committed offsets. One point every {s.intervalMs / 1000} s, {s.points.length} so
                far.
              </p>
              <ErrorBox error={s.error === null ? null : new Error(s.error)} />
              <div class="charts">
                <Chart
                  title="Messages in"
                  unit={perSec}
                  lines={[
                    { label: 'produced', values: series(s.points, (p) => p.messagesInPerSec) },
                    {
                      label: 'consumed (commits)',
                      values: series(s.points, (p) => p.messagesConsumedPerSec),
                    },
                  ]}
                />
                {fromMetrics ? (
                  <Chart
                    title="Bytes in and out"
                    unit={bytesPerSec}
                    lines={[
                      { label: 'in', values: series(s.points, (p) => p.bytesInPerSec) },
                      { label: 'out', values: series(s.points, (p) => p.bytesOutPerSec) },
                    ]}
                  />
                ) : null}
                <Chart
                  title="Request latency"
                  unit={ms}
                  lines={[
                    ...(fromMetrics
                      ? [
                          { label: 'Produce (broker)', values: series(s.points, (p) => p.produceLatencyMs) },
                          { label: 'Fetch (broker)', values: series(s.points, (p) => p.fetchLatencyMs) },
                        ]
                      : []),
                    { label: 'ListOffsets (console)', values: series(s.points, (p) => p.probeLatencyMs) },
                  ]}
                />
                <Chart
                  title="Consumer lag"
                  unit={count}
                  lines={groups.map((g) => ({ label: g, values: series(s.points, (p) => p.lag[g] ?? null) }))}
                />
              </div>
            </>
          );
        }}
      </Status>
    </section>
  );
}
