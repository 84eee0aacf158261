// A reader of the Prometheus text exposition format (0.0.4), as much as the console's charts need: each sample's
// metric name, labels and value. Comments (# HELP, # TYPE) and timestamps are skipped; a line that does not parse is
// skipped too, since one odd line from a broker must not blank the charts.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?\s*$/;

/** `a="x",b="y\"z"` -> {a: 'x', b: 'y"z'}; null when malformed. */
function parseLabels(text: string): Record<string, string> | null {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    while (text[i] === ',' || text[i] === ' ') i++;
    if (i >= text.length) break;
    const eq = text.indexOf('=', i);
    if (eq < 0 || text[eq + 1] !== '"') return null;
    const name = text.slice(i, eq).trim();
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\' && j + 1 < text.length) {
        j++;
        value += text[j] === 'n' ? '\n' : text[j];
      } else {
        value += text[j];
      }
    }
    if (j >= text.length) return null;
    labels[name] = value;
    i = j + 1;
  }
  return labels;
}

export function parsePrometheusText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels = m[2] === undefined ? {} : parseLabels(m[2]);
    if (labels === null) continue;
    const value = Number(m[3]);
    if (Number.isNaN(value) && m[3] !== 'NaN') continue;
    out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** The sum of a metric's samples whose labels include every pair in `match` ('' matches a missing label). */
export function sumOf(samples: Sample[], name: string, match: Record<string, string> = {}): number | null {
  let total: number | null = null;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (!Object.entries(match).every(([k, v]) => (s.labels[k] ?? '') === v)) continue;
    total = (total ?? 0) + s.value;
  }
  return total;
}
