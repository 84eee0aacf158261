// Which partition of __consumer_offsets holds a group: Kafka's Utils.abs(groupId.hashCode()) % partitionCount,
// with Java's String.hashCode over UTF-16 code units. Every broker and every Kafka tool computes the same
// answer, so a group's records stay in one partition across Brook and Kafka installations of the same layout.

/** Java's String.hashCode: h = 31 * h + c over UTF-16 code units, in 32-bit two's complement. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs: Integer.MIN_VALUE maps to 0 rather than staying negative. */
export function kafkaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}

export function groupPartition(groupId: string, partitionCount: number): number {
  return kafkaAbs(javaStringHashCode(groupId)) % partitionCount;
}
