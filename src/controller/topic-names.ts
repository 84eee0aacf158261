// Kafka's rules for topic names (its Topic.validate and collision checks), with Kafka's messages, so that a
// client sees the same INVALID_TOPIC_EXCEPTION text from Brook as from Kafka.

export const TOPIC_NAME_LENGTH_MAX = 249;

const LEGAL = /^[a-zA-Z0-9._-]+$/;

/** Why the name is illegal, or null when it is legal. */
export function topicNameProblem(name: string): string | null {
  if (name.length === 0) return "Topic name is illegal, it can't be empty";
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > TOPIC_NAME_LENGTH_MAX) {
    return `Topic name is illegal, it can't be longer than ${TOPIC_NAME_LENGTH_MAX} characters, topic name: ${name}`;
  }
  if (!LEGAL.test(name)) {
    return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  }
  return null;
}

/** Kafka's metric names replace '.' by '_', so two topics that differ only there would share metrics. */
export function hasCollisionChars(name: string): boolean {
  return name.includes('.') || name.includes('_');
}

export function unifyCollisionChars(name: string): string {
  return name.replaceAll('.', '_');
}

/** True when two different names become equal once '.' and '_' are unified. */
export function topicsCollide(a: string, b: string): boolean {
  return a !== b && unifyCollisionChars(a) === unifyCollisionChars(b);
}

/** Kafka's internal topics; clients see them with isInternal set. */
export const INTERNAL_TOPIC_NAMES: ReadonlySet<string> = new Set([
  '__consumer_offsets',
  '__transaction_state',
]);
