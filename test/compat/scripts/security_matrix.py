"""kafka-python or confluent-kafka-python over secured listeners: for each case, produce one record to the case's
topic and read it back from the beginning of partition 0, with the case's security settings unchanged from what
the client's users write for Apache Kafka.

Usage: security_matrix.py kafka-python|confluent CASES_JSON
CASES_JSON: a list of {name, bootstrap, topic, protocol, ca, cert?, key?, mechanism?, username?, password?}.
Prints one JSON object: case name -> "ok" or the error the client reported. One case failing does not stop the
others, so the test shows every combination that fails at once.
"""
import json
import sys
import time

lib, cases = sys.argv[1], json.loads(sys.argv[2])
DEADLINE_S = 30


def kafka_python_case(case):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    settings = {"bootstrap_servers": case["bootstrap"], "security_protocol": case["protocol"]}
    if "SSL" in case["protocol"]:
        settings["ssl_cafile"] = case["ca"]
        if case.get("cert"):
            settings["ssl_certfile"] = case["cert"]
            settings["ssl_keyfile"] = case["key"]
    if case.get("mechanism"):
        settings["sasl_mechanism"] = case["mechanism"]
        settings["sasl_plain_username"] = case["username"]
        settings["sasl_plain_password"] = case["password"]
    producer = KafkaProducer(acks="all", **settings)
    producer.send(case["topic"], value=case["name"].encode(), partition=0).get(timeout=DEADLINE_S)
    producer.close()
    consumer = KafkaConsumer(enable_auto_commit=False, **settings)
    partition = TopicPartition(case["topic"], 0)
    consumer.assign([partition])
    consumer.seek_to_beginning(partition)
    deadline = time.time() + DEADLINE_S
    try:
        while time.time() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                if any(r.value == case["name"].encode() for r in records):
                    return "ok"
        return "not consumed"
    finally:
        consumer.close()


def confluent_case(case):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    settings = {"bootstrap.servers": case["bootstrap"], "security.protocol": case["protocol"]}
    if "SSL" in case["protocol"]:
        settings["ssl.ca.location"] = case["ca"]
        if case.get("cert"):
            settings["ssl.certificate.location"] = case["cert"]
            settings["ssl.key.location"] = case["key"]
    if case.get("mechanism"):
        settings["sasl.mechanism"] = case["mechanism"]
        settings["sasl.username"] = case["username"]
        settings["sasl.password"] = case["password"]
    errors = []
    producer = Producer({**settings, "acks": "all"})
    producer.produce(case["topic"], case["name"].encode(), partition=0, on_delivery=lambda e, m: errors.append(e))
    producer.flush(DEADLINE_S)
    if errors != [None]:
        return "produce failed: %r" % errors
    consumer = Consumer({**settings, "group.id": "matrix-" + case["name"], "enable.auto.commit": False})
    consumer.assign([TopicPartition(case["topic"], 0, OFFSET_BEGINNING)])
    deadline = time.time() + DEADLINE_S
    try:
        while time.time() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            if message.error():
                return "consume failed: %s" % message.error()
            if message.value() == case["name"].encode():
                return "ok"
        return "not consumed"
    finally:
        consumer.close()


run = kafka_python_case if lib == "kafka-python" else confluent_case
results = {}
for case in cases:
    try:
        results[case["name"]] = run(case)
    except Exception as e:  # the test prints what failed; one case must not hide the others
        results[case["name"]] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(results))
