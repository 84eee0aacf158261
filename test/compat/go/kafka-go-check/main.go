// Command kafka-go-check drives segmentio/kafka-go (Debian's golang-github-segmentio-kafka-go-dev, 0.2.1)
// against a Kafka-compatible broker and prints one JSON summary, for test/compat/sarama.test.ts to judge.
//
//	kafka-go-check BOOTSTRAP PREFIX
//
// kafka-go 0.2.1 predates record batches: it speaks Produce v2 and Fetch v2 (magic 1 message sets, so no
// headers and no zstd), ListOffsets v1, Metadata v1, CreateTopics v0 and the v0/v1 group APIs. Every topic it
// makes starts with PREFIX. Any failure ends the program with exit code 1 and the error on stderr.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/gzip"
	"github.com/segmentio/kafka-go/lz4"
	"github.com/segmentio/kafka-go/snappy"
)

const recordsPerCodec = 30

// stepTimeout bounds every wait, so that a silent broker fails the program instead of hanging it.
const stepTimeout = 30 * time.Second

type summary struct {
	Partitions      map[string]int   `json:"partitions"` // topic -> partitions, as Metadata describes it
	Codecs          map[string]int   `json:"codecs"`     // codec -> records read back equal to those written
	OffsetsForTimes map[string]int64 `json:"offsetsForTimes"`
	Group           groupResult      `json:"group"`
	StepMs          map[string]int64 `json:"stepMs"` // how long each step took, to see where time goes
}

type groupResult struct {
	Consumed int `json:"consumed"`
	// ResumedAt is the offset a second member of the group starts from after the first committed and left:
	// the committed position, read back through OffsetFetch.
	ResumedAt int64 `json:"resumedAt"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: kafka-go-check BOOTSTRAP PREFIX")
		os.Exit(2)
	}
	s, err := run(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafka-go-check:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(s)
	fmt.Println(string(out))
}

func run(bootstrap, prefix string) (*summary, error) {
	s := &summary{Partitions: map[string]int{}, Codecs: map[string]int{}, StepMs: map[string]int64{}}
	started := time.Now()
	step := func(name string) {
		s.StepMs[name] = time.Since(started).Milliseconds()
		started = time.Now()
	}
	codecs := []struct {
		name  string
		codec kafka.CompressionCodec
	}{
		{"none", nil},
		{"gzip", gzip.NewCompressionCodec()},
		{"snappy", snappy.NewCompressionCodec()},
		{"lz4", lz4.NewCompressionCodec()},
	}
	topics := []string{prefix + "-times", prefix + "-group"}
	for _, c := range codecs {
		topics = append(topics, prefix+"-"+c.name)
	}
	if err := createTopics(bootstrap, topics, s); err != nil {
		return nil, err
	}
	step("createTopics")
	for _, c := range codecs {
		n, err := roundTrip(bootstrap, prefix+"-"+c.name, c.codec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		s.Codecs[c.name] = n
		step(c.name)
	}
	var err error
	if s.OffsetsForTimes, err = offsetsForTimes(bootstrap, prefix+"-times"); err != nil {
		return nil, fmt.Errorf("offsets for times: %w", err)
	}
	step("offsetsForTimes")
	if s.Group, err = consumeAsGroup(bootstrap, prefix+"-group"); err != nil {
		return nil, fmt.Errorf("consumer group: %w", err)
	}
	step("group")
	return s, nil
}

// createTopics sends CreateTopics (v0) with two partitions each, then reads them back through Metadata.
func createTopics(bootstrap string, topics []string, s *summary) error {
	conn, err := kafka.Dial("tcp", bootstrap)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(stepTimeout))
	configs := make([]kafka.TopicConfig, len(topics))
	for i, t := range topics {
		configs[i] = kafka.TopicConfig{Topic: t, NumPartitions: 2, ReplicationFactor: 1}
	}
	if err := conn.CreateTopics(configs...); err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	partitions, err := conn.ReadPartitions(topics...)
	if err != nil {
		return fmt.Errorf("read partitions: %w", err)
	}
	for _, p := range partitions {
		s.Partitions[p.Topic]++
	}
	return nil
}

func message(i int, base time.Time, tag string) kafka.Message {
	return kafka.Message{
		Key:   []byte(fmt.Sprintf("k%d", i%5)),
		Value: []byte(fmt.Sprintf("%s-%d", tag, i)),
		Time:  base.Add(time.Duration(i) * time.Millisecond),
	}
}

// roundTrip writes keyed records through a Writer (one batch per partition, compressed together), then reads
// each partition from its first offset and compares every record with what was written.
func roundTrip(bootstrap, topic string, codec kafka.CompressionCodec) (int, error) {
	w := kafka.NewWriter(kafka.WriterConfig{
		Brokers:          []string{bootstrap},
		Topic:            topic,
		Balancer:         &kafka.Hash{},
		BatchSize:        recordsPerCodec,
		BatchTimeout:     20 * time.Millisecond,
		RequiredAcks:     -1,
		CompressionCodec: codec,
	})
	base := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	want := map[string]kafka.Message{}
	msgs := make([]kafka.Message, recordsPerCodec)
	for i := range msgs {
		msgs[i] = message(i, base, topic)
		want[string(msgs[i].Value)] = msgs[i]
	}
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	err := w.WriteMessages(ctx, msgs...)
	if closeErr := w.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return 0, fmt.Errorf("write: %w", err)
	}

	got := 0
	for partition := 0; partition < 2; partition++ {
		n, err := readPartition(ctx, bootstrap, topic, partition, want)
		if err != nil {
			return got, fmt.Errorf("partition %d: %w", partition, err)
		}
		got += n
	}
	if got != len(want) {
		return got, fmt.Errorf("read back %d records, wrote %d", got, len(want))
	}
	return got, nil
}

// readPartition reads a partition up to its last offset and checks offsets run 0, 1, 2, ... and that each record
// is one that was written, with its key and timestamp.
func readPartition(ctx context.Context, bootstrap, topic string, partition int,
	want map[string]kafka.Message) (int, error) {
	leader, err := kafka.DialLeader(ctx, "tcp", bootstrap, topic, partition)
	if err != nil {
		return 0, err
	}
	last, err := leader.ReadLastOffset()
	leader.Close()
	if err != nil {
		return 0, err
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, Topic: topic, Partition: partition,
		MaxWait: 100 * time.Millisecond})
	defer r.Close()
	for offset := int64(0); offset < last; offset++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return int(offset), err
		}
		w, ok := want[string(m.Value)]
		switch {
		case m.Offset != offset:
			return int(offset), fmt.Errorf("offset %d where %d was next", m.Offset, offset)
		case !ok:
			return int(offset), fmt.Errorf("offset %d holds %q, which was never written", offset, m.Value)
		case string(m.Key) != string(w.Key) || !m.Time.Equal(w.Time):
			return int(offset), fmt.Errorf("offset %d: key %q at %v, want %q at %v", offset, m.Key, m.Time, w.Key, w.Time)
		}
	}
	return int(last), nil
}

// offsetsForTimes writes four records one second apart to partition 0 and asks ListOffsets for times between
// and beyond them.
func offsetsForTimes(bootstrap, topic string) (map[string]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	conn, err := kafka.DialLeader(ctx, "tcp", bootstrap, topic, 0)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(stepTimeout))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := 0; i < 4; i++ {
		m := kafka.Message{Value: []byte(fmt.Sprint(i)), Time: base.Add(time.Duration(i) * time.Second)}
		if _, err := conn.WriteMessages(m); err != nil {
			return nil, err
		}
	}
	out := map[string]int64{}
	for name, at := range map[string]time.Duration{
		"first":        0,
		"between0and1": 500 * time.Millisecond,
		"between2and3": 2500 * time.Millisecond,
		"afterAll":     time.Minute,
	} {
		if out[name], err = conn.ReadOffset(base.Add(at)); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if out["earliest"], out["latest"], err = conn.ReadOffsets(); err != nil {
		return nil, err
	}
	return out, nil
}

// consumeAsGroup reads every record of the topic as one member of a group (committing each), leaves, writes one
// more record, and has a new member of the same group read it: it must start at the committed offset.
func consumeAsGroup(bootstrap, topic string) (groupResult, error) {
	var result groupResult
	ctx, cancel := context.WithTimeout(context.Background(), 2*stepTimeout)
	defer cancel()
	w := kafka.NewWriter(kafka.WriterConfig{Brokers: []string{bootstrap}, Topic: topic,
		Balancer: &kafka.LeastBytes{}, BatchTimeout: 20 * time.Millisecond, RequiredAcks: -1})
	defer w.Close()
	base := time.Now().Truncate(time.Millisecond)
	msgs := make([]kafka.Message, 20)
	for i := range msgs {
		msgs[i] = message(i, base, topic)
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		return result, err
	}
	group := topic + "-members"
	first := newGroupReader(bootstrap, topic, group)
	for ; result.Consumed < len(msgs); result.Consumed++ {
		if _, err := first.ReadMessage(ctx); err != nil {
			first.Close()
			return result, fmt.Errorf("first member after %d records: %w", result.Consumed, err)
		}
	}
	if err := first.Close(); err != nil {
		return result, err
	}

	conn, err := kafka.DialLeader(ctx, "tcp", bootstrap, topic, 0)
	if err != nil {
		return result, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(stepTimeout))
	hw, err := conn.ReadLastOffset()
	if err != nil {
		return result, err
	}
	if _, err := conn.WriteMessages(kafka.Message{Value: []byte("after-commit")}); err != nil {
		return result, err
	}
	second := newGroupReader(bootstrap, topic, group)
	defer second.Close()
	m, err := second.ReadMessage(ctx)
	if err != nil {
		return result, fmt.Errorf("second member: %w", err)
	}
	if m.Partition != 0 || string(m.Value) != "after-commit" {
		return result, fmt.Errorf("second member read %q at %d/%d, not the record written after the commit",
			m.Value, m.Partition, m.Offset)
	}
	if m.Offset != hw {
		return result, fmt.Errorf("second member read offset %d, the committed position was %d", m.Offset, hw)
	}
	result.ResumedAt = m.Offset
	return result, nil
}

// newGroupReader makes a group member. kafka-go 0.2.1 sends no LeaveGroup when a Reader closes (seen on the
// wire), so a member joining after it waits, as with Kafka, for the old member's rebalance timeout: kept short.
func newGroupReader(bootstrap, topic, group string) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers:           []string{bootstrap},
		Topic:             topic,
		GroupID:           group,
		MaxWait:           100 * time.Millisecond,
		HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout:    10 * time.Second,
		RebalanceTimeout:  2 * time.Second,
	})
}
