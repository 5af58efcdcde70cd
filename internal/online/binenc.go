package online

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// The snapshot body is a compact, deterministic binary encoding of the state
// structs, field by field in declaration order (exported fields only):
//
//	bool        1 byte
//	ints        zig-zag varint (int, int8..int64 and named int types)
//	uints       uvarint
//	float64     8 bytes, IEEE 754 bits, little-endian (bit-exact round trip)
//	string      uvarint length + bytes
//	slice       uvarint length + elements
//	*struct     1 byte (0 = nil) + the struct
//	struct      its fields
//
// A field tagged snapshot:"V" was added in snapshot version V: an encoding
// of an older version has no bytes for it, and its decoding leaves it at
// its zero value (its type's documentation says what that restores).
//
// A decoder checks every length against the bytes left before allocating, so
// a corrupt or hostile snapshot costs at most its own size in memory. The
// layout follows the Go types: changing a state struct changes the format,
// which is what SnapshotVersion is for.

var errSnapshotTruncated = errors.New("online: snapshot truncated")

var float64s = reflect.TypeFor[[]float64]()

// encodeValue appends v as snapshot version version lays it out.
func encodeValue(b []byte, v reflect.Value, version int) []byte {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(b, v.Uint())
	case reflect.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case reflect.String:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		return append(b, v.String()...)
	case reflect.Slice:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return append(b, v.Bytes()...)
		}
		if v.Type() == float64s { // the bulk of a snapshot: no reflection per element
			for _, x := range v.Interface().([]float64) {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
			}
			return b
		}
		for i := 0; i < v.Len(); i++ {
			b = encodeValue(b, v.Index(i), version)
		}
		return b
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0)
		}
		return encodeValue(append(b, 1), v.Elem(), version)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() && sinceVersion(f) <= version {
				b = encodeValue(b, v.Field(i), version)
			}
		}
		return b
	}
	panic(fmt.Sprintf("online: snapshot encoding of %s is not supported", v.Type()))
}

// decoder reads what encodeValue wrote in snapshot version version.
type decoder struct {
	b       []byte
	version int
}

func (d *decoder) uvarint() (uint64, error) {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, errSnapshotTruncated
	}
	d.b = d.b[n:]
	return x, nil
}

// length reads a length whose elements take at least minSize bytes each.
func (d *decoder) length(minSize int) (int, error) {
	n, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(d.b)/max(minSize, 1)) {
		return 0, fmt.Errorf("online: snapshot length %d exceeds the data", n)
	}
	return int(n), nil
}

func (d *decoder) decodeValue(v reflect.Value) error {
	switch v.Kind() {
	case reflect.Bool:
		if len(d.b) < 1 || d.b[0] > 1 {
			return errSnapshotTruncated
		}
		v.SetBool(d.b[0] == 1)
		d.b = d.b[1:]
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, n := binary.Varint(d.b)
		if n <= 0 || v.OverflowInt(x) {
			return errSnapshotTruncated
		}
		v.SetInt(x)
		d.b = d.b[n:]
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, err := d.uvarint()
		if err != nil || v.OverflowUint(x) {
			return errSnapshotTruncated
		}
		v.SetUint(x)
	case reflect.Float64:
		if len(d.b) < 8 {
			return errSnapshotTruncated
		}
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(d.b)))
		d.b = d.b[8:]
	case reflect.String:
		n, err := d.length(1)
		if err != nil {
			return err
		}
		v.SetString(string(d.b[:n]))
		d.b = d.b[n:]
	case reflect.Slice:
		elem := v.Type().Elem()
		minSize := 1
		if elem.Kind() == reflect.Float64 {
			minSize = 8
		}
		n, err := d.length(minSize)
		if err != nil {
			return err
		}
		if elem.Kind() == reflect.Uint8 {
			v.SetBytes(append([]byte(nil), d.b[:n]...))
			d.b = d.b[n:]
			return nil
		}
		if v.Type() == float64s {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = math.Float64frombits(binary.LittleEndian.Uint64(d.b[8*i:]))
			}
			d.b = d.b[8*n:]
			v.Set(reflect.ValueOf(xs))
			return nil
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			if err := d.decodeValue(s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Pointer:
		if len(d.b) < 1 || d.b[0] > 1 {
			return errSnapshotTruncated
		}
		present := d.b[0] == 1
		d.b = d.b[1:]
		if !present {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := d.decodeValue(p.Elem()); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() || d.version < sinceVersion(f) {
				continue
			}
			if err := d.decodeValue(v.Field(i)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("online: snapshot decoding of %s is not supported", v.Type())
	}
	return nil
}

// sinceVersion is the snapshot version that added field f (its tag
// snapshot:"V"); 0 for a field as old as the format. A tag that is not a
// version is a programming error.
func sinceVersion(f reflect.StructField) int {
	tag, ok := f.Tag.Lookup("snapshot")
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(tag)
	if err != nil || v < 1 {
		panic(fmt.Sprintf("online: field %s has snapshot tag %q, not a version", f.Name, tag))
	}
	return v
}
