// KeyValue: a key and a value together, as Kafka's KeyValue (mappers of map and flatMap return these).

export interface KeyValue<K, V> {
  key: K;
  value: V;
}

export const KeyValue = {
  pair: <K, V>(key: K, value: V): KeyValue<K, V> => ({ key, value }),
} as const;
