// Command sarama-check drives Sarama (Debian's golang-github-shopify-sarama-dev, 1.22) against a Kafka-compatible
// broker and prints one JSON summary of what happened, for test/compat/sarama.test.ts to judge.
//
//	sarama-check BOOTSTRAP PREFIX KAFKA_VERSION
//
// KAFKA_VERSION is the broker version Sarama is told to assume (config.Version). Sarama 1.22 does not negotiate
// with ApiVersions: that one setting picks every request version it sends, so running with a new version
// ("2.1.0") and an old one ("0.10.2.0") covers both ends of what this client speaks. Every topic it makes starts
// with PREFIX.
//
// Hard failures (a step that errors, records that come back different) end the program with exit code 1 and the
// error on stderr. Outcomes that depend on the broker's judgement (zstd through an old Produce version) are
// reported in the summary instead, for the test to assert on.
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

// recordsPerCodec is enough records for both partitions to get some, and for a compressed batch to hold many.
const recordsPerCodec = 30

// stepTimeout bounds every wait for records or for a consumer group, so that a broker that stays silent makes
// the program fail instead of hang.
const stepTimeout = 30 * time.Second

type codecResult struct {
	Produced   int             `json:"produced"`
	Consumed   int             `json:"consumed"`
	Partitions map[int32]int64 `json:"partitions,omitempty"` // records per partition
	ErrorCode  int16           `json:"errorCode,omitempty"`  // the broker's refusal, when it refused
	Error      string          `json:"error,omitempty"`
}

type groupResult struct {
	Consumed  int              `json:"consumed"`
	Committed map[string]int64 `json:"committed"` // "topic/partition" -> committed offset
	HighWater map[string]int64 `json:"highWater"`
	Listed    bool             `json:"listed"`
	State     string           `json:"state"`
}

type idempotentResult struct {
	Produced       int     `json:"produced"`
	Consumed       int     `json:"consumed"`
	ProducerID     int64   `json:"producerId"`
	ProducerEpoch  int16   `json:"producerEpoch"`
	FirstSequences []int32 `json:"firstSequences"`
	Records        []int   `json:"records"` // records per stored batch, in order
}

type summary struct {
	Version          string                 `json:"version"`
	Brokers          []string               `json:"brokers"`
	Controller       int32                  `json:"controller"`
	CreatedTopics    map[string]int         `json:"createdTopics"` // topic -> partitions, as the broker describes it
	Headers          bool                   `json:"headers"`       // whether records carried headers (Kafka 0.11+)
	Codecs           map[string]codecResult `json:"codecs"`
	OffsetsForTimes  map[string]int64       `json:"offsetsForTimes"`
	Group            groupResult            `json:"group"`
	Idempotent       *idempotentResult      `json:"idempotent,omitempty"`
	DeletedTopicGone bool                   `json:"deletedTopicGone"`
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: sarama-check BOOTSTRAP PREFIX KAFKA_VERSION")
		os.Exit(2)
	}
	// Sarama's own log says which request failed and why; it goes to stderr, next to our error.
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.Ltime|log.Lmicroseconds)
	s, err := run(os.Args[1], os.Args[2], os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama-check:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(s)
	fmt.Println(string(out))
}

func run(bootstrap, prefix, versionText string) (*summary, error) {
	version, err := sarama.ParseKafkaVersion(versionText)
	if err != nil {
		return nil, err
	}
	conf := newConfig(version)
	addrs := []string{bootstrap}
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

	s := &summary{
		Version:       version.String(),
		CreatedTopics: map[string]int{},
		Headers:       version.IsAtLeast(sarama.V0_11_0_0),
		Codecs:        map[string]codecResult{},
	}
	for _, b := range client.Brokers() {
		s.Brokers = append(s.Brokers, fmt.Sprintf("%d@%s", b.ID(), b.Addr()))
	}
	controller, err := client.Controller()
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	s.Controller = controller.ID()

	codecs := []struct {
		name  string
		codec sarama.CompressionCodec
	}{
		{"none", sarama.CompressionNone},
		{"gzip", sarama.CompressionGZIP},
		{"snappy", sarama.CompressionSnappy},
		{"lz4", sarama.CompressionLZ4},
		{"zstd", sarama.CompressionZSTD},
	}
	for _, c := range codecs {
		topic := prefix + "-" + c.name
		if err := createTopic(admin, topic, 2, s); err != nil {
			return nil, err
		}
		r, err := roundTrip(client, addrs, version, topic, c.codec, s.Headers)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		s.Codecs[c.name] = r
	}

	timesTopic := prefix + "-times"
	if err := createTopic(admin, timesTopic, 1, s); err != nil {
		return nil, err
	}
	if s.OffsetsForTimes, err = offsetsForTimes(client, addrs, version, timesTopic); err != nil {
		return nil, fmt.Errorf("offsets for times: %w", err)
	}

	groupTopics := []string{prefix + "-none", prefix + "-gzip"}
	if s.Group, err = consumeAsGroup(client, admin, version, addrs, prefix+"-group", groupTopics); err != nil {
		return nil, fmt.Errorf("consumer group: %w", err)
	}

	if version.IsAtLeast(sarama.V0_11_0_0) {
		idemTopic := prefix + "-idempotent"
		if err := createTopic(admin, idemTopic, 1, s); err != nil {
			return nil, err
		}
		if s.Idempotent, err = produceIdempotently(client, version, addrs, idemTopic); err != nil {
			return nil, fmt.Errorf("idempotent producer: %w", err)
		}
	}

	if err := admin.DeleteTopic(timesTopic); err != nil {
		return nil, fmt.Errorf("delete topic: %w", err)
	}
	if s.DeletedTopicGone, err = topicGone(client, admin, timesTopic); err != nil {
		return nil, err
	}
	return s, nil
}

func newConfig(version sarama.KafkaVersion) *sarama.Config {
	conf := sarama.NewConfig()
	conf.Version = version
	conf.ClientID = "sarama-check"
	conf.Producer.Return.Successes = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	// Keys decide partitions, as in most applications (Sarama's default hash partitioner, made explicit).
	conf.Producer.Partitioner = sarama.NewHashPartitioner
	conf.Consumer.Return.Errors = true
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	conf.Metadata.Retry.Backoff = 100 * time.Millisecond
	return conf
}

func createTopic(admin sarama.ClusterAdmin, topic string, partitions int32, s *summary) error {
	detail := &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}
	if err := admin.CreateTopic(topic, detail, false); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	described, err := admin.DescribeTopics([]string{topic})
	if err != nil {
		return fmt.Errorf("describe topic %s: %w", topic, err)
	}
	if len(described) != 1 || described[0].Err != sarama.ErrNoError {
		return fmt.Errorf("describe topic %s: %v", topic, described)
	}
	s.CreatedTopics[topic] = len(described[0].Partitions)
	return nil
}

// sentRecord is what one produced record should look like when it is read back.
type sentRecord struct {
	key, value string
	headers    []sarama.RecordHeader
	timestamp  time.Time
}

// roundTrip produces keyed records in one SendMessages call (so that records travel in multi-record batches,
// compressed together), then reads every partition back from its first offset and compares.
func roundTrip(client sarama.Client, addrs []string, version sarama.KafkaVersion, topic string,
	codec sarama.CompressionCodec, withHeaders bool) (codecResult, error) {
	conf := newConfig(version)
	conf.Producer.Compression = codec
	producer, err := sarama.NewSyncProducer(addrs, conf)
	if err != nil {
		return codecResult{}, err
	}
	defer producer.Close()

	// Timestamps are set, whole milliseconds, so that they can be compared exactly after the round trip.
	base := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	msgs := make([]*sarama.ProducerMessage, recordsPerCodec)
	for i := range msgs {
		m := &sarama.ProducerMessage{
			Topic:     topic,
			Key:       sarama.StringEncoder(fmt.Sprintf("k%d", i%5)),
			Value:     sarama.StringEncoder(fmt.Sprintf("%s-value-%d", topic, i)),
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
		}
		if withHeaders {
			m.Headers = []sarama.RecordHeader{
				{Key: []byte("origin"), Value: []byte("sarama")},
				{Key: []byte("index"), Value: []byte(fmt.Sprint(i))},
			}
		}
		msgs[i] = m
	}
	if err := producer.SendMessages(msgs); err != nil {
		var perMessage sarama.ProducerErrors
		if errors.As(err, &perMessage) && len(perMessage) > 0 {
			var kerr sarama.KError
			if errors.As(perMessage[0].Err, &kerr) {
				return codecResult{ErrorCode: int16(kerr), Error: kerr.Error()}, nil
			}
			return codecResult{}, perMessage[0].Err
		}
		return codecResult{}, err
	}

	want := map[int32]map[int64]sentRecord{}
	for _, m := range msgs {
		if want[m.Partition] == nil {
			want[m.Partition] = map[int64]sentRecord{}
		}
		want[m.Partition][m.Offset] = sentRecord{
			key: string(m.Key.(sarama.StringEncoder)), value: string(m.Value.(sarama.StringEncoder)),
			headers: m.Headers, timestamp: m.Timestamp,
		}
	}
	result := codecResult{Produced: len(msgs), Partitions: map[int32]int64{}}
	for p, records := range want {
		if err := checkDense(records); err != nil {
			return result, fmt.Errorf("partition %d: %w", p, err)
		}
		result.Partitions[p] = int64(len(records))
		n, err := readBack(client, topic, p, records)
		if err != nil {
			return result, fmt.Errorf("partition %d: %w", p, err)
		}
		result.Consumed += n
	}
	return result, nil
}

// checkDense says whether the broker gave a partition's records the offsets 0..n-1.
func checkDense(records map[int64]sentRecord) error {
	for o := int64(0); o < int64(len(records)); o++ {
		if _, ok := records[o]; !ok {
			offsets := make([]int64, 0, len(records))
			for k := range records {
				offsets = append(offsets, k)
			}
			sort.Slice(offsets, func(i, j int) bool { return offsets[i] < offsets[j] })
			return fmt.Errorf("acknowledged offsets are not 0..%d: %v", len(records)-1, offsets)
		}
	}
	return nil
}

// readBack consumes a partition from its oldest offset and compares each record with what was sent at that offset.
func readBack(client sarama.Client, topic string, partition int32, want map[int64]sentRecord) (int, error) {
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return 0, err
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, partition, sarama.OffsetOldest)
	if err != nil {
		return 0, err
	}
	defer pc.Close()
	deadline := time.After(stepTimeout)
	for n := 0; n < len(want); n++ {
		select {
		case m := <-pc.Messages():
			if err := compare(m, want[m.Offset]); err != nil {
				return n, fmt.Errorf("offset %d: %w", m.Offset, err)
			}
		case e := <-pc.Errors():
			return n, e
		case <-deadline:
			return n, fmt.Errorf("read %d of %d records in %v", n, len(want), stepTimeout)
		}
	}
	return len(want), nil
}

func compare(got *sarama.ConsumerMessage, want sentRecord) error {
	if string(got.Key) != want.key || string(got.Value) != want.value {
		return fmt.Errorf("got %q=%q, want %q=%q", got.Key, got.Value, want.key, want.value)
	}
	if !got.Timestamp.Equal(want.timestamp) {
		return fmt.Errorf("timestamp %v, want %v", got.Timestamp, want.timestamp)
	}
	if len(got.Headers) != len(want.headers) {
		return fmt.Errorf("%d headers, want %d", len(got.Headers), len(want.headers))
	}
	for i, h := range want.headers {
		if string(got.Headers[i].Key) != string(h.Key) || string(got.Headers[i].Value) != string(h.Value) {
			return fmt.Errorf("header %d is %q=%q, want %q=%q", i, got.Headers[i].Key, got.Headers[i].Value, h.Key, h.Value)
		}
	}
	return nil
}

// offsetsForTimes writes four records with timestamps one second apart, two in batches of their own and two in
// one batch, then asks ListOffsets for the first offset at or after times between and beyond them.
func offsetsForTimes(client sarama.Client, addrs []string, version sarama.KafkaVersion,
	topic string) (map[string]int64, error) {
	producer, err := sarama.NewSyncProducer(addrs, newConfig(version))
	if err != nil {
		return nil, err
	}
	defer producer.Close()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	at := func(i int) *sarama.ProducerMessage {
		return &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(fmt.Sprint(i)),
			Timestamp: base.Add(time.Duration(i) * time.Second)}
	}
	for i := 0; i < 2; i++ {
		if _, _, err := producer.SendMessage(at(i)); err != nil {
			return nil, err
		}
	}
	if err := producer.SendMessages([]*sarama.ProducerMessage{at(2), at(3)}); err != nil {
		return nil, err
	}
	millis := func(d time.Duration) int64 { return base.Add(d).UnixNano() / int64(time.Millisecond) }
	queries := []struct {
		name string
		time int64
	}{
		{"earliest", sarama.OffsetOldest},
		{"latest", sarama.OffsetNewest},
		{"first", millis(0)},
		{"between0and1", millis(500 * time.Millisecond)},
		{"between2and3", millis(2500 * time.Millisecond)},
		{"last", millis(3 * time.Second)},
		{"afterAll", millis(time.Minute)},
	}
	out := map[string]int64{}
	for _, q := range queries {
		offset, err := client.GetOffset(topic, 0, q.time)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.name, err)
		}
		out[q.name] = offset
	}
	return out, nil
}

// groupCounter counts records a consumer group session hands over and ends the session when all have come.
type groupCounter struct {
	mu     sync.Mutex
	seen   map[string]bool // "topic/partition/offset": a record delivered twice is counted once
	want   int
	cancel context.CancelFunc
}

func (g *groupCounter) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (g *groupCounter) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (g *groupCounter) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		session.MarkMessage(m, "")
		g.mu.Lock()
		g.seen[fmt.Sprintf("%s/%d/%d", m.Topic, m.Partition, m.Offset)] = true
		if len(g.seen) >= g.want {
			g.cancel()
		}
		g.mu.Unlock()
	}
	return nil
}

// consumeAsGroup reads every record of the topics as one member of a consumer group, commits on leaving, and
// then asks the coordinator what the group committed.
func consumeAsGroup(client sarama.Client, admin sarama.ClusterAdmin, version sarama.KafkaVersion, addrs []string,
	group string, topics []string) (groupResult, error) {
	result := groupResult{Committed: map[string]int64{}, HighWater: map[string]int64{}}
	partitions := map[string][]int32{}
	for _, t := range topics {
		ps, err := client.Partitions(t)
		if err != nil {
			return result, err
		}
		partitions[t] = ps
		for _, p := range ps {
			hw, err := client.GetOffset(t, p, sarama.OffsetNewest)
			if err != nil {
				return result, err
			}
			result.HighWater[fmt.Sprintf("%s/%d", t, p)] = hw
		}
	}
	want := 0
	for _, hw := range result.HighWater {
		want += int(hw)
	}

	conf := newConfig(version)
	conf.Consumer.Group.Rebalance.Strategy = sarama.BalanceStrategyRange
	cg, err := sarama.NewConsumerGroup(addrs, group, conf)
	if err != nil {
		return result, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	counter := &groupCounter{seen: map[string]bool{}, want: want, cancel: cancel}
	var groupErrs []error
	var errsDone sync.WaitGroup
	errsDone.Add(1)
	go func() {
		defer errsDone.Done()
		for e := range cg.Errors() {
			groupErrs = append(groupErrs, e)
		}
	}()
	// Consume returns at the end of each session (a rebalance or the cancel); join again until all have come.
	for ctx.Err() == nil {
		if err := cg.Consume(ctx, topics, counter); err != nil {
			_ = cg.Close()
			return result, err
		}
	}
	closeErr := cg.Close()
	errsDone.Wait()
	counter.mu.Lock()
	result.Consumed = len(counter.seen)
	counter.mu.Unlock()
	if result.Consumed < want {
		return result, fmt.Errorf("consumed %d of %d records before %v passed", result.Consumed, want, stepTimeout)
	}
	if closeErr != nil {
		return result, closeErr
	}
	if len(groupErrs) > 0 {
		return result, fmt.Errorf("%d errors, the first: %w", len(groupErrs), groupErrs[0])
	}

	committed, err := admin.ListConsumerGroupOffsets(group, partitions)
	if err != nil {
		return result, fmt.Errorf("list group offsets: %w", err)
	}
	for t, ps := range partitions {
		for _, p := range ps {
			block := committed.GetBlock(t, p)
			if block == nil || block.Err != sarama.ErrNoError {
				return result, fmt.Errorf("committed offset of %s/%d: %v", t, p, block)
			}
			result.Committed[fmt.Sprintf("%s/%d", t, p)] = block.Offset
		}
	}
	groups, err := admin.ListConsumerGroups()
	if err != nil {
		return result, fmt.Errorf("list groups: %w", err)
	}
	_, result.Listed = groups[group]
	described, err := admin.DescribeConsumerGroups([]string{group})
	if err != nil {
		return result, fmt.Errorf("describe group: %w", err)
	}
	if len(described) == 1 {
		result.State = described[0].State
	}
	return result, nil
}

// produceIdempotently sends records with an idempotent producer (one request in flight, acks=all, as Sarama
// requires), reads them back, and fetches the stored batches to see the producer id and sequences they carry.
func produceIdempotently(client sarama.Client, version sarama.KafkaVersion, addrs []string,
	topic string) (*idempotentResult, error) {
	conf := newConfig(version)
	conf.Producer.Idempotent = true
	conf.Net.MaxOpenRequests = 1
	conf.Producer.Retry.Max = 5
	// Several batches: each flush of 10 messages is one request, so sequences must continue across them.
	conf.Producer.Flush.MaxMessages = 10
	producer, err := sarama.NewSyncProducer(addrs, conf)
	if err != nil {
		return nil, err
	}
	defer producer.Close()
	const count = 30
	want := map[int64]sentRecord{}
	base := time.Now().Truncate(time.Millisecond)
	for round := 0; round < 3; round++ {
		msgs := make([]*sarama.ProducerMessage, 10)
		for i := range msgs {
			n := round*10 + i
			msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0,
				Key:       sarama.StringEncoder(fmt.Sprintf("k%d", n)),
				Value:     sarama.StringEncoder(fmt.Sprintf("idempotent-%d", n)),
				Timestamp: base.Add(time.Duration(n) * time.Millisecond)}
		}
		if err := producer.SendMessages(msgs); err != nil {
			return nil, err
		}
		for _, m := range msgs {
			want[m.Offset] = sentRecord{key: string(m.Key.(sarama.StringEncoder)),
				value: string(m.Value.(sarama.StringEncoder)), timestamp: m.Timestamp}
		}
	}
	if err := checkDense(want); err != nil {
		return nil, err
	}
	result := &idempotentResult{Produced: count}
	if result.Consumed, err = readBack(client, topic, 0, want); err != nil {
		return result, err
	}

	leader, err := client.Leader(topic, 0)
	if err != nil {
		return result, err
	}
	req := &sarama.FetchRequest{Version: 4, MaxWaitTime: 100, MinBytes: 1, MaxBytes: 1 << 20}
	req.AddBlock(topic, 0, 0, 1<<20)
	resp, err := leader.Fetch(req)
	if err != nil {
		return result, err
	}
	block := resp.GetBlock(topic, 0)
	if block == nil || block.Err != sarama.ErrNoError {
		return result, fmt.Errorf("fetch: %v", block)
	}
	result.ProducerID = -1
	for _, rs := range block.RecordsSet {
		if rs.RecordBatch == nil {
			return result, errors.New("fetch v4 returned a legacy message set")
		}
		b := rs.RecordBatch
		result.ProducerID = b.ProducerID
		result.ProducerEpoch = b.ProducerEpoch
		result.FirstSequences = append(result.FirstSequences, b.FirstSequence)
		result.Records = append(result.Records, len(b.Records))
	}
	return result, nil
}

// topicGone waits a little for a deleted topic to leave the topic list (deletion may finish after the reply).
func topicGone(client sarama.Client, admin sarama.ClusterAdmin, topic string) (bool, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		topics, err := listTopics(client, admin)
		if err != nil {
			return false, fmt.Errorf("list topics: %w", err)
		}
		if !topics[topic] {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// listTopics asks the ClusterAdmin where Sarama allows it: its ListTopics also sends DescribeConfigs, which
// Sarama refuses to send itself for a broker older than 0.11. Older versions read a fresh all-topic Metadata.
func listTopics(client sarama.Client, admin sarama.ClusterAdmin) (map[string]bool, error) {
	names := map[string]bool{}
	if client.Config().Version.IsAtLeast(sarama.V0_11_0_0) {
		topics, err := admin.ListTopics()
		for name := range topics {
			names[name] = true
		}
		return names, err
	}
	if err := client.RefreshMetadata(); err != nil {
		return nil, err
	}
	topics, err := client.Topics()
	for _, name := range topics {
		names[name] = true
	}
	return names, err
}
