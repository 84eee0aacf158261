"""confluent-kafka-python (librdkafka) against a broker with ACLs: produce to and consume from a topic the user
may use and one it may not, over SASL_PLAINTEXT with PLAIN. Prints one JSON line with the error names each
operation ended with (null when it worked)."""

import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition

bootstrap, user, password, ok_topic, forbidden_topic = sys.argv[1:6]
common = {
    "bootstrap.servers": bootstrap,
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "PLAIN",
    "sasl.username": user,
    "sasl.password": password,
}

results = {}


def produce(topic):
    outcome = {}

    def delivered(err, msg):
        outcome["error"] = None if err is None else err.name()

    producer = Producer({**common, "message.timeout.ms": 10000})
    producer.produce(topic, b"value", callback=delivered)
    producer.flush(15)
    return outcome.get("error", "NO_REPORT")


def consume(topic):
    consumer = Consumer({**common, "group.id": "rc-g", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    deadline = time.time() + 15
    try:
        while time.time() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().name() == "_PARTITION_EOF":
                    continue
                return msg.error().name()
            return None
        return "TIMED_OUT"
    finally:
        consumer.close()


results["produce_ok"] = produce(ok_topic)
results["produce_forbidden"] = produce(forbidden_topic)
results["consume_ok"] = consume(ok_topic)
results["consume_forbidden"] = consume(forbidden_topic)
print(json.dumps(results))
