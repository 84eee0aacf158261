// Error responses built from a request, as Kafka's AbstractRequest.getErrorResponse builds them: the response of
// the request's own API, with the error at the top level where the response has an ErrorCode there, and on every
// topic, partition, group or resource the request named where Kafka puts it there (the client then sees the error
// where it looks). Used where the broker refuses a whole request without handling it (a request during SASL
// authentication).
//
// One generic builder for every API: the response starts from its generated shape (RESPONSE_SHAPES: every field at
// its default, throttle time 0), gets the error in its top-level ErrorCode and ErrorMessage where it has them, and
// then what ERROR_PLANS says Kafka adds for the API: elements mirroring the request's collections (with the keys
// copied across), and values other than the defaults. An API without a plan gets the top-level error only.

import { errorByCode } from './errors.js';
import type { FieldShape, StructShape } from './messages/codec-support.js';
import { EMPTY_BYTES, ZERO_UUID } from './messages/codec-support.js';
import { ApiKey } from './messages/index.js';
import { RESPONSE_SHAPES } from './messages/response-shapes.js';

export interface ErrorDetail {
  readonly code: number;
  readonly message: string;
}

type Struct = Record<string, unknown>;

/**
 * Which text an errorMessage field gets: the refusal's own message (Kafka's ApiError.message()), the error code's
 * standard description (where Kafka writes Errors.message()), or none (the field keeps its default).
 */
type MessageChoice = 'own' | 'standard' | 'none';

/** In a copy list: the request element itself (a name, a group id, a partition index) rather than a field of it. */
const ITSELF = '.';

/** One response collection that Kafka fills with an element per element of a request collection. */
interface Mirror {
  /** The request's collection (of structs or of keys), by property, or computed from the request. */
  readonly from: string | ((request: Struct) => readonly unknown[] | null);
  /** The response's collection that gets one element per request element. */
  readonly to: string;
  /** Response property -> request property (or ITSELF) whose value the element takes. */
  readonly copy?: Readonly<Record<string, string>>;
  /** Values other than the defaults, as Kafka sets them. */
  readonly fill?: Readonly<Struct>;
  /** The element's error code field, when not errorCode. */
  readonly errorField?: string;
  /** The element's errorMessage (default 'own'). */
  readonly message?: MessageChoice;
  /** The request versions where Kafka fills this collection (default all). */
  readonly versions?: readonly [number, number];
  readonly nested?: readonly Mirror[];
}

interface ErrorPlan {
  /** Top-level response property -> request property whose value it takes. */
  readonly copy?: Readonly<Record<string, string>>;
  readonly fill?: Readonly<Struct>;
  /** The top-level errorMessage (default 'own'). */
  readonly message?: MessageChoice;
  readonly mirrors?: readonly Mirror[];
  /** Whether Kafka answers at all: its getErrorResponse gives none for a Produce with acks=0. */
  readonly answered?: (request: Struct) => boolean;
}

const ALL_VERSIONS = [0, 0x7fff] as const;

/** Kafka's KafkaPrincipal.ANONYMOUS, as the delegation-token responses carry it. */
const ANONYMOUS = { type: 'User', name: 'ANONYMOUS' };

/** Topic/partition pairs of the three StopReplica layouts (v0, v1-2, v3+): absent layouts decode as empty. */
function stopReplicaPartitions(request: Struct): Struct[] {
  const ungrouped = (request.ungroupedPartitions as Struct[]).map((p) => ({
    topicName: p.topicName,
    partitionIndex: p.partitionIndex,
  }));
  const v1 = (request.topics as Struct[]).flatMap((t) =>
    (t.partitionIndexes as number[]).map((partitionIndex) => ({ topicName: t.name, partitionIndex })),
  );
  const v3 = (request.topicStates as Struct[]).flatMap((t) =>
    (t.partitionStates as Struct[]).map((p) => ({
      topicName: t.topicName,
      partitionIndex: p.partitionIndex,
    })),
  );
  return [...ungrouped, ...v1, ...v3];
}

/** LeaderAndIsr before v5: one error per partition state, ungrouped (v0-1) or under its topic (v2-4). */
function leaderAndIsrPartitions(request: Struct): Struct[] {
  const grouped = (request.topicStates as Struct[]).flatMap((t) =>
    (t.partitionStates as Struct[]).map((p) => ({
      topicName: t.topicName,
      partitionIndex: p.partitionIndex,
    })),
  );
  return [...(request.ungroupedPartitionStates as Struct[]), ...grouped];
}

/** The users an AlterUserScramCredentials names, each once, sorted, as Kafka answers them. */
function scramUsers(request: Struct): string[] {
  const names = [...(request.deletions as Struct[]), ...(request.upsertions as Struct[])].map((u) => u.name);
  return [...new Set(names as string[])].sort();
}

/** Per-partition keys (int32 partition indexes) become `{ partitionIndex }` elements. */
const PARTITION_KEYS = { copy: { partitionIndex: ITSELF } } as const;

/** What Kafka's getErrorResponse of each API adds to the top-level error (see the file comment). */
const ERROR_PLANS: Partial<Record<number, ErrorPlan>> = {
  [ApiKey.PRODUCE]: {
    answered: (request) => request.acks !== 0,
    mirrors: [
      {
        from: 'topicData',
        to: 'responses',
        copy: { name: 'name' },
        nested: [
          {
            from: 'partitionData',
            to: 'partitionResponses',
            copy: { index: 'index' },
            fill: { baseOffset: -1n },
          },
        ],
      },
    ],
  },
  [ApiKey.FETCH]: {
    copy: { sessionId: 'sessionId' },
    mirrors: [
      {
        // From v13 the top-level error is enough and Kafka lists no partitions.
        versions: [0, 12],
        from: 'topics',
        to: 'responses',
        copy: { topic: 'topic', topicId: 'topicId' },
        nested: [
          {
            from: 'partitions',
            to: 'partitions',
            copy: { partitionIndex: 'partition' },
            fill: { highWatermark: -1n, abortedTransactions: null, records: EMPTY_BYTES },
          },
        ],
      },
    ],
  },
  [ApiKey.LIST_OFFSETS]: {
    mirrors: [
      {
        from: 'topics',
        to: 'topics',
        copy: { name: 'name' },
        nested: [{ from: 'partitions', to: 'partitions', copy: { partitionIndex: 'partitionIndex' } }],
      },
    ],
  },
  [ApiKey.METADATA]: {
    // A request for all topics (null) is answered with none; a topic asked for by id alone gets the name ''.
    mirrors: [
      {
        from: (request) =>
          (request.topics as Struct[] | null)?.map((t) => ({ ...t, name: t.name ?? '' })) ?? null,
        to: 'topics',
        copy: { name: 'name', topicId: 'topicId' },
      },
    ],
  },
  [ApiKey.LEADER_AND_ISR]: {
    mirrors: [
      {
        versions: [0, 4],
        from: leaderAndIsrPartitions,
        to: 'partitionErrors',
        copy: { topicName: 'topicName', partitionIndex: 'partitionIndex' },
      },
      {
        versions: [5, ALL_VERSIONS[1]],
        from: 'topicStates',
        to: 'topics',
        copy: { topicId: 'topicId' },
        nested: [
          { from: 'partitionStates', to: 'partitionErrors', copy: { partitionIndex: 'partitionIndex' } },
        ],
      },
    ],
  },
  [ApiKey.STOP_REPLICA]: {
    mirrors: [
      {
        from: stopReplicaPartitions,
        to: 'partitionErrors',
        copy: { topicName: 'topicName', partitionIndex: 'partitionIndex' },
      },
    ],
  },
  [ApiKey.OFFSET_COMMIT]: {
    mirrors: [
      {
        from: 'topics',
        to: 'topics',
        copy: { name: 'name' },
        nested: [{ from: 'partitions', to: 'partitions', copy: { partitionIndex: 'partitionIndex' } }],
      },
    ],
  },
  [ApiKey.OFFSET_FETCH]: {
    // Before v2 the error on each partition asked for; v2-7 the top-level error alone; from v8 per group, with no
    // topics listed.
    mirrors: [
      {
        versions: [0, 1],
        from: 'topics',
        to: 'topics',
        copy: { name: 'name' },
        nested: [
          { from: 'partitionIndexes', to: 'partitions', ...PARTITION_KEYS, fill: { committedOffset: -1n } },
        ],
      },
      { from: 'groups', to: 'groups', copy: { groupId: 'groupId' } },
    ],
  },
  [ApiKey.FIND_COORDINATOR]: {
    // From v4 many keys at once, answered per key.
    fill: { nodeId: -1, port: -1 },
    message: 'standard',
    mirrors: [
      {
        from: 'coordinatorKeys',
        to: 'coordinators',
        copy: { key: ITSELF },
        fill: { nodeId: -1, port: -1 },
        message: 'standard',
      },
    ],
  },
  [ApiKey.JOIN_GROUP]: { fill: { protocolName: null } },
  [ApiKey.DESCRIBE_GROUPS]: { mirrors: [{ from: 'groups', to: 'groups', copy: { groupId: ITSELF } }] },
  [ApiKey.CREATE_TOPICS]: { mirrors: [{ from: 'topics', to: 'topics', copy: { name: 'name' } }] },
  [ApiKey.DELETE_TOPICS]: {
    // Before v6 the request names topics; from v6 it lists them with ids.
    mirrors: [
      { from: 'topicNames', to: 'responses', copy: { name: ITSELF }, message: 'none' },
      { from: 'topics', to: 'responses', copy: { name: 'name', topicId: 'topicId' }, message: 'none' },
    ],
  },
  [ApiKey.DELETE_RECORDS]: {
    mirrors: [
      {
        from: 'topics',
        to: 'topics',
        copy: { name: 'name' },
        nested: [
          {
            from: 'partitions',
            to: 'partitions',
            copy: { partitionIndex: 'partitionIndex' },
            fill: { lowWatermark: -1n },
          },
        ],
      },
    ],
  },
  [ApiKey.INIT_PRODUCER_ID]: { fill: { producerEpoch: -1 } },
  [ApiKey.OFFSET_FOR_LEADER_EPOCH]: {
    mirrors: [
      {
        from: 'topics',
        to: 'topics',
        copy: { topic: 'topic' },
        nested: [{ from: 'partitions', to: 'partitions', copy: { partition: 'partition' } }],
      },
    ],
  },
  [ApiKey.ADD_PARTITIONS_TO_TXN]: {
    // From v4 (a batch of transactions) the top-level error alone.
    mirrors: [
      {
        from: 'v3AndBelowTopics',
        to: 'resultsByTopicV3AndBelow',
        copy: { name: 'name' },
        nested: [
          {
            from: 'partitions',
            to: 'resultsByPartition',
            ...PARTITION_KEYS,
            errorField: 'partitionErrorCode',
          },
        ],
      },
    ],
  },
  [ApiKey.WRITE_TXN_MARKERS]: {
    mirrors: [
      {
        from: 'markers',
        to: 'markers',
        copy: { producerId: 'producerId' },
        nested: [
          {
            from: 'topics',
            to: 'topics',
            copy: { name: 'name' },
            nested: [{ from: 'partitionIndexes', to: 'partitions', ...PARTITION_KEYS }],
          },
        ],
      },
    ],
  },
  [ApiKey.TXN_OFFSET_COMMIT]: {
    mirrors: [
      {
        from: 'topics',
        to: 'topics',
        copy: { name: 'name' },
        nested: [{ from: 'partitions', to: 'partitions', copy: { partitionIndex: 'partitionIndex' } }],
      },
    ],
  },
  [ApiKey.CREATE_ACLS]: { mirrors: [{ from: 'creations', to: 'results' }] },
  [ApiKey.DELETE_ACLS]: { mirrors: [{ from: 'filters', to: 'filterResults' }] },
  [ApiKey.DESCRIBE_CONFIGS]: {
    mirrors: [
      {
        from: 'resources',
        to: 'results',
        copy: { resourceType: 'resourceType', resourceName: 'resourceName' },
        message: 'standard',
      },
    ],
  },
  [ApiKey.ALTER_CONFIGS]: {
    mirrors: [
      {
        from: 'resources',
        to: 'responses',
        copy: { resourceType: 'resourceType', resourceName: 'resourceName' },
      },
    ],
  },
  [ApiKey.ALTER_REPLICA_LOG_DIRS]: {
    mirrors: [
      {
        from: (request) => (request.dirs as Struct[]).flatMap((dir) => dir.topics as Struct[]),
        to: 'results',
        copy: { topicName: 'name' },
        nested: [{ from: 'partitions', to: 'partitions', ...PARTITION_KEYS }],
      },
    ],
  },
  [ApiKey.CREATE_PARTITIONS]: { mirrors: [{ from: 'topics', to: 'results', copy: { name: 'name' } }] },
  [ApiKey.CREATE_DELEGATION_TOKEN]: {
    fill: {
      principalType: ANONYMOUS.type,
      principalName: ANONYMOUS.name,
      tokenRequesterPrincipalType: ANONYMOUS.type,
      tokenRequesterPrincipalName: ANONYMOUS.name,
      issueTimestampMs: -1n,
      expiryTimestampMs: -1n,
      maxTimestampMs: -1n,
    },
  },
  [ApiKey.DELETE_GROUPS]: { mirrors: [{ from: 'groupsNames', to: 'results', copy: { groupId: ITSELF } }] },
  [ApiKey.ELECT_LEADERS]: {
    mirrors: [
      {
        from: 'topicPartitions',
        to: 'replicaElectionResults',
        copy: { topic: 'topic' },
        nested: [{ from: 'partitions', to: 'partitionResult', copy: { partitionId: ITSELF } }],
      },
    ],
  },
  [ApiKey.INCREMENTAL_ALTER_CONFIGS]: {
    mirrors: [
      {
        from: 'resources',
        to: 'responses',
        copy: { resourceType: 'resourceType', resourceName: 'resourceName' },
      },
    ],
  },
  [ApiKey.ALTER_PARTITION_REASSIGNMENTS]: {
    mirrors: [
      {
        from: 'topics',
        to: 'responses',
        copy: { name: 'name' },
        nested: [{ from: 'partitions', to: 'partitions', copy: { partitionIndex: 'partitionIndex' } }],
      },
    ],
  },
  [ApiKey.LIST_PARTITION_REASSIGNMENTS]: {
    mirrors: [
      {
        from: 'topics',
        to: 'topics',
        copy: { name: 'name' },
        nested: [{ from: 'partitionIndexes', to: 'partitions', ...PARTITION_KEYS }],
      },
    ],
  },
  [ApiKey.DESCRIBE_CLIENT_QUOTAS]: { fill: { entries: null } },
  [ApiKey.ALTER_CLIENT_QUOTAS]: {
    mirrors: [{ from: 'entries', to: 'entries', copy: { entity: 'entity' }, message: 'standard' }],
  },
  [ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS]: { mirrors: [{ from: 'users', to: 'results' }] },
  [ApiKey.ALTER_USER_SCRAM_CREDENTIALS]: {
    mirrors: [{ from: scramUsers, to: 'results', copy: { user: ITSELF } }],
  },
  [ApiKey.DESCRIBE_PRODUCERS]: {
    mirrors: [
      {
        from: 'topics',
        to: 'topics',
        copy: { name: 'name' },
        nested: [{ from: 'partitionIndexes', to: 'partitions', ...PARTITION_KEYS, message: 'none' }],
      },
    ],
  },
  [ApiKey.DESCRIBE_TRANSACTIONS]: {
    mirrors: [{ from: 'transactionalIds', to: 'transactionStates', copy: { transactionalId: ITSELF } }],
  },
  [ApiKey.CONSUMER_GROUP_HEARTBEAT]: { message: 'none' },
  [ApiKey.CONSUMER_GROUP_DESCRIBE]: {
    mirrors: [{ from: 'groupIds', to: 'groups', copy: { groupId: ITSELF }, message: 'none' }],
  },
};

/**
 * The body of `apiKey`'s response to `request` (a decoded body of that API at `version`) carrying `error` as
 * Kafka's getErrorResponse places it; null when Brook has no response shape for the API or Kafka sends none.
 */
export function errorResponseBody(
  apiKey: number,
  version: number,
  request: unknown,
  error: ErrorDetail,
): unknown {
  const shape = RESPONSE_SHAPES[apiKey];
  if (shape === undefined) return null;
  const plan = ERROR_PLANS[apiKey] ?? {};
  const body = request as Struct;
  if (plan.answered !== undefined && !plan.answered(body)) return null;
  const response = defaultsOf(shape, version);
  set(response, shape, 'errorCode', error.code, version);
  setMessage(response, shape, plan.message, error, version);
  for (const [to, from] of Object.entries(plan.copy ?? {})) set(response, shape, to, body[from], version);
  for (const [to, value] of Object.entries(plan.fill ?? {})) set(response, shape, to, value, version);
  for (const mirror of plan.mirrors ?? []) addMirrored(response, shape, body, mirror, version, error);
  return response;
}

function inRange(range: readonly [number, number] | undefined, version: number): boolean {
  return range !== undefined && version >= range[0] && version <= range[1];
}

/** Null is what a decoder gives for a field absent at `version`, and what it may carry where it is nullable. */
function nullAllowed(field: FieldShape, version: number): boolean {
  return inRange(field.nullable, version) || !inRange(field.versions, version);
}

/**
 * The value a decoder gives for an absent field: its default, where a null default of a field present at `version`
 * but not nullable there is the type's empty value (as Kafka's own error responses write it).
 */
function defaultOf(field: FieldShape, version: number): unknown {
  if (field.value === null && nullAllowed(field, version)) return null;
  switch (field.type) {
    case 'array':
      return [];
    case 'struct':
      return defaultsOf(field.struct!, version);
    case 'string':
      return field.value ?? '';
    case 'uuid':
      return field.value ?? ZERO_UUID;
    case 'bytes':
    case 'records':
      return field.value ?? EMPTY_BYTES;
    default:
      return field.value;
  }
}

function defaultsOf(shape: StructShape, version: number): Struct {
  const out: Struct = {};
  for (const [property, field] of Object.entries(shape)) out[property] = defaultOf(field, version);
  return out;
}

/** Sets a field the struct has; a null where the version does not allow one leaves the default. */
function set(target: Struct, shape: StructShape, property: string, value: unknown, version: number): void {
  const field = shape[property];
  if (field === undefined) return;
  if (value === null && !nullAllowed(field, version)) return;
  target[property] = value;
}

function setMessage(
  target: Struct,
  shape: StructShape,
  choice: MessageChoice = 'own',
  error: ErrorDetail,
  version: number,
): void {
  if (choice === 'none') return;
  const message = choice === 'own' ? error.message : (errorByCode(error.code)?.message ?? error.message);
  set(target, shape, 'errorMessage', message, version);
}

function addMirrored(
  target: Struct,
  shape: StructShape,
  request: Struct,
  mirror: Mirror,
  version: number,
  error: ErrorDetail,
): void {
  const struct = shape[mirror.to]?.struct;
  if (struct === undefined || !inRange(mirror.versions ?? ALL_VERSIONS, version)) return;
  const source = typeof mirror.from === 'function' ? mirror.from(request) : request[mirror.from];
  if (!Array.isArray(source) || source.length === 0) return;
  const elements = source.map((item: unknown) => {
    const element = defaultsOf(struct, version);
    const fields = (item ?? {}) as Struct;
    for (const [to, from] of Object.entries(mirror.copy ?? {})) {
      set(element, struct, to, from === ITSELF ? item : fields[from], version);
    }
    for (const [to, value] of Object.entries(mirror.fill ?? {})) set(element, struct, to, value, version);
    set(element, struct, mirror.errorField ?? 'errorCode', error.code, version);
    setMessage(element, struct, mirror.message, error, version);
    for (const nested of mirror.nested ?? []) addMirrored(element, struct, fields, nested, version, error);
    return element;
  });
  target[mirror.to] = [...(target[mirror.to] as unknown[]), ...elements];
}
