package source

import (
	"encoding/json"
	"unicode/utf8"
)

// Scanning a document json.Valid accepted. Validity is what keeps these
// small: a string ends at the first unescaped quote, a number or literal at
// the first delimiter, brackets balance, and the index never runs past the
// end. On anything else they may return nonsense (never panic: every index
// is checked).

// objectScanner walks the members of a JSON object: open, then next until
// false; key and value are the current member's raw key (quoted, escapes as
// written) and raw value.
type objectScanner struct {
	doc        []byte
	i          int
	key, value []byte
}

// open reports whether the document is an object and enters it.
func (s *objectScanner) open() bool {
	s.i = skipSpace(s.doc, 0)
	if s.i >= len(s.doc) || s.doc[s.i] != '{' {
		return false
	}
	s.i++
	return true
}

// next moves to the next member; false at the end of the object.
func (s *objectScanner) next() bool {
	s.i = skipSpace(s.doc, s.i)
	if s.i < len(s.doc) && s.doc[s.i] == ',' {
		s.i = skipSpace(s.doc, s.i+1)
	}
	if s.i >= len(s.doc) || s.doc[s.i] != '"' {
		return false // '}'
	}
	end := stringEnd(s.doc, s.i)
	s.key = s.doc[s.i:end]
	s.i = skipSpace(s.doc, end)
	s.i = skipSpace(s.doc, s.i+1) // past ':'
	end = valueEnd(s.doc, s.i)
	s.value = s.doc[min(s.i, end):end]
	s.i = end
	return true
}

// keyIs reports whether the current key, unescaped, is name. Keys with
// escapes or bytes outside ASCII go through encoding/json, so that they
// compare as json.Unmarshal would make them (invalid UTF-8 becomes U+FFFD).
func (s *objectScanner) keyIs(name string) bool {
	if len(s.key) >= 2 && plainASCII(s.key[1:len(s.key)-1]) {
		return string(s.key[1:len(s.key)-1]) == name
	}
	k, ok := jsonString(s.key)
	return ok && k == name
}

// arrayScanner walks the elements of a JSON array: next until false; value
// is the current element's raw value.
type arrayScanner struct {
	doc    []byte
	i      int
	opened bool
	value  []byte
}

func (s *arrayScanner) next() bool {
	if !s.opened {
		s.opened = true
		s.i = skipSpace(s.doc, 0)
		if s.i >= len(s.doc) || s.doc[s.i] != '[' {
			return false
		}
		s.i++
	}
	s.i = skipSpace(s.doc, s.i)
	if s.i < len(s.doc) && s.doc[s.i] == ',' {
		s.i = skipSpace(s.doc, s.i+1)
	}
	if s.i >= len(s.doc) || s.doc[s.i] == ']' {
		return false
	}
	end := valueEnd(s.doc, s.i)
	s.value = s.doc[min(s.i, end):end]
	s.i = end
	return true
}

// arrayLen returns the number of elements of raw, a valid JSON value; ok is
// false when it is not an array.
func arrayLen(raw []byte) (n int, ok bool) {
	if i := skipSpace(raw, 0); i >= len(raw) || raw[i] != '[' {
		return 0, false
	}
	elems := arrayScanner{doc: raw}
	for elems.next() {
		n++
	}
	return n, true
}

// jsonString returns the string raw, a valid JSON value, holds; ok is false
// when it is not a string. Strings with escapes or bytes outside ASCII go
// through encoding/json (escapes, U+FFFD for invalid UTF-8).
func jsonString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if body := raw[1 : len(raw)-1]; plainASCII(body) {
		return string(body), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

// plainASCII reports whether b needs no unescaping and no UTF-8 repair.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default: // a number, true, false or null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return len(b)
	}
}
