// Command sarama-groups drives Sarama's consumer groups (Debian's golang-github-shopify-sarama-dev, 1.22) against a
// Kafka-compatible broker with two members, and prints one JSON summary for test/compat/sarama.test.ts to judge:
// what each member was assigned under the range and the round-robin strategies, what the coordinator describes,
// the rebalance when one member leaves, offsets.initial newest, and a partition consumer asked for an offset the
// partition does not hold.
//
//	sarama-groups BOOTSTRAP PREFIX
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

const stepTimeout = 30 * time.Second

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sarama-groups BOOTSTRAP PREFIX")
		os.Exit(2)
	}
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.Ltime|log.Lmicroseconds)
	out, err := run(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama-groups:", err)
		os.Exit(1)
	}
	text, _ := json.Marshal(out)
	fmt.Println(string(text))
}

func newConfig() *sarama.Config {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_1_0_0
	conf.ClientID = "sarama-groups"
	conf.Producer.Return.Successes = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Consumer.Return.Errors = true
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	conf.Consumer.Group.Heartbeat.Interval = 300 * time.Millisecond
	conf.Consumer.Group.Session.Timeout = 6 * time.Second
	conf.Metadata.Retry.Backoff = 100 * time.Millisecond
	return conf
}

// member is one consumer group member running sessions in the background; it keeps the claims of its latest
// session and the records it was handed.
type member struct {
	cg     sarama.ConsumerGroup
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	claims   map[string][]int32
	sessions int
	records  map[string]int64 // "topic/partition" -> records handed over
	errs     []error
}

func (m *member) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = s.Claims()
	for _, ps := range m.claims {
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	}
	m.sessions++
	return nil
}

func (m *member) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (m *member) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		s.MarkMessage(msg, "")
		m.mu.Lock()
		m.records[fmt.Sprintf("%s/%d", msg.Topic, msg.Partition)]++
		m.mu.Unlock()
	}
	return nil
}

func startMember(addrs []string, conf *sarama.Config, group string, topics []string) (*member, error) {
	cg, err := sarama.NewConsumerGroup(addrs, group, conf)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{cg: cg, cancel: cancel, done: make(chan struct{}), records: map[string]int64{}}
	go func() {
		for e := range cg.Errors() {
			m.mu.Lock()
			m.errs = append(m.errs, e)
			m.mu.Unlock()
		}
	}()
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, topics, m); err != nil {
				m.mu.Lock()
				m.errs = append(m.errs, err)
				m.mu.Unlock()
				return
			}
		}
	}()
	return m, nil
}

func (m *member) stop() error {
	m.cancel()
	<-m.done
	return m.cg.Close()
}

func (m *member) snapshot() (map[string][]int32, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.claims, m.sessions
}

func count(claims map[string][]int32) int {
	n := 0
	for _, ps := range claims {
		n += len(ps)
	}
	return n
}

// waitFor polls until cond holds or stepTimeout passes.
func waitFor(what string, cond func() bool) error {
	deadline := time.Now().Add(stepTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v", what, stepTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

type memberDescription struct {
	MemberID   string             `json:"memberId"`
	ClientID   string             `json:"clientId"`
	ClientHost string             `json:"clientHost"`
	Topics     []string           `json:"topics"`
	Assignment map[string][]int32 `json:"assignment"`
}

type groupDescription struct {
	Code         int16               `json:"code"`
	State        string              `json:"state"`
	ProtocolType string              `json:"protocolType"`
	Protocol     string              `json:"protocol"`
	Members      []memberDescription `json:"members"`
}

func describe(admin sarama.ClusterAdmin, group string) (groupDescription, error) {
	ds, err := admin.DescribeConsumerGroups([]string{group})
	if err != nil {
		return groupDescription{}, err
	}
	d := ds[0]
	out := groupDescription{Code: int16(d.Err), State: d.State, ProtocolType: d.ProtocolType, Protocol: d.Protocol}
	for id, m := range d.Members {
		md := memberDescription{MemberID: id, ClientID: m.ClientId, ClientHost: m.ClientHost}
		if meta, err := m.GetMemberMetadata(); err == nil && meta != nil {
			md.Topics = meta.Topics
		} else if err != nil {
			return out, fmt.Errorf("member metadata: %w", err)
		}
		if a, err := m.GetMemberAssignment(); err == nil && a != nil {
			md.Assignment = a.Topics
			for _, ps := range md.Assignment {
				sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			}
		} else if err != nil {
			return out, fmt.Errorf("member assignment: %w", err)
		}
		out.Members = append(out.Members, md)
	}
	sort.Slice(out.Members, func(i, j int) bool {
		return fmt.Sprint(out.Members[i].Assignment) < fmt.Sprint(out.Members[j].Assignment)
	})
	return out, nil
}

// twoMembers runs one member, then a second, then stops the second: the claims at each step, the group as the
// coordinator describes it while both are in, and DeleteGroups' refusal then.
func twoMembers(addrs []string, client sarama.Client, admin sarama.ClusterAdmin, group string, topics []string,
	strategy sarama.BalanceStrategy, partitions int) (map[string]interface{}, error) {
	conf := newConfig()
	conf.Consumer.Group.Rebalance.Strategy = strategy
	out := map[string]interface{}{}
	a, err := startMember(addrs, conf, group, topics)
	if err != nil {
		return nil, err
	}
	defer a.stop()
	holdsAll := func() bool { c, _ := a.snapshot(); return count(c) == partitions }
	if err := waitFor("first member's claims", holdsAll); err != nil {
		return nil, err
	}
	out["alone"], _ = a.snapshot()
	b, err := startMember(addrs, conf, group, topics)
	if err != nil {
		return nil, err
	}
	if err := waitFor("claims shared by two members", func() bool {
		ca, _ := a.snapshot()
		cb, _ := b.snapshot()
		return count(ca) > 0 && count(cb) > 0 && count(ca)+count(cb) == partitions
	}); err != nil {
		return nil, err
	}
	ca, sa := a.snapshot()
	cb, _ := b.snapshot()
	claims := []map[string][]int32{ca, cb}
	sort.Slice(claims, func(i, j int) bool { return fmt.Sprint(claims[i]) < fmt.Sprint(claims[j]) })
	out["shared"] = claims
	if out["described"], err = describe(admin, group); err != nil {
		return nil, err
	}
	// A group with members cannot be deleted.
	coordinator, err := client.Coordinator(group)
	if err != nil {
		return nil, err
	}
	deleted, err := coordinator.DeleteGroups(&sarama.DeleteGroupsRequest{Groups: []string{group}})
	if err != nil {
		return nil, err
	}
	out["deleteWithMembers"] = int16(deleted.GroupErrorCodes[group])
	if err := b.stop(); err != nil {
		return nil, fmt.Errorf("second member close: %w", err)
	}
	if err := waitFor("first member alone again", func() bool {
		c, s := a.snapshot()
		return s > sa && count(c) == partitions
	}); err != nil {
		return nil, err
	}
	out["afterLeave"], _ = a.snapshot()
	if out["describedAfterLeave"], err = describe(admin, group); err != nil {
		return nil, err
	}
	a.mu.Lock()
	var errs []string
	for _, e := range append(a.errs, b.errs...) {
		errs = append(errs, e.Error())
	}
	a.mu.Unlock()
	out["errors"] = errs
	return out, nil
}

func run(bootstrap, prefix string) (map[string]interface{}, error) {
	addrs := []string{bootstrap}
	conf := newConfig()
	client, err := sarama.NewClient(addrs, conf)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdmin(addrs, conf)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	out := map[string]interface{}{}

	four, x, y := prefix+"-four", prefix+"-x", prefix+"-y"
	for topic, n := range map[string]int32{four: 4, x: 2, y: 2} {
		if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: n, ReplicationFactor: 1}, false); err != nil {
			return nil, err
		}
	}
	// Records go to the partition each message names.
	manual := newConfig()
	manual.Producer.Partitioner = sarama.NewManualPartitioner
	producer, err := sarama.NewSyncProducer(addrs, manual)
	if err != nil {
		return nil, err
	}
	defer producer.Close()
	for i := 0; i < 8; i++ {
		if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: four, Partition: int32(i % 4),
			Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			return nil, err
		}
	}

	if out["range"], err = twoMembers(addrs, client, admin, prefix+"-range", []string{four}, sarama.BalanceStrategyRange,
		4); err != nil {
		return nil, fmt.Errorf("range: %w", err)
	}
	if out["roundRobin"], err = twoMembers(addrs, client, admin, prefix+"-roundrobin", []string{x, y},
		sarama.BalanceStrategyRoundRobin, 4); err != nil {
		return nil, fmt.Errorf("round robin: %w", err)
	}

	// offsets.initial newest: a new group starts at the end and gets only what comes after it joined.
	newest := newConfig()
	newest.Consumer.Offsets.Initial = sarama.OffsetNewest
	m, err := startMember(addrs, newest, prefix+"-newest", []string{four})
	if err != nil {
		return nil, err
	}
	if err := waitFor("newest member's claims", func() bool { c, _ := m.snapshot(); return count(c) == 4 }); err != nil {
		return nil, err
	}
	time.Sleep(500 * time.Millisecond)
	for i := 0; i < 4; i++ {
		if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: four, Partition: int32(i),
			Value: sarama.StringEncoder("late")}); err != nil {
			return nil, err
		}
	}
	total := func() int64 {
		m.mu.Lock()
		defer m.mu.Unlock()
		var n int64
		for _, c := range m.records {
			n += c
		}
		return n
	}
	if err := waitFor("records produced after joining", func() bool { return total() >= 4 }); err != nil {
		return nil, err
	}
	time.Sleep(300 * time.Millisecond)
	out["newestConsumed"] = total()
	if err := m.stop(); err != nil {
		return nil, err
	}

	// A partition consumer asked for an offset beyond the end, and below a start moved by DeleteRecords.
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	consumeAt := func(offset int64) int16 {
		pc, err := consumer.ConsumePartition(four, 0, offset)
		if err != nil {
			var kerr sarama.KError
			if errors.As(err, &kerr) {
				return int16(kerr)
			}
			return -1
		}
		pc.Close()
		return 0
	}
	out["consumeBeyondEnd"] = consumeAt(1000)
	if err := admin.DeleteRecords(four, map[int32]int64{0: 2}); err != nil {
		return nil, err
	}
	out["consumeBelowStart"] = consumeAt(0)
	out["consumeAtStart"] = consumeAt(2)
	return out, nil
}
