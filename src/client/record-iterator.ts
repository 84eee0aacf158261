// The consumer's async iterator (Consumer[Symbol.asyncIterator]), written out rather than an async generator: a
// record already polled is handed out in a promise that is resolved at once, where a generator's yield costs
// several promise turns per record (the consume benchmark's per-record CPU, bench/README.md). Semantics are those
// of the generator it replaced: the loop starts with the first next(), stop() ends it at the next record, an
// error from poll ends it, and a poll in flight is never started twice (calls made while one waits are answered
// after it, in order).

/** What the iterator needs of its consumer. */
export interface IteratedLoop<R> {
  /** Starts the loop (stop() ends it). */
  start(): void;
  /** Whether stop() has not been called since. */
  running(): boolean;
  /** Records of the next poll that has any, or null once stop() or close() ended the loop. */
  poll(): Promise<R[] | null>;
}

export class RecordIterator<R> implements AsyncIterableIterator<R> {
  private records: R[] = [];
  private index = 0;
  private started = false;
  private finished = false;
  /** The poll in flight; later next() calls wait for it. */
  private polling: Promise<IteratorResult<R, undefined>> | null = null;

  constructor(private readonly loop: IteratedLoop<R>) {}

  next(): Promise<IteratorResult<R, undefined>> {
    if (this.polling !== null)
      return this.polling.then(
        () => this.next(),
        () => this.next(),
      );
    if (this.finished) return Promise.resolve(ITERATION_DONE);
    if (!this.started) {
      this.started = true;
      this.loop.start();
    } else if (!this.loop.running()) {
      this.finish();
      return Promise.resolve(ITERATION_DONE);
    }
    if (this.index < this.records.length) {
      return Promise.resolve({ value: this.records[this.index++]!, done: false });
    }
    const polling = this.pollNext();
    this.polling = polling;
    const clear = (): void => {
      if (this.polling === polling) this.polling = null;
    };
    polling.then(clear, clear);
    return polling;
  }

  return(): Promise<IteratorResult<R, undefined>> {
    this.finish();
    return Promise.resolve(ITERATION_DONE);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<R> {
    return this;
  }

  private async pollNext(): Promise<IteratorResult<R, undefined>> {
    let records: R[] | null;
    try {
      records = await this.loop.poll();
    } catch (error) {
      this.finish();
      throw error;
    }
    if (records === null || this.finished) {
      this.finish();
      return ITERATION_DONE;
    }
    this.records = records;
    this.index = 1;
    return { value: records[0]!, done: false };
  }

  private finish(): void {
    this.finished = true;
    this.records = [];
    this.index = 0;
  }
}

const ITERATION_DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });
