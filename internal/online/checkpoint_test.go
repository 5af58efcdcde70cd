package online

import (
	"encoding/binary"
	"errors"
	"testing"
)

// A checkpoint carries the position and a snapshot that continues
// bit-identically (the snapshot's own round trip is tested above; here the
// envelope must neither lose nor alter a byte).
func TestCheckpointRoundTrip(t *testing.T) {
	cfg := testConfig()
	a, _ := NewLearner(cfg)
	y := noisySine(400, 0.1, 7)
	for i := 0; i < 300; i++ {
		a.Observe(Observation{T: int64(i), Y: y[i]})
	}
	b, err := MarshalCheckpoint(a, 1<<40+7)
	if err != nil {
		t.Fatal(err)
	}
	r, pos, err := RestoreCheckpoint(cfg, b)
	if err != nil {
		t.Fatal(err)
	}
	if pos != 1<<40+7 {
		t.Errorf("position %d, want %d", pos, int64(1<<40+7))
	}
	for i := 300; i < len(y); i++ {
		ra, _ := a.Observe(Observation{T: int64(i), Y: y[i]})
		rb, _ := r.Observe(Observation{T: int64(i), Y: y[i]})
		if ra.Prediction != rb.Prediction || ra.Std != rb.Std {
			t.Fatalf("sample %d: %v±%v vs %v±%v", i, ra.Prediction, ra.Std, rb.Prediction, rb.Std)
		}
	}
	// Negative positions (nothing applied yet) survive too.
	b, _ = MarshalCheckpoint(a, -1)
	if _, pos, err := RestoreCheckpoint(cfg, b); err != nil || pos != -1 {
		t.Errorf("position -1: got %d, %v", pos, err)
	}
}

func TestCheckpointRejectsUnknownVersionAndGarbage(t *testing.T) {
	a, _ := NewLearner(testConfig())
	good, _ := MarshalCheckpoint(a, 3)
	future := append([]byte(nil), good...)
	binary.BigEndian.PutUint16(future[4:6], CheckpointVersion+1)
	if _, _, err := RestoreCheckpoint(testConfig(), future); !errors.Is(err, ErrSnapshotVersion) {
		t.Errorf("future version: err = %v, want ErrSnapshotVersion", err)
	}
	for _, b := range [][]byte{nil, []byte("SDCK"), good[:checkpointHeader], []byte("SDLS\x00\x03xxxxxxxxxxxx")} {
		if _, _, err := RestoreCheckpoint(testConfig(), b); err == nil {
			t.Errorf("%q: restored", b)
		}
	}
}

// FuzzRestoreCheckpoint: arbitrary bytes never panic.
func FuzzRestoreCheckpoint(f *testing.F) {
	a, _ := NewLearner(testConfig())
	for i, v := range noisySine(150, 0.1, 11) {
		a.Observe(Observation{T: int64(i), Y: v})
	}
	good, _ := MarshalCheckpoint(a, 42)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("SDCK\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, _, err := RestoreCheckpoint(testConfig(), b)
		if err == nil && l == nil {
			t.Fatal("nil learner without an error")
		}
	})
}
