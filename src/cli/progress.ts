// A one-line progress display for long-running tools, on stderr and only when stderr is a terminal: a person
// watching sees "reading offsets of 500 partitions..." or "12000/100000 records acknowledged" rewrite itself in
// place, while a script (stderr a pipe or a file) gets nothing extra to parse or to mistake for an error.

/** The part of a stream this needs; process.stderr in the tools, a fake in tests. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** Redraws at most this often, so a tight loop calling update() costs a comparison, not a write. */
const REDRAW_INTERVAL_MS = 100;

export class Progress {
  private readonly enabled: boolean;
  private shownLength = 0;
  private lastDrawMs = 0;

  /**
   * `alsoWhen` is a further condition: a tool whose output goes to the same terminal line by line (dump-log)
   * shows progress only when that output goes elsewhere, so the two never interleave.
   */
  constructor(
    private readonly stream: ProgressStream = process.stderr,
    alsoWhen = true,
  ) {
    this.enabled = stream.isTTY === true && alsoWhen;
  }

  /** Shows `text` in place of the previous line; `now` draws even within the redraw interval (a stage change). */
  update(text: string, now = false): void {
    if (!this.enabled) return;
    const t = Date.now();
    if (!now && t - this.lastDrawMs < REDRAW_INTERVAL_MS) return;
    this.lastDrawMs = t;
    this.stream.write(`\r${text.padEnd(this.shownLength)}`);
    this.shownLength = text.length;
  }

  /** Erases the line, so that what the tool prints next starts on a clean line. */
  clear(): void {
    if (!this.enabled || this.shownLength === 0) return;
    this.stream.write(`\r${' '.repeat(this.shownLength)}\r`);
    this.shownLength = 0;
  }
}
