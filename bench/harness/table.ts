// Human summaries: fixed-width text tables and number formatting, for the terminal after a run. The result
// file is the record; this is for the reader, so figures are rounded to what the noise here justifies.
import { type Summary, summarize } from './repeat.js';

/** Formats `value` with about three significant digits, without exponent notation for ordinary magnitudes. */
export function formatFigure(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 100 || value === 0) return Math.round(value).toString();
  if (magnitude >= 10) return value.toFixed(1);
  if (magnitude >= 0.01) return value.toFixed(2);
  return value.toPrecision(2);
}

/** `0.934` as `93.4 %`. */
export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)} %`;
}

/** `median (min-max)` of a repeated figure. */
export function formatRange(median: number, min: number, max: number): string {
  return `${formatFigure(median)} (${formatFigure(min)}-${formatFigure(max)})`;
}

/** `median (min-max)` of a summary (or anything with its three figures). */
export function formatSummaryRange(s: Pick<Summary, 'median' | 'min' | 'max'>): string {
  return formatRange(s.median, s.min, s.max);
}

/** `median (min-max)` of repeated values. */
export function formatValuesRange(values: readonly number[]): string {
  return formatSummaryRange(summarize(values));
}

const numeric = /^[-+]?[\d.,]+( ?%)?$/;

/**
 * Lays out `rows` under `header` in columns separated by two spaces; numbers are aligned right, text left.
 * Returns the table without a trailing newline.
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    widths
      .map((w, i) => {
        const cell = cells[i] ?? '';
        return numeric.test(cell) ? cell.padStart(w) : cell.padEnd(w);
      })
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}
