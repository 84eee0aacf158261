// Command sarama-acl drives Sarama's ACL calls (Debian's golang-github-shopify-sarama-dev, 1.22) against a
// Kafka-compatible broker with an ACL authorizer, and prints one JSON summary for test/compat/sarama.test.ts:
// the super user (PLAINTEXT, User:ANONYMOUS) grants, lists and deletes ACLs through the ClusterAdmin, and a user
// logged in with SASL/PLAIN sees what those ACLs allow.
//
//	sarama-acl PLAINTEXT_BOOTSTRAP SASL_BOOTSTRAP USER PASSWORD PREFIX
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

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: sarama-acl PLAINTEXT_BOOTSTRAP SASL_BOOTSTRAP USER PASSWORD PREFIX")
		os.Exit(2)
	}
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.Ltime|log.Lmicroseconds)
	out, err := run(os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5])
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama-acl:", err)
		os.Exit(1)
	}
	text, _ := json.Marshal(out)
	fmt.Println(string(text))
}

func newConfig() *sarama.Config {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_1_0_0
	conf.ClientID = "sarama-acl"
	conf.Producer.Return.Successes = true
	conf.Metadata.Retry.Max = 1
	conf.Metadata.Retry.Backoff = 100 * time.Millisecond
	return conf
}

func codeOf(err error) int {
	if err == nil {
		return 0
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return int(kerr)
	}
	var terr *sarama.TopicError
	if errors.As(err, &terr) {
		return int(terr.Err)
	}
	return -1
}

func str(s string) *string { return &s }

// aclText is an ACL as one comparable line.
func aclText(r sarama.Resource, a *sarama.Acl) string {
	return fmt.Sprintf("%d:%s:%d %s@%s %d %d", r.ResourceType, r.ResourceName, r.ResoucePatternType, a.Principal,
		a.Host, a.Operation, a.PermissionType)
}

func run(plain, sasl, user, password, prefix string) (map[string]interface{}, error) {
	out := map[string]interface{}{}
	admin, err := sarama.NewClusterAdmin([]string{plain}, newConfig())
	if err != nil {
		return nil, fmt.Errorf("super user admin: %w", err)
	}
	defer admin.Close()
	readable, secret := prefix+"-readable", prefix+"-secret"
	for _, t := range []string{readable, secret} {
		if err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
			return nil, err
		}
	}
	principal := "User:" + user
	grant := func(rt sarama.AclResourceType, name string, op sarama.AclOperation) error {
		return admin.CreateACL(sarama.Resource{ResourceType: rt, ResourceName: name,
			ResoucePatternType: sarama.AclPatternLiteral},
			sarama.Acl{Principal: principal, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow})
	}
	if err := grant(sarama.AclResourceTopic, readable, sarama.AclOperationRead); err != nil {
		return nil, fmt.Errorf("create acl: %w", err)
	}
	if err := grant(sarama.AclResourceGroup, prefix+"-group", sarama.AclOperationRead); err != nil {
		return nil, fmt.Errorf("create acl: %w", err)
	}
	// ACLs are eventually visible in Kafka; Brook's are at once, but allow a moment either way.
	time.Sleep(200 * time.Millisecond)

	listed, err := admin.ListAcls(sarama.AclFilter{ResourceType: sarama.AclResourceAny,
		ResourcePatternTypeFilter: sarama.AclPatternAny, Principal: str(principal),
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny})
	if err != nil {
		return nil, fmt.Errorf("list acls: %w", err)
	}
	var lines []string
	for _, r := range listed {
		for _, a := range r.Acls {
			lines = append(lines, aclText(r.Resource, a))
		}
	}
	sort.Strings(lines)
	out["listed"] = lines

	// The user, over SASL/PLAIN.
	conf := newConfig()
	conf.Net.SASL.Enable = true
	conf.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	conf.Net.SASL.Handshake = true
	conf.Net.SASL.User = user
	conf.Net.SASL.Password = password
	userAdmin, err := sarama.NewClusterAdmin([]string{sasl}, conf)
	if err != nil {
		return nil, fmt.Errorf("user admin: %w", err)
	}
	defer userAdmin.Close()
	described, err := userAdmin.DescribeTopics([]string{readable, secret})
	if err != nil {
		return nil, fmt.Errorf("user describe topics: %w", err)
	}
	topicCodes := map[string]int{}
	for _, t := range described {
		topicCodes[t.Name] = int(t.Err)
	}
	out["userDescribeTopics"] = topicCodes
	out["userCreateTopic"] = codeOf(userAdmin.CreateTopic(prefix+"-mine",
		&sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false))
	out["userDeleteTopic"] = codeOf(userAdmin.DeleteTopic(readable))
	// Sarama's ClusterAdmin drops these answers' error codes (or reports only a message): ask for them directly.
	userClient, err := sarama.NewClient([]string{sasl}, conf)
	if err != nil {
		return nil, fmt.Errorf("user client: %w", err)
	}
	defer userClient.Close()
	broker, err := userClient.Controller()
	if err != nil {
		return nil, err
	}
	altered, err := broker.AlterConfigs(&sarama.AlterConfigsRequest{Resources: []*sarama.AlterConfigsResource{{
		Type: sarama.TopicResource, Name: readable, ConfigEntries: map[string]*string{"retention.ms": str("1000")}}}})
	if err != nil {
		return nil, fmt.Errorf("user alter configs: %w", err)
	}
	out["userAlterConfig"] = int(altered.Resources[0].ErrorCode)
	acls, err := broker.DescribeAcls(&sarama.DescribeAclsRequest{AclFilter: sarama.AclFilter{
		ResourceType: sarama.AclResourceAny, ResourcePatternTypeFilter: sarama.AclPatternAny,
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny}})
	if err != nil {
		return nil, fmt.Errorf("user describe acls: %w", err)
	}
	out["userListAcls"] = int(acls.Err)
	created, err := broker.CreateAcls(&sarama.CreateAclsRequest{AclCreations: []*sarama.AclCreation{{
		Resource: sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: secret,
			ResoucePatternType: sarama.AclPatternLiteral},
		Acl: sarama.Acl{Principal: principal, Host: "*", Operation: sarama.AclOperationRead,
			PermissionType: sarama.AclPermissionAllow}}}})
	if err != nil {
		return nil, fmt.Errorf("user create acls: %w", err)
	}
	out["userCreateAcl"] = int(created.AclCreationResponses[0].Err)
	deletedByUser, err := broker.DeleteAcls(&sarama.DeleteAclsRequest{Filters: []*sarama.AclFilter{{
		ResourceType: sarama.AclResourceAny, ResourcePatternTypeFilter: sarama.AclPatternAny,
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny}}})
	if err != nil {
		return nil, fmt.Errorf("user delete acls: %w", err)
	}
	out["userDeleteAcls"] = int(deletedByUser.FilterResponses[0].Err)
	records, err := broker.DeleteRecords(&sarama.DeleteRecordsRequest{Timeout: 5 * time.Second,
		Topics: map[string]*sarama.DeleteRecordsRequestTopic{readable: {PartitionOffsets: map[int32]int64{0: 0}}}})
	if err != nil {
		return nil, fmt.Errorf("user delete records: %w", err)
	}
	out["userDeleteRecords"] = int(records.Topics[readable].Partitions[0].Err)
	topics, err := userAdmin.ListTopics()
	if err != nil {
		return nil, fmt.Errorf("user list topics: %w", err)
	}
	var names []string
	for name := range topics {
		names = append(names, name)
	}
	sort.Strings(names)
	out["userListTopics"] = names
	groups, err := userAdmin.ListConsumerGroups()
	out["userListGroups"] = map[string]interface{}{"code": codeOf(err), "groups": len(groups)}
	groupDescs, err := userAdmin.DescribeConsumerGroups([]string{prefix + "-other-group"})
	if err != nil {
		out["userDescribeOtherGroup"] = codeOf(err)
	} else {
		out["userDescribeOtherGroup"] = int(groupDescs[0].Err)
	}

	// The super user deletes the user's ACLs by principal.
	matching, err := admin.DeleteACL(sarama.AclFilter{ResourceType: sarama.AclResourceAny,
		ResourcePatternTypeFilter: sarama.AclPatternAny, Principal: str(principal),
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny}, false)
	if err != nil {
		return nil, fmt.Errorf("delete acls: %w", err)
	}
	var deleted []string
	for _, m := range matching {
		deleted = append(deleted, fmt.Sprintf("%d %s", m.Err, aclText(m.Resource, &m.Acl)))
	}
	sort.Strings(deleted)
	out["deleted"] = deleted
	return out, nil
}
