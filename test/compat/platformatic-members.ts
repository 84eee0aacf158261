// Group members built on @platformatic/kafka's Consumer, shared by its classic and KIP-848 group tests: each
// member records what it consumed and every assignment it was given.

import {
  Consumer,
  type ConsumerOptions,
  type Message,
  type Producer,
  stringDeserializers,
} from '@platformatic/kafka';

export interface PlatformaticMember {
  readonly consumer: Consumer<string, string, string, string>;
  readonly values: { partition: number; value: string }[];
  /** The member's partitions of `topic` after each join, sorted. */
  readonly assignments: number[][];
  close(): Promise<void>;
}

export interface MemberOptions {
  readonly bootstrap: string;
  readonly clientId: string;
  readonly groupId: string;
  readonly topic: string;
  /** Extra consumer options: the group protocol, session and heartbeat timings. */
  readonly consumer?: Partial<ConsumerOptions<string, string, string, string>>;
}

/** Starts a member consuming `topic` from its committed offsets (earliest when none), autocommitting every 100 ms. */
export async function startPlatformaticMember(options: MemberOptions): Promise<PlatformaticMember> {
  const consumer = new Consumer<string, string, string, string>({
    clientId: options.clientId,
    bootstrapBrokers: [options.bootstrap],
    groupId: options.groupId,
    maxWaitTime: 200,
    deserializers: stringDeserializers,
    ...options.consumer,
  });
  const values: PlatformaticMember['values'] = [];
  const assignments: number[][] = [];
  consumer.on(
    'consumer:group:join',
    (payload: { assignments?: { topic: string; partitions: number[] }[] }) => {
      const mine = payload.assignments?.find((a) => a.topic === options.topic)?.partitions ?? [];
      assignments.push([...mine].sort());
    },
  );
  const stream = await consumer.consume({
    topics: [options.topic],
    mode: 'committed',
    fallbackMode: 'earliest',
    autocommit: 100,
  });
  stream.on('data', (message: Message<string, string, string, string>) => {
    values.push({ partition: message.partition, value: message.value });
  });
  return {
    consumer,
    values,
    assignments,
    close: async () => {
      await stream.close();
      await consumer.close();
    },
  };
}

/** Sends `count` records `<phase>-<i>` spread over `partitions` partitions; answers the values sent. */
export async function sendPhase(
  producer: Producer<string, string, string, string>,
  topic: string,
  phase: string,
  count = 60,
  partitions = 6,
): Promise<string[]> {
  const messages = Array.from({ length: count }, (_, i) => ({
    topic,
    value: `${phase}-${i}`,
    partition: i % partitions,
  }));
  await producer.send({ messages });
  return messages.map((m) => m.value);
}

/** The values starting with `<phase>-` that `members` consumed, duplicates included. */
export function consumedInPhase(members: readonly PlatformaticMember[], phase: string): string[] {
  return members.flatMap((m) => m.values.map((v) => v.value)).filter((v) => v.startsWith(`${phase}-`));
}
