package daemon

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/streamd/streamd/internal/checkpoint"
	"github.com/streamd/streamd/internal/online"
)

// crashChildEnv makes the test binary a daemon process (crashChild) instead
// of running tests: the crash test needs a process it can SIGKILL.
const crashChildEnv = "STREAMD_TEST_DAEMON_BROKERS"

func TestMain(m *testing.M) {
	if brokers := os.Getenv(crashChildEnv); brokers != "" {
		os.Exit(crashChild(strings.Split(brokers, ",")))
	}
	if topics := os.Getenv(brokerChildEnv); topics != "" {
		os.Exit(brokerChild(strings.Split(topics, ",")))
	}
	os.Exit(m.Run())
}

// brokerChildEnv makes the test binary a kfake broker process with the
// topics it lists (8 partitions each): benchmarks that measure the daemon's
// latency keep the broker's memory and garbage collection out of the
// daemon's process, as a real deployment does.
const brokerChildEnv = "STREAMD_TEST_BROKER_TOPICS"

// brokerChild prints the broker's address on stdout and serves until its
// stdin closes.
func brokerChild(topics []string) int {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(8, topics...), benchSegments)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	fmt.Println(strings.Join(c.ListenAddrs(), ","))
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// brokerProcess is a running brokerChild.
type brokerProcess struct {
	Addrs []string
	cmd   *exec.Cmd
	stdin io.Closer
}

// startBrokerProcess starts a brokerChild.
func startBrokerProcess(tb testing.TB, topics ...string) *brokerProcess {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// One P: kfake serves every request from one goroutine, and a second P
	// only woke threads to hand requests over (the broker's CPU per record
	// was a fifth higher with two, alternated over 4 pairs of runs).
	cmd.Env = append(os.Environ(), brokerChildEnv+"="+strings.Join(topics, ","), "GOMAXPROCS=1")
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	return &brokerProcess{Addrs: strings.Split(strings.TrimSpace(line), ","), cmd: cmd, stdin: stdin}
}

// Stop ends the broker and waits for it.
func (p *brokerProcess) Stop() { p.stdin.Close(); p.cmd.Wait() }

// CPU is the broker's CPU time (user and system) so far, from
// /proc/PID/stat in clock ticks of 10 ms (USER_HZ = 100 on Linux); 0 where
// it cannot be read.
func (p *brokerProcess) CPU() time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces, so split after
	// its closing parenthesis): utime and stime are the 12th and 13th.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// crashChild runs a daemon with a state topic, checkpointing every 300
// records of a partition (or 10 s), until SIGTERM.
func crashChild(addrs []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	cfg := stateConfig(addrs, 300)
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	d, err := Open(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	<-ctx.Done()
	if err := d.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func startDaemonProcess(t *testing.T, addrs []string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+strings.Join(addrs, ","))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// Crash equivalence. A daemon process is killed with SIGKILL mid-stream,
// while records keep arriving; a new process takes over from the state
// topic and the committed offsets. Then:
//   - every forecast ever published — before the kill, re-published for the
//     records read again after it, and after — is bit-identical to an
//     uninterrupted run's, and every record has its forecast;
//   - the audit: each series' final checkpoint holds the input offset of its
//     last record, and its state is byte for byte the state of a Learner
//     that saw every record once (a record skipped or applied twice would
//     change the sample counts, the lag history and the statistics).
func TestCrashEquivalence(t *testing.T) {
	const nSeries, n, killAt = 8, 400, 220
	addrs, ctx, ref, fc := stateFixture(t, 4, nSeries, n, 120*time.Second)

	// A backlog the first process reads and checkpoints at once (a
	// partition with two or more series holds ≥ 440 records > 300), then
	// records trickling in: about 120 more per such partition before the
	// kill, published but not yet checkpointed, so the second process must
	// both restore and read records again.
	produceRange(ctx, t, addrs, nSeries, n, 0, killAt)
	first, firstErr := startDaemonProcess(t, addrs)
	defer first.Process.Kill()
	fc.waitFor(ctx, t, ref, killAt)
	produced := make(chan error, 1)
	go func() {
		var err error
		for i := killAt; i < n && err == nil; i += 2 {
			err = writeRange(ctx, addrs, nSeries, n, i, min(i+2, n))
			time.Sleep(10 * time.Millisecond)
		}
		produced <- err
	}()
	fc.waitFor(ctx, t, ref, killAt+60)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	fc.mu.Lock()
	beforeKill := len(fc.seen)
	fc.mu.Unlock()

	second, secondErr := startDaemonProcess(t, addrs)
	defer second.Process.Kill()
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	fc.waitFor(ctx, t, ref, n)
	if err := second.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("second daemon: %v\n%s", err, secondErr)
	}
	fc.mu.Lock()
	republished := 0
	for _, c := range fc.seen {
		republished += c - 1
	}
	fc.mu.Unlock()
	t.Logf("%d forecasts before the kill; %d published again after it (records re-read)", beforeKill, republished)
	if beforeKill >= len(ref) || republished == 0 || !regexp.MustCompile(`partition restored.* series=[1-9]`).MatchString(secondErr.String()) {
		t.Errorf("the kill did not land mid-stream after a checkpoint (%d of %d forecasts before it, %d re-published): "+
			"the test proves less than it claims\nfirst process:\n%s\nsecond process:\n%s", beforeKill, len(ref), republished,
			firstErr, secondErr)
	}

	// The audit.
	last := lastOffsets(ctx, t, addrs, 4)
	store, _ := checkpoint.New(checkpoint.Config{Brokers: addrs, Topic: "state", Transport: &kafka.Transport{}})
	final := map[string][]byte{}
	for p := 0; p < 4; p++ {
		if _, err := store.Read(ctx, p, func(r checkpoint.Record) { final[r.Key] = r.Value }); err != nil {
			t.Fatal(err)
		}
	}
	for s := 0; s < nSeries; s++ {
		id := fmt.Sprintf("s%d", s)
		l, pos, err := online.RestoreCheckpoint(learnerConfig(), final[id])
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if pos != last[id] {
			t.Errorf("%s: checkpoint at input offset %d, its last record is at %d", id, pos, last[id])
		}
		direct, _ := online.NewLearner(learnerConfig())
		for i, v := range series(s, n) {
			direct.Observe(online.Observation{T: int64(i + 1), Y: v})
		}
		got, _ := l.MarshalBinary()
		want, _ := direct.MarshalBinary()
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the final state differs from a Learner that saw each record once", id)
		}
	}
}

// lastOffsets reads the input topic and returns each series' last offset.
func lastOffsets(ctx context.Context, t *testing.T, addrs []string, partitions int) map[string]int64 {
	t.Helper()
	last := map[string]int64{}
	for p := 0; p < partitions; p++ {
		end := endOffset(ctx, t, addrs, "series", p)
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: "series", Partition: p, MaxWait: 250 * time.Millisecond})
		for off := int64(0); off < end; off++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			last[string(m.Key)] = m.Offset
		}
		r.Close()
	}
	return last
}

// benchSegments rolls the benchmark brokers' log segments at 1 MiB.
// kfake keeps segments in memory and grows a segment by doubling its
// buffer — allocate, then copy — inside the loop that serves every request;
// at its default 100 MiB segments, each growth of a forecast partition's
// tens of megabytes stalled every client for 50–250 ms, and the benchmarks'
// tails measured that. A real broker appends to files in the page cache.
var benchSegments = kfake.BrokerConfigs(map[string]string{"log.segment.bytes": strconv.Itoa(1 << 20)})
