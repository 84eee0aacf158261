// A first-in first-out queue whose shift() is O(1) however long it grows: Array.prototype.shift moves every
// element once an array is large, which made draining a long queue quadratic. The backing array is compacted
// once more than half of it is consumed. Bounds are the owner's (each queue's owner states its own).

export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item, or undefined when empty. */
  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  /** Removes and returns the oldest item, or undefined when empty. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Removes one item wherever it is (O(n): for the rare timeout or cancellation); false if absent. */
  remove(item: T): boolean {
    const i = this.items.indexOf(item, this.head);
    if (i < 0) return false;
    this.items.splice(i, 1);
    return true;
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const out = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return out;
  }
}
