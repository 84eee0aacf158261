// The last block of producer ids handed out, /latest_producer_id_block, in Kafka's format:
//
// {"version":1,"broker":2,"block_start":"1000","block_end":"1999"}
//
// Ids are longs, so Kafka writes them as strings. A broker takes the next block with a conditional set on this
// node's version, which makes the blocks of two brokers disjoint.

import type { BrokerId, ProducerId } from '../../common/ids.js';
import { type Decoded, decodeJson, encodeJson } from './json.js';

export interface ProducerIdBlock {
  readonly brokerId: BrokerId;
  /** First id of the block. */
  readonly blockStart: ProducerId;
  /** Last id of the block, inclusive. */
  readonly blockEnd: ProducerId;
}

export function encodeProducerIdBlock(block: ProducerIdBlock): Uint8Array {
  return encodeJson({
    version: 1,
    broker: block.brokerId,
    block_start: String(block.blockStart),
    block_end: String(block.blockEnd),
  });
}

export function decodeProducerIdBlock(bytes: Uint8Array): Decoded<ProducerIdBlock> {
  return decodeJson('producer id block', bytes, (json) => {
    json.version([1]);
    const blockStart = json.integerString('block_start');
    const blockEnd = json.integerString('block_end');
    if (blockStart < 0) json.fail('block_start', `is negative: ${blockStart}`);
    if (blockEnd < blockStart) json.fail('block_end', `${blockEnd} is before block_start ${blockStart}`);
    return {
      brokerId: json.int('broker', { min: 0 }) as BrokerId,
      blockStart: blockStart as ProducerId,
      blockEnd: blockEnd as ProducerId,
    };
  });
}
