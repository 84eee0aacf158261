// Command sarama-admin drives Sarama's ClusterAdmin (Debian's golang-github-shopify-sarama-dev, 1.22) and the
// requests behind it against a Kafka-compatible broker, and prints one JSON object: what each call answered,
// errors as Kafka error codes, for test/compat/sarama.test.ts to compare with what Kafka answers.
//
//	sarama-admin BOOTSTRAP PREFIX
//
// Sarama is told the broker is Kafka 2.1. Every topic and group it makes starts with PREFIX. A call that fails
// in a way no broker should make it fail (a connection error, an undecodable answer) ends the program with exit
// code 1.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"sort"
	"time"

	"github.com/Shopify/sarama"
)

// outcome is a call's answer: 0 for success, a Kafka error code, or -1 with the text of any other error.
type outcome struct {
	Code    int16  `json:"code"`
	Message string `json:"message,omitempty"`
}

func outcomeOf(err error) outcome {
	if err == nil {
		return outcome{}
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return outcome{Code: int16(kerr)}
	}
	var terr *sarama.TopicError
	if errors.As(err, &terr) {
		msg := ""
		if terr.ErrMsg != nil {
			msg = *terr.ErrMsg
		}
		return outcome{Code: int16(terr.Err), Message: msg}
	}
	var perr *sarama.TopicPartitionError
	if errors.As(err, &perr) {
		msg := ""
		if perr.ErrMsg != nil {
			msg = *perr.ErrMsg
		}
		return outcome{Code: int16(perr.Err), Message: msg}
	}
	return outcome{Code: -1, Message: err.Error()}
}

type configEntry struct {
	Value     string `json:"value"`
	ReadOnly  bool   `json:"readOnly"`
	Default   bool   `json:"default"`
	Source    int8   `json:"source"`
	Sensitive bool   `json:"sensitive"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sarama-admin BOOTSTRAP PREFIX")
		os.Exit(2)
	}
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.Ltime|log.Lmicroseconds)
	out, err := run(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama-admin:", err)
		os.Exit(1)
	}
	text, _ := json.Marshal(out)
	fmt.Println(string(text))
}

func newConfig() *sarama.Config {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_1_0_0
	conf.ClientID = "sarama-admin"
	conf.Producer.Return.Successes = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Metadata.Retry.Backoff = 100 * time.Millisecond
	return conf
}

func str(s string) *string { return &s }

func run(bootstrap, prefix string) (map[string]interface{}, error) {
	addrs := []string{bootstrap}
	conf := newConfig()
	client, err := sarama.NewClient(addrs, conf)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdmin(addrs, conf)
	if err != nil {
		return nil, fmt.Errorf("cluster admin: %w", err)
	}
	defer admin.Close()
	controller, err := client.Controller()
	if err != nil {
		return nil, err
	}
	out := map[string]interface{}{}

	// CreateTopic: validateOnly, an explicit assignment, configs, and the refusals.
	validated := prefix + "-validated"
	out["createValidateOnly"] = outcomeOf(admin.CreateTopic(validated,
		&sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, true))
	described, err := admin.DescribeTopics([]string{validated})
	if err != nil {
		return nil, err
	}
	out["validatedExists"] = int16(described[0].Err)

	assigned := prefix + "-assigned"
	out["createAssigned"] = outcomeOf(admin.CreateTopic(assigned, &sarama.TopicDetail{NumPartitions: -1,
		ReplicationFactor: -1, ReplicaAssignment: map[int32][]int32{0: {0}, 1: {0}, 2: {0}}}, false))
	described, err = admin.DescribeTopics([]string{assigned})
	if err != nil {
		return nil, err
	}
	out["assignedPartitions"] = len(described[0].Partitions)

	configured := prefix + "-configured"
	out["createConfigured"] = outcomeOf(admin.CreateTopic(configured, &sarama.TopicDetail{NumPartitions: 1,
		ReplicationFactor: 1, ConfigEntries: map[string]*string{"retention.ms": str("123456"),
			"cleanup.policy": str("compact")}}, false))
	out["createExisting"] = outcomeOf(admin.CreateTopic(configured,
		&sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false))
	out["createBadConfigValue"] = outcomeOf(admin.CreateTopic(prefix+"-bad-value", &sarama.TopicDetail{
		NumPartitions: 1, ReplicationFactor: 1, ConfigEntries: map[string]*string{"retention.ms": str("soon")}}, false))
	out["createUnknownConfig"] = outcomeOf(admin.CreateTopic(prefix+"-bad-name", &sarama.TopicDetail{
		NumPartitions: 1, ReplicationFactor: 1, ConfigEntries: map[string]*string{"no.such.config": str("1")}}, false))
	out["createTooManyReplicas"] = outcomeOf(admin.CreateTopic(prefix+"-rf3",
		&sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 3}, false))
	out["createZeroPartitions"] = outcomeOf(admin.CreateTopic(prefix+"-p0",
		&sarama.TopicDetail{NumPartitions: 0, ReplicationFactor: 1}, false))
	out["createBadName"] = outcomeOf(admin.CreateTopic("bad/name",
		&sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false))
	out["createAssignedUnknownBroker"] = outcomeOf(admin.CreateTopic(prefix+"-broker7", &sarama.TopicDetail{
		NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignment: map[int32][]int32{0: {7}}}, false))

	// Refusals of a manual assignment, as Kafka's CreateTopics checks it.
	assignment := func(name string, parts, rf int32, a map[int32][]int32) outcome {
		return outcomeOf(admin.CreateTopic(prefix+"-"+name, &sarama.TopicDetail{NumPartitions: parts,
			ReplicationFactor: int16(rf), ReplicaAssignment: a}, false))
	}
	out["createAssignedWithCount"] = assignment("with-count", 1, -1, map[int32][]int32{0: {0}})
	out["createAssignedGap"] = assignment("gap", -1, -1, map[int32][]int32{0: {0}, 2: {0}})
	out["createAssignedDuplicate"] = assignment("duplicate", -1, -1, map[int32][]int32{0: {0, 0}})
	out["createAssignedEmpty"] = assignment("empty", -1, -1, map[int32][]int32{0: {}})
	out["createZeroReplicas"] = assignment("rf0", 1, 0, nil)
	longName := prefix
	for len(longName) < 250 {
		longName += "-long"
	}
	out["createLongName"] = outcomeOf(admin.CreateTopic(longName[:250],
		&sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false))
	out["createDotDot"] = outcomeOf(admin.CreateTopic("..",
		&sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false))

	// ListTopics: only the configs set on the topic, as DescribeConfigs v0 marks them not default.
	topics, err := admin.ListTopics()
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	listed := map[string]string{}
	for k, v := range topics[configured].ConfigEntries {
		listed[k] = *v
	}
	out["listedConfigs"] = listed
	internal := map[string]string{}
	for k, v := range topics["__consumer_offsets"].ConfigEntries {
		internal[k] = *v
	}
	out["listedOffsetsTopicConfigs"] = internal
	out["listedAssigned"] = topics[assigned].NumPartitions
	out["listedReplicationFactor"] = topics[assigned].ReplicationFactor
	_, out["listedValidated"] = topics[validated]

	missing, err := admin.DescribeTopics([]string{prefix + "-missing"})
	if err != nil {
		return nil, err
	}
	out["describeMissing"] = int16(missing[0].Err)
	// An empty name is a name Kafka refuses (INVALID_TOPIC_EXCEPTION), in Metadata v5 as in v1 with auto-creation.
	out["describeEmptyName"] = metadataError(admin, "")
	out["metadataV1EmptyName"] = metadataV1Error(controller, "")
	out["deleteTopicsEmptyName"] = deleteTopicsError(controller, "")
	out["fetchEmptyName"] = fetchError(controller, "")

	// CreatePartitions.
	out["partitionsTo4"] = outcomeOf(admin.CreatePartitions(assigned, 4, nil, false))
	out["partitionsTo4Again"] = outcomeOf(admin.CreatePartitions(assigned, 4, nil, false))
	out["partitionsTo2"] = outcomeOf(admin.CreatePartitions(assigned, 2, nil, false))
	out["partitionsValidateOnly"] = outcomeOf(admin.CreatePartitions(assigned, 6, nil, true))
	out["partitionsAssigned"] = outcomeOf(admin.CreatePartitions(assigned, 5, [][]int32{{0}}, false))
	out["partitionsBadAssignment"] = outcomeOf(admin.CreatePartitions(assigned, 7, [][]int32{{0}}, false))
	out["partitionsUnknownBroker"] = outcomeOf(admin.CreatePartitions(assigned, 8, [][]int32{{7}}, false))
	out["partitionsShortAssignment"] = outcomeOf(admin.CreatePartitions(assigned, 9, [][]int32{{0}}, false))
	out["partitionsDuplicate"] = outcomeOf(admin.CreatePartitions(assigned, 8, [][]int32{{0, 0}}, false))
	out["partitionsMissing"] = outcomeOf(admin.CreatePartitions(prefix+"-missing", 3, nil, false))
	if err := client.RefreshMetadata(assigned); err != nil {
		return nil, err
	}
	ps, err := client.Partitions(assigned)
	if err != nil {
		return nil, err
	}
	out["partitionsAfter"] = len(ps)

	// DeleteRecords, through the ClusterAdmin and the raw request to see each partition's answer.
	records := prefix + "-records"
	if err := admin.CreateTopic(records, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		return nil, err
	}
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return nil, err
	}
	for i := 0; i < 10; i++ {
		if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: records,
			Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			return nil, err
		}
	}
	out["deleteRecords"] = outcomeOf(admin.DeleteRecords(records, map[int32]int64{0: 4}))
	oldest, err := client.GetOffset(records, 0, sarama.OffsetOldest)
	if err != nil {
		return nil, err
	}
	out["oldestAfterDelete"] = oldest
	deleteRecords := func(topic string, offsets map[int32]int64) (map[string]interface{}, error) {
		resp, err := controller.DeleteRecords(&sarama.DeleteRecordsRequest{Timeout: 5 * time.Second,
			Topics: map[string]*sarama.DeleteRecordsRequestTopic{topic: {PartitionOffsets: offsets}}})
		if err != nil {
			return nil, err
		}
		answer := map[string]interface{}{}
		for p, r := range resp.Topics[topic].Partitions {
			answer[fmt.Sprint(p)] = map[string]interface{}{"lowWatermark": r.LowWatermark, "code": int16(r.Err)}
		}
		return answer, nil
	}
	if out["deleteRecordsRaw"], err = deleteRecords(records, map[int32]int64{0: 6}); err != nil {
		return nil, err
	}
	if out["deleteRecordsBeyondEnd"], err = deleteRecords(records, map[int32]int64{0: 11}); err != nil {
		return nil, err
	}
	if out["deleteRecordsToEnd"], err = deleteRecords(records, map[int32]int64{0: -1}); err != nil {
		return nil, err
	}
	if out["deleteRecordsBackwards"], err = deleteRecords(records, map[int32]int64{0: 2}); err != nil {
		return nil, err
	}
	if out["deleteRecordsMissingPartition"], err = deleteRecords(records, map[int32]int64{5: 1}); err != nil {
		return nil, err
	}
	if out["deleteRecordsNegative"], err = deleteRecords(records, map[int32]int64{0: -2}); err != nil {
		return nil, err
	}
	// A topic that is only compacted keeps its records until compaction removes them: Kafka refuses deletion.
	compacted := prefix + "-compacted"
	if err := admin.CreateTopic(compacted, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1,
		ConfigEntries: map[string]*string{"cleanup.policy": str("compact")}}, false); err != nil {
		return nil, err
	}
	if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: compacted, Key: sarama.StringEncoder("k"),
		Value: sarama.StringEncoder("v")}); err != nil {
		return nil, err
	}
	if out["deleteRecordsCompacted"], err = deleteRecords(compacted, map[int32]int64{0: 1}); err != nil {
		return nil, err
	}

	// DescribeConfig and AlterConfig.
	describe := func(t sarama.ConfigResourceType, name string) (map[string]configEntry, outcome) {
		entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: t, Name: name})
		if err != nil {
			return nil, outcomeOf(err)
		}
		m := map[string]configEntry{}
		for _, e := range entries {
			m[e.Name] = configEntry{e.Value, e.ReadOnly, e.Default, int8(e.Source), e.Sensitive}
		}
		return m, outcome{}
	}
	topicConfigs, o := describe(sarama.TopicResource, configured)
	out["describeTopicOutcome"] = o
	out["describedTopicConfigs"] = map[string]configEntry{"retention.ms": topicConfigs["retention.ms"],
		"cleanup.policy": topicConfigs["cleanup.policy"], "segment.bytes": topicConfigs["segment.bytes"],
		"min.insync.replicas": topicConfigs["min.insync.replicas"]}
	out["describedTopicConfigCount"] = len(topicConfigs)
	_, out["describeMissingTopic"] = describe(sarama.TopicResource, prefix+"-missing")
	// Sarama 1.22 numbers the broker resource 5 where Kafka has 4: Kafka refuses the request as INVALID_REQUEST.
	_, out["describeBroker"] = describe(sarama.BrokerResource, fmt.Sprint(controller.ID()))

	out["alterTopic"] = outcomeOf(admin.AlterConfig(sarama.TopicResource, configured,
		map[string]*string{"retention.ms": str("654321")}, false))
	topicConfigs, _ = describe(sarama.TopicResource, configured)
	out["alteredRetention"] = topicConfigs["retention.ms"]
	// AlterConfigs replaces the whole set: cleanup.policy, not named, goes back to its default.
	out["alteredCleanupPolicy"] = topicConfigs["cleanup.policy"]
	out["alterValidateOnly"] = outcomeOf(admin.AlterConfig(sarama.TopicResource, configured,
		map[string]*string{"retention.ms": str("1000")}, true))
	topicConfigs, _ = describe(sarama.TopicResource, configured)
	out["retentionAfterValidateOnly"] = topicConfigs["retention.ms"].Value
	out["alterBadValue"] = outcomeOf(admin.AlterConfig(sarama.TopicResource, configured,
		map[string]*string{"retention.ms": str("later")}, false))
	out["alterUnknownName"] = outcomeOf(admin.AlterConfig(sarama.TopicResource, configured,
		map[string]*string{"no.such.config": str("1")}, false))
	out["alterMissingTopic"] = outcomeOf(admin.AlterConfig(sarama.TopicResource, prefix+"-missing",
		map[string]*string{"retention.ms": str("1000")}, false))

	// ACLs, raw so that each creation's and filter's error shows.
	aclResource := sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: configured,
		ResoucePatternType: sarama.AclPatternLiteral}
	acl := sarama.Acl{Principal: "User:alice", Host: "*", Operation: sarama.AclOperationRead,
		PermissionType: sarama.AclPermissionAllow}
	created, err := controller.CreateAcls(&sarama.CreateAclsRequest{Version: 1,
		AclCreations: []*sarama.AclCreation{{Resource: aclResource, Acl: acl}}})
	if err != nil {
		return nil, fmt.Errorf("create acls: %w", err)
	}
	if len(created.AclCreationResponses) == 1 {
		out["createAcl"] = int16(created.AclCreationResponses[0].Err)
	}
	filter := sarama.AclFilter{Version: 1, ResourceType: sarama.AclResourceAny,
		ResourcePatternTypeFilter: sarama.AclPatternAny, Operation: sarama.AclOperationAny,
		PermissionType: sarama.AclPermissionAny}
	acls, err := controller.DescribeAcls(&sarama.DescribeAclsRequest{Version: 1, AclFilter: filter})
	if err != nil {
		return nil, fmt.Errorf("describe acls: %w", err)
	}
	out["listAcls"] = map[string]interface{}{"code": int16(acls.Err), "resources": len(acls.ResourceAcls)}
	deleted, err := controller.DeleteAcls(&sarama.DeleteAclsRequest{Version: 1,
		Filters: []*sarama.AclFilter{&filter}})
	if err != nil {
		return nil, fmt.Errorf("delete acls: %w", err)
	}
	if len(deleted.FilterResponses) == 1 {
		out["deleteAcls"] = map[string]interface{}{"code": int16(deleted.FilterResponses[0].Err),
			"matching": len(deleted.FilterResponses[0].MatchingAcls)}
	}

	// Groups.
	group := prefix + "-group"
	if err := commitOnce(client, group, records); err != nil {
		return nil, err
	}
	// The group's commit made the offsets topic; its records are the coordinator's, not a client's to delete.
	if out["deleteRecordsInternal"], err = deleteRecords("__consumer_offsets", map[int32]int64{0: 0}); err != nil {
		return nil, err
	}
	groups, err := admin.ListConsumerGroups()
	if err != nil {
		return nil, err
	}
	out["listedGroupProtocol"] = groups[group]
	descs, err := admin.DescribeConsumerGroups([]string{group, prefix + "-no-group"})
	if err != nil {
		return nil, err
	}
	describedGroups := map[string]interface{}{}
	for _, d := range descs {
		describedGroups[d.GroupId] = map[string]interface{}{"code": int16(d.Err), "state": d.State,
			"protocolType": d.ProtocolType, "protocol": d.Protocol, "members": len(d.Members)}
	}
	out["describedGroups"] = describedGroups
	offsets, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{records: {0}})
	if err != nil {
		return nil, err
	}
	b := offsets.GetBlock(records, 0)
	out["groupOffset"] = map[string]interface{}{"offset": b.Offset, "metadata": b.Metadata, "code": int16(b.Err)}
	offsets, err = admin.ListConsumerGroupOffsets(prefix+"-no-group", map[string][]int32{records: {0}})
	if err != nil {
		return nil, err
	}
	b = offsets.GetBlock(records, 0)
	out["unknownGroupOffset"] = map[string]interface{}{"offset": b.Offset, "code": int16(b.Err)}
	coordinator, err := client.Coordinator(group)
	if err != nil {
		return nil, err
	}
	dg, err := coordinator.DeleteGroups(&sarama.DeleteGroupsRequest{Groups: []string{group, prefix + "-no-group"}})
	if err != nil {
		return nil, err
	}
	deletedGroups := map[string]int16{}
	for g, code := range dg.GroupErrorCodes {
		deletedGroups[g] = int16(code)
	}
	out["deleteGroups"] = deletedGroups
	groups, err = admin.ListConsumerGroups()
	if err != nil {
		return nil, err
	}
	_, out["deletedGroupListed"] = groups[group]

	// DescribeCluster.
	brokers, controllerID, err := admin.DescribeCluster()
	if err != nil {
		return nil, err
	}
	var brokerList []string
	for _, b := range brokers {
		brokerList = append(brokerList, fmt.Sprintf("%d@%s", b.ID(), b.Addr()))
	}
	sort.Strings(brokerList)
	out["cluster"] = map[string]interface{}{"brokers": brokerList, "controller": controllerID}

	out["deleteTopic"] = outcomeOf(admin.DeleteTopic(configured))
	out["deleteMissingTopic"] = outcomeOf(admin.DeleteTopic(prefix + "-missing"))
	return out, nil
}

// commitOnce commits offset 3 with metadata for a group that has no members, as a tool resetting offsets does.
func commitOnce(client sarama.Client, group, topic string) error {
	om, err := sarama.NewOffsetManagerFromClient(group, client)
	if err != nil {
		return err
	}
	pom, err := om.ManagePartition(topic, 0)
	if err != nil {
		return err
	}
	pom.MarkOffset(3, "meta")
	if err := pom.Close(); err != nil {
		return err
	}
	return om.Close()
}

// metadataError is DescribeTopics' answer for one topic: its error code, or -1 when the call itself failed.
func metadataError(admin sarama.ClusterAdmin, topic string) int16 {
	described, err := admin.DescribeTopics([]string{topic})
	if err != nil || len(described) != 1 {
		return -1
	}
	return int16(described[0].Err)
}

// metadataV1Error is Metadata v1's answer for one topic, asked as kafka-go's Writer asks (creation allowed).
func metadataV1Error(broker *sarama.Broker, topic string) int16 {
	resp, err := broker.GetMetadata(&sarama.MetadataRequest{Version: 1, Topics: []string{topic},
		AllowAutoTopicCreation: true})
	if err != nil || len(resp.Topics) != 1 {
		return -1
	}
	return int16(resp.Topics[0].Err)
}

// deleteTopicsError is DeleteTopics v1's answer for one topic name (which Sarama's DeleteTopic checks first).
func deleteTopicsError(broker *sarama.Broker, topic string) int16 {
	resp, err := broker.DeleteTopics(&sarama.DeleteTopicsRequest{Version: 1, Topics: []string{topic},
		Timeout: 5 * time.Second})
	if err != nil {
		return -1
	}
	code, ok := resp.TopicErrorCodes[topic]
	if !ok {
		return -1
	}
	return int16(code)
}

// fetchError is Fetch v4's answer for partition 0 of a topic.
func fetchError(broker *sarama.Broker, topic string) int16 {
	req := &sarama.FetchRequest{Version: 4, MaxWaitTime: 10, MinBytes: 1, MaxBytes: 1 << 20}
	req.AddBlock(topic, 0, 0, 1<<20)
	resp, err := broker.Fetch(req)
	if err != nil {
		return -1
	}
	block := resp.GetBlock(topic, 0)
	if block == nil {
		return -1
	}
	return int16(block.Err)
}
