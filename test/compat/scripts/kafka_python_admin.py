"""kafka-python's KafkaAdminClient and KafkaConsumer offset calls against a Brook broker with the ACL authorizer on.

Prints one JSON object with what each call answered (error class names where the client raises or reports one);
the Node test asserts on it. Usage: kafka_python_admin.py BOOTSTRAP PREFIX
"""
import json
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ConfigResource,
                         ConfigResourceType, NewPartitions, NewTopic, ResourcePattern, ResourcePatternFilter,
                         ResourceType)
from kafka.structs import OffsetAndMetadata

bootstrap, prefix = sys.argv[1], sys.argv[2]
out = {}
admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="compat-admin", request_timeout_ms=10000)


def outcome(call):
    """None when the call worked, else the name of the error the client raised."""
    try:
        call()
        return None
    except Exception as e:  # the client raises one class per Kafka error code
        return type(e).__name__


def topic_errors(response):
    return {t[0]: [t[1], t[2]] for t in response.topic_errors}


def entries(resource, names):
    response = admin.describe_configs([resource], include_synonyms=True)[0]
    result = response.resources[0]
    found = {}
    for name, value, read_only, source, _sensitive, synonyms in result[4]:
        if name in names:
            found[name] = {"value": value, "read_only": read_only, "source": source,
                           "synonyms": [[s[0], s[1], s[2]] for s in synonyms]}
    return [result[0], found]


t1, t2 = f"{prefix}-t1", f"{prefix}-t2"
admin.create_topics([NewTopic(t1, 2, 1, topic_configs={"retention.ms": "100000", "cleanup.policy": "compact"})])
out["create_existing"] = outcome(lambda: admin.create_topics([NewTopic(t1, 1, 1)]))
out["create_validate_only"] = outcome(lambda: admin.create_topics([NewTopic(t2, 3, 1)], validate_only=True))
out["create_bad_value"] = outcome(
    lambda: admin.create_topics([NewTopic(f"{prefix}-bad", 1, 1, topic_configs={"retention.ms": "abc"})]))
out["create_assignment"] = outcome(
    lambda: admin.create_topics([NewTopic(t2, -1, -1, replica_assignments={0: [0], 1: [0], 2: [0]})]))
out["create_unknown_broker"] = outcome(
    lambda: admin.create_topics([NewTopic(f"{prefix}-t5", -1, -1, replica_assignments={0: [7]})]))
out["partitions_grow"] = outcome(lambda: admin.create_partitions({t1: NewPartitions(4)}))
out["partitions_same"] = outcome(lambda: admin.create_partitions({t1: NewPartitions(4)}))
out["partitions_unknown"] = outcome(lambda: admin.create_partitions({f"{prefix}-nope": NewPartitions(2)}))
out["describe_topics"] = {t["topic"]: [t["error_code"], len(t["partitions"])]
                          for t in admin.describe_topics([t1, t2, f"{prefix}-nope"])}
out["listed"] = sorted(t for t in admin.list_topics() if t.startswith(prefix))
out["cluster"] = admin.describe_cluster()["controller_id"]

topic = ConfigResource(ConfigResourceType.TOPIC, t1, {"retention.ms": None, "cleanup.policy": None})
out["topic_configs"] = entries(topic, ["retention.ms", "cleanup.policy"])
out["unknown_topic_configs"] = admin.describe_configs(
    [ConfigResource(ConfigResourceType.TOPIC, f"{prefix}-nope")])[0].resources[0][0]
altered = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, t1, {"retention.ms": "2000000"})])
out["alter_topic"] = altered.resources[0][0]
bad = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, t1, {"retention.ms": "x"})]).resources[0]
out["alter_bad_value"] = [bad[0], bad[1]]
# AlterConfigs replaces a topic's whole set: cleanup.policy goes back to the default.
out["topic_configs_after"] = entries(topic, ["retention.ms", "cleanup.policy"])

broker_keys = ["log.retention.ms", "log.retention.hours", "log.roll.hours", "log.roll.ms", "num.io.threads"]
out["broker_configs"] = entries(ConfigResource(ConfigResourceType.BROKER, "0", {k: None for k in broker_keys}),
                                broker_keys)
refused = admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "0", {"log.retention.hours": "1"})])
out["alter_broker_hours"] = [refused.resources[0][0], refused.resources[0][1]]

producer = KafkaProducer(bootstrap_servers=bootstrap)
t0 = int(time.time() * 1000) - 60000
for i in range(10):
    producer.send(t1, partition=i % 2, value=b"v%d" % i, timestamp_ms=t0 + i * 1000)
producer.flush()
producer.close()

group = f"{prefix}-group"
consumer = KafkaConsumer(t1, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                         auto_offset_reset="earliest")
consumed = 0
deadline = time.time() + 20
while consumed < 10 and time.time() < deadline:
    consumed += sum(len(records) for records in consumer.poll(500).values())
consumer.commit()
out["consumed"] = consumed
out["groups_listed"] = sorted(g for g in admin.list_consumer_groups() if g[0].startswith(prefix))
described = admin.describe_consumer_groups([group])[0]
out["group_described"] = [described.state, described.protocol_type, len(described.members)]
out["group_offsets"] = {str(tp.partition): o.offset for tp, o in admin.list_consumer_group_offsets(group).items()}
out["delete_active_group"] = [e.__name__ for _, e in admin.delete_consumer_groups([group])]
consumer.close()
out["delete_groups"] = [e.__name__ for _, e in admin.delete_consumer_groups([group, f"{prefix}-nogroup"])]

manual = KafkaConsumer(bootstrap_servers=bootstrap, group_id=f"{prefix}-manual", enable_auto_commit=False)
parts = [TopicPartition(t1, 0), TopicPartition(t1, 1)]
manual.assign(parts)
out["beginning"] = sorted(manual.beginning_offsets(parts).values())
out["end"] = sorted(manual.end_offsets(parts).values())
by_time = manual.offsets_for_times({parts[0]: t0 + 3000, parts[1]: t0 + 100000})
out["by_time"] = [by_time[parts[0]].offset, by_time[parts[1]]]
manual.seek_to_end(parts[0])
at_end = manual.position(parts[0])
manual.seek_to_beginning(parts[0])
out["positions"] = [at_end, manual.position(parts[0])]
manual.pause(parts[0])
out["paused"] = len(manual.paused())
manual.resume(parts[0])
manual.commit({parts[0]: OffsetAndMetadata(3, "meta")})
out["committed"] = [manual.committed(parts[0]), manual.committed(parts[1])]
manual.close()
out["manual_group"] = [g for g in admin.list_consumer_groups() if g[0] == f"{prefix}-manual"]

# Deleting a topic removes the groups' committed offsets of it, and a group left empty without offsets goes.
gone = f"{prefix}-gone"
admin.create_topics([NewTopic(gone, 1, 1)])
keeper = KafkaConsumer(bootstrap_servers=bootstrap, group_id=f"{prefix}-manual", enable_auto_commit=False)
keeper.commit({TopicPartition(gone, 0): OffsetAndMetadata(0, "")})
keeper.close()
only = KafkaConsumer(bootstrap_servers=bootstrap, group_id=f"{prefix}-only", enable_auto_commit=False)
only.commit({TopicPartition(gone, 0): OffsetAndMetadata(0, "")})
only.close()
admin.delete_topics([gone])
deadline = time.time() + 10
while time.time() < deadline:
    kept = sorted(tp.topic for tp in admin.list_consumer_group_offsets(f"{prefix}-manual"))
    if gone not in kept:
        break
    time.sleep(0.2)
out["offsets_after_topic_deleted"] = kept
out["groups_after_topic_deleted"] = sorted(g[0] for g in admin.list_consumer_groups() if g[0].startswith(prefix))

read = ACL(principal="User:bob", host="*", operation=ACLOperation.READ, permission_type=ACLPermissionType.ALLOW,
           resource_pattern=ResourcePattern(ResourceType.TOPIC, t1))
deny = ACL(principal="User:bob", host="*", operation=ACLOperation.WRITE, permission_type=ACLPermissionType.DENY,
           resource_pattern=ResourcePattern(ResourceType.TOPIC, prefix, ACLResourcePatternType.PREFIXED))
cluster = ACL(principal="User:bob", host="*", operation=ACLOperation.ALTER, permission_type=ACLPermissionType.ALLOW,
              resource_pattern=ResourcePattern(ResourceType.CLUSTER, "other"))
created = admin.create_acls([read, deny, cluster])
out["acls_created"] = [len(created["succeeded"]), [e.__name__ for _, e in created["failed"]]]
any_acl = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                    resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))
matching = ACLFilter(principal=None, host=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY,
                     resource_pattern=ResourcePatternFilter(ResourceType.TOPIC, f"{prefix}-x",
                                                            ACLResourcePatternType.MATCH))
out["acls_described"] = len(admin.describe_acls(any_acl)[0])
out["acls_matching"] = [a.resource_pattern.pattern_type.name for a in admin.describe_acls(matching)[0]]
out["acls_deleted"] = len(admin.delete_acls([any_acl])[0][1])
out["acls_after"] = len(admin.describe_acls(any_acl)[0])
admin.close()
print(json.dumps(out))
