"""What the confluent-kafka-python transaction scripts share: a transactional producer ready for its first
transaction, and reading a topic's partitions to their end as one isolation level sees them.
"""

import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

_PARTITION_EOF = -191


def transactional_producer(bootstrap, transactional_id, timeout_s):
    """A Producer with `transactional_id` whose init_transactions has completed (waited for up to timeout_s)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": timeout_s * 1000,
        }
    )
    producer.init_transactions(timeout_s)
    return producer


def read_to_end(bootstrap, topic, partitions, isolation, group_prefix, idle_polls):
    """The values of `partitions` of `topic` from offset 0 to the end each reports, as `isolation`
    (read_committed or read_uncommitted) sees them, sorted. Gives up after `idle_polls` empty one-second polls.
    """
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"{group_prefix}-{uuid.uuid4()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "enable.partition.eof": True,
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in partitions])
    values = []
    eof = set()
    idle = 0
    while len(eof) < len(partitions) and idle < idle_polls:
        m = c.poll(1)
        if m is None:
            idle += 1
            continue
        if m.error():
            if m.error().code() == _PARTITION_EOF:
                eof.add(m.partition())
            continue
        values.append(m.value().decode())
    c.close()
    return sorted(values)
