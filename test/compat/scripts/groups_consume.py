"""A group consumer for Brook's consumer group tests, with kafka-python or confluent-kafka-python.
Prints one JSON object per line and flushes each: {"event": "ready"} once subscribed, {"event": "assigned",
"partitions": [...]} after each rebalance, and {"p": partition, "o": offset, "v": value} per record. Commits
synchronously after each record it prints, so that what it printed is what the group has committed.
SIGTERM closes the consumer (which leaves the group) and exits 0; SIGKILL is the crash case.
Usage: groups_consume.py CLIENT BOOTSTRAP GROUP TOPIC RESET [SESSION_TIMEOUT_MS [INSTANCE_ID [STRATEGY]]]
CLIENT is kafka-python or confluent; RESET is earliest, latest or none; INSTANCE_ID is a group.instance.id
(static membership, confluent only) or - for none; STRATEGY a librdkafka partition.assignment.strategy.
"""
import json
import signal
import sys

client, bootstrap, group, topic, reset = sys.argv[1:6]
session_ms = int(sys.argv[6]) if len(sys.argv) > 6 else 6000
instance_id = sys.argv[7] if len(sys.argv) > 7 and sys.argv[7] != "-" else None
strategy = sys.argv[8] if len(sys.argv) > 8 else "range"
stopping = False


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def on_term(_signum, _frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, on_term)

if client == "confluent":
    from confluent_kafka import Consumer, KafkaException

    def on_assign(_consumer, partitions):
        emit({"event": "assigned", "partitions": sorted(p.partition for p in partitions)})

    config = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": reset if reset != "none" else "error",
        "enable.auto.commit": False,
        "session.timeout.ms": session_ms,
        "heartbeat.interval.ms": 500,
        "partition.assignment.strategy": strategy,
    }
    if instance_id is not None:
        config["group.instance.id"] = instance_id
    c = Consumer(config)

    def on_revoke(consumer, partitions):
        # The cooperative protocol revokes incrementally; assign() is then not called for what is kept.
        if strategy == "cooperative-sticky":
            consumer.incremental_unassign(partitions)

    def on_assign_any(consumer, partitions):
        if strategy == "cooperative-sticky":
            consumer.incremental_assign(partitions)
            emit({"event": "assigned", "partitions": sorted(p.partition for p in consumer.assignment())})
        else:
            on_assign(consumer, partitions)

    c.subscribe([topic], on_assign=on_assign_any, on_revoke=on_revoke)
    emit({"event": "ready"})
    while not stopping:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            emit({"event": "error", "error": str(m.error())})
            continue
        emit({"p": m.partition(), "o": m.offset(), "v": m.value().decode()})
        try:
            c.commit(message=m, asynchronous=False)
        except KafkaException as e:
            emit({"event": "commit-error", "error": str(e)})
    c.close()
else:
    from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
    from kafka.consumer.subscription_state import ConsumerRebalanceListener
    from kafka.consumer.fetcher import NoOffsetForPartitionError
    from kafka.errors import CommitFailedError

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            pass

        def on_partitions_assigned(self, assigned):
            emit({"event": "assigned", "partitions": sorted(p.partition for p in assigned)})

    c = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset=reset,
        enable_auto_commit=False,
        session_timeout_ms=session_ms,
        heartbeat_interval_ms=500,
        api_version_auto_timeout_ms=10000,
    )
    c.subscribe([topic], listener=Listener())
    emit({"event": "ready"})
    while not stopping:
        try:
            batch = c.poll(timeout_ms=200)
        except NoOffsetForPartitionError as e:
            # auto_offset_reset="none" and no committed offset: kafka-python raises instead of guessing.
            emit({"event": "error", "error": f"no offset: {e}"})
            break
        for tp, records in batch.items():
            for m in records:
                emit({"p": m.partition, "o": m.offset, "v": m.value.decode()})
            try:
                c.commit({TopicPartition(tp.topic, tp.partition): OffsetAndMetadata(records[-1].offset + 1, "")})
            except CommitFailedError as e:
                emit({"event": "commit-error", "error": str(e)})
    c.close()
