// Cuts size-prefixed frames (Kafka's 4-byte length, then the frame) out of a byte stream, for a benchmark connection
// whose frames are used only while its handler runs: a frame lying whole inside one chunk is handed over as a view
// of that chunk, and one spanning chunks is copied into a single buffer reused for every such frame (grown to the
// largest seen). So receiving allocates nothing per frame: a backlog reader that concatenated each 1-16 MiB fetch
// response into fresh memory spent as much of its core on that as on the bytes (bench/README.md, "L_rtt and
// L_serve"). A frame must not be kept past the handler: the next one overwrites it.

import { assert } from '../../src/common/assert.js';

export class FrameAssembler {
  /** Frame bytes gathered across chunks; reused. */
  private frame: Buffer = Buffer.alloc(0);
  /** The size prefix being read (it may itself span chunks). */
  private readonly prefix = Buffer.alloc(4);
  private prefixHave = 0;
  /** Size of the frame being gathered, -1 while reading a prefix. */
  private need = -1;
  private have = 0;

  constructor(
    private readonly frameBytesMax: number,
    /** `gathered`: the frame lies in the assembler's reused buffer (else it is a view of the chunk pushed). */
    private readonly onFrame: (frame: Buffer, gathered: boolean) => void,
  ) {}

  /** Takes one chunk; calls onFrame for each frame it completes. The chunk is not kept. */
  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.need < 0) {
        if (this.prefixHave === 0 && chunk.length - at >= 4) {
          this.need = chunk.readInt32BE(at);
          at += 4;
        } else {
          const take = Math.min(4 - this.prefixHave, chunk.length - at);
          chunk.copy(this.prefix, this.prefixHave, at, at + take);
          this.prefixHave += take;
          at += take;
          if (this.prefixHave < 4) return;
          this.need = this.prefix.readInt32BE(0);
          this.prefixHave = 0;
        }
        assert(this.need >= 0 && this.need <= this.frameBytesMax, `frame of ${this.need} bytes`);
        this.have = 0;
        if (chunk.length - at >= this.need) {
          // Whole in this chunk: no copy.
          const size = this.need;
          this.need = -1;
          this.onFrame(chunk.subarray(at, at + size), false);
          at += size;
          continue;
        }
        if (this.frame.length < this.need) this.frame = Buffer.allocUnsafe(this.need);
      }
      const take = Math.min(this.need - this.have, chunk.length - at);
      chunk.copy(this.frame, this.have, at, at + take);
      this.have += take;
      at += take;
      if (this.have === this.need) {
        const size = this.need;
        this.need = -1;
        this.onFrame(this.frame.subarray(0, size), true);
      }
    }
  }
}
