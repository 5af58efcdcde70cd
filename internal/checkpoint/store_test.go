package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func cluster(t *testing.T, opts ...kfake.Opt) []string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func store(t *testing.T, addrs []string, topic string) *Store {
	t.Helper()
	s, err := New(Config{Brokers: addrs, Topic: topic, Transport: &kafka.Transport{}, Group: "g1"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Ensure creates a compacted state topic with the input's partition count and
// accepts it on the next start; a topic with another count, or not
// compacted, is refused with a message that names the fix.
func TestEnsure(t *testing.T) {
	addrs := cluster(t, kfake.SeedTopics(3, "in", "wrong-count"), kfake.SeedTopics(1, "other"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := store(t, addrs, "in-state")
	for i := 0; i < 2; i++ { // created, then found
		n, err := s.Ensure(ctx, "in")
		if err != nil || n != 3 {
			t.Fatalf("Ensure #%d = %d, %v; want 3", i, n, err)
		}
	}
	if p, err := s.cleanupPolicy(ctx); err != nil || p != "compact" {
		t.Errorf("cleanup.policy = %q, %v", p, err)
	}
	if n, err := s.MaxRecordBytes(ctx); err != nil || n != MaxRecordBytes {
		t.Errorf("max.message.bytes = %d, %v; want %d", n, err, MaxRecordBytes)
	}
	if _, err := s.Ensure(ctx, "other"); err == nil || !strings.Contains(err.Error(), "must match") {
		t.Errorf("partition mismatch: %v", err)
	}
	if _, err := store(t, addrs, "wrong-count").Ensure(ctx, "in"); err == nil || !strings.Contains(err.Error(), "cleanup.policy") {
		t.Errorf("a non-compacted topic: %v", err)
	}
	if _, err := store(t, addrs, "x").Ensure(ctx, "missing"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing input: %v", err)
	}
}

// What Write puts in a partition, Read gives back in order, with the end
// offset; tombstones come back as nil values, the empty key as a key; other partitions are untouched;
// a checkpoint larger than one produce request is split and still complete.
func TestWriteRead(t *testing.T) {
	addrs := cluster(t, kfake.SeedTopics(2, "in"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := store(t, addrs, "state")
	if _, err := s.Ensure(ctx, "in"); err != nil {
		t.Fatal(err)
	}
	if end, err := s.End(ctx, 1); err != nil || end != 0 {
		t.Fatalf("empty partition: end %d, %v", end, err)
	}
	big := bytes.Repeat([]byte{7}, requestBytes/3+1) // four of them need two requests
	var entries []Entry
	for i := 0; i < 4; i++ {
		entries = append(entries, Entry{Key: fmt.Sprintf("big%d", i), Value: big})
	}
	entries = append(entries, Entry{Key: "a", Value: []byte("1")}, Entry{Key: "b", Value: []byte("2")},
		Entry{Key: "a", Value: nil}, Entry{Key: "b", Value: []byte("3"), Meta: []byte(`{"n":1}`)}, Entry{Key: "", Value: []byte("w")})
	end, err := s.Write(ctx, 1, entries)
	if err != nil || end != int64(len(entries)) {
		t.Fatalf("Write: end %d, %v; want %d", end, err, len(entries))
	}
	var got []Entry
	var offsets []int64
	var groups []string
	rend, err := s.Read(ctx, 1, func(r Record) {
		got = append(got, r.Entry)
		offsets = append(offsets, r.Offset)
		groups = append(groups, r.Group)
	})
	if err != nil || rend != end {
		t.Fatalf("Read: end %d, %v; want %d", rend, err, end)
	}
	if len(got) != len(entries) {
		t.Fatalf("read %d records, wrote %d", len(got), len(entries))
	}
	for i := range got {
		if got[i].Key != entries[i].Key || !bytes.Equal(got[i].Value, entries[i].Value) || offsets[i] != int64(i) ||
			(entries[i].Value == nil) != (got[i].Value == nil) {
			t.Errorf("record %d: %q (%d bytes, nil %v) at %d; wrote %q (%d bytes)", i, got[i].Key, len(got[i].Value),
				got[i].Value == nil, offsets[i], entries[i].Key, len(entries[i].Value))
		}
		if !bytes.Equal(got[i].Meta, entries[i].Meta) {
			t.Errorf("record %d: meta %q, wrote %q", i, got[i].Meta, entries[i].Meta)
		}
		if groups[i] != "g1" {
			t.Errorf("record %d: group %q, want the writer's g1", i, groups[i])
		}
	}
	n := 0
	if _, err := s.Read(ctx, 0, func(Record) { n++ }); err != nil || n != 0 {
		t.Errorf("partition 0: %d records, %v", n, err)
	}
}

// The brokers apply max.message.bytes to a request's whole batch: three
// checkpoints of 377 KB (M = 100's size, docs/operations.md) that each fit
// a topic's 1 MB default but not together are written one per request, and
// read back complete, in order; a checkpoint too large by itself still
// fails the write.
func TestWriteBatchOverTheTopicLimit(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.CreateTopic("state", 1, map[string]string{"max.message.bytes": "1048576", "cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := store(t, c.ListenAddrs(), "state")
	var entries []Entry
	for i := range 3 {
		entries = append(entries, Entry{Key: fmt.Sprintf("s%d", i), Value: bytes.Repeat([]byte{byte(i)}, 377<<10)})
	}
	end, err := s.Write(ctx, 0, entries)
	if err != nil || end != 3 {
		t.Fatalf("three checkpoints of 377 KB: end %d, %v; want 3", end, err)
	}
	var got []string
	if _, err := s.Read(ctx, 0, func(r Record) { got = append(got, r.Key) }); err != nil || strings.Join(got, ",") != "s0,s1,s2" {
		t.Errorf("read back %v, %v", got, err)
	}
	if _, err := s.Write(ctx, 0, []Entry{{Key: "huge", Value: make([]byte, 1200<<10)}}); err == nil {
		t.Error("a checkpoint of 1.2 MB written to a topic of 1 MB")
	}
}

// A broker answers a fetch with the batch that holds the offset asked for,
// whole, then whole batches within MaxBytes and the start of the next.
// Compaction can leave the batch that holds the next offset with records
// below it only; with a batch after it too large for the rest, the answer
// brings nothing new. kfake neither compacts nor cuts, so its fetches are
// answered here as such a broker would: a batch of offsets 0..5 of which
// 0..2 are left, and a batch of 6..9 that stands for one of 9 MiB (a topic
// of max.message.bytes 16 MiB). Read must deliver every record left, not
// stop after the first batch.
func TestReadPastACompactedBatch(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.CreateTopic("state", 1, map[string]string{"max.message.bytes": "16777216", "cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := store(t, c.ListenAddrs(), "state")
	var entries []Entry
	for i := range 10 {
		entries = append(entries, Entry{Key: fmt.Sprintf("k%d", i), Value: []byte{byte(i)}})
	}
	if end, err := s.Write(ctx, 0, entries); err != nil || end != 10 {
		t.Fatalf("write: end %d, %v", end, err)
	}
	const standsFor = 9 << 20 // the second batch's size on such a broker
	first := recordBatch(t, 0, 5, 0, 1, 2)
	second := recordBatch(t, 6, 9, 6, 7, 8, 9)
	var maxSeen int32
	c.ControlKey(int16(kmsg.Fetch), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.FetchRequest)
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				maxSeen = max(maxSeen, rp.PartitionMaxBytes)
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition, sp.HighWatermark, sp.LastStableOffset = rp.Partition, 10, 10
				var b []byte
				if rp.FetchOffset <= 5 {
					b = append(b, first...)
				}
				if rp.FetchOffset > 5 || int(rp.PartitionMaxBytes) >= len(first)+standsFor {
					b = append(b, second...)
				} else {
					b = append(b, second[:len(second)/2]...) // cut: the client drops it
				}
				sp.RecordBatches = b
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	var got []string
	if _, err := s.Read(ctx, 0, func(r Record) { got = append(got, r.Key) }); err != nil {
		t.Fatal(err)
	}
	if want := "k0,k1,k2,k6,k7,k8,k9"; strings.Join(got, ",") != want {
		t.Errorf("read %v, want %s (largest fetch asked for %d bytes)", got, want, maxSeen)
	}
}

// recordBatch encodes a v2 record batch of offsets base..last holding the
// records at offsets keep (key "k<offset>", value one byte).
func recordBatch(t *testing.T, base, last int64, keep ...int64) []byte {
	t.Helper()
	var recs []byte
	for _, o := range keep {
		r := kmsg.Record{OffsetDelta: int32(o - base), Key: []byte(fmt.Sprintf("k%d", o)), Value: []byte{byte(o)}}
		n := len(r.AppendTo(nil)) - 1 // the length field of 0 takes one byte
		r.Length = int32(n)
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{FirstOffset: base, Magic: 2, LastOffsetDelta: int32(last - base),
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(keep)), Records: recs}
	enc := b.AppendTo(nil)
	b.Length = int32(len(enc) - 12) // after the first offset and the length
	enc = b.AppendTo(nil)
	b.CRC = int32(crc32.Checksum(enc[21:], crc32.MakeTable(crc32.Castagnoli))) // from the attributes on
	return b.AppendTo(nil)
}
