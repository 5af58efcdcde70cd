package online

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// A checkpoint is what a state store keeps for one series: the Learner's
// snapshot and the stream position of the last record of the series the
// snapshot reflects. The daemon uses input offsets as positions, so on replay
// a record at or below a series' position is known to be in its state already.
//
// Layout: magic "SDCK", version (uint16, big-endian), position (int64,
// big-endian), then the Learner snapshot (MarshalBinary, with its own magic
// and version).
var checkpointMagic = [4]byte{'S', 'D', 'C', 'K'}

// CheckpointVersion is the checkpoint envelope version written by
// MarshalCheckpoint; RestoreCheckpoint rejects every other one with
// ErrSnapshotVersion.
const CheckpointVersion = 1

const checkpointHeader = 4 + 2 + 8

// MarshalCheckpoint encodes l's complete state with position, the stream
// position of the last record applied to l.
func MarshalCheckpoint(l *Learner, position int64) ([]byte, error) {
	snap, err := l.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, checkpointHeader+len(snap))
	b = append(b, checkpointMagic[:]...)
	b = binary.BigEndian.AppendUint16(b, CheckpointVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(position))
	return append(b, snap...), nil
}

// RestoreCheckpoint decodes a checkpoint written by MarshalCheckpoint into a
// new Learner of configuration cfg, which must be the configuration the
// snapshot was taken with (a snapshot that does not fit it is an error).
func RestoreCheckpoint(cfg Config, b []byte) (l *Learner, position int64, err error) {
	if len(b) < checkpointHeader || !bytes.Equal(b[:4], checkpointMagic[:]) {
		return nil, 0, fmt.Errorf("online: not a checkpoint")
	}
	if v := binary.BigEndian.Uint16(b[4:6]); v != CheckpointVersion {
		return nil, 0, fmt.Errorf("%w: checkpoint version %d (this build reads %d)", ErrSnapshotVersion, v, CheckpointVersion)
	}
	position = int64(binary.BigEndian.Uint64(b[6:14]))
	if l, err = NewLearner(cfg); err != nil {
		return nil, 0, err
	}
	if err := l.UnmarshalBinary(b[checkpointHeader:]); err != nil {
		return nil, 0, err
	}
	return l, position, nil
}
