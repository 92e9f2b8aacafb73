package crtx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrNotCanonicalizable is wrapped by every failure of Canonical and
// CanonicalJSON: the input is not JSON, or is JSON that RFC 8785 refuses
// (a duplicate key, a lone surrogate, a number beyond IEEE 754 double).
var ErrNotCanonicalizable = errors.New("not canonicalizable JSON")

// maxCanonicalDepth bounds nesting, as encoding/json does, so that hostile
// input cannot exhaust the stack.
const maxCanonicalDepth = 10000

// Canonical returns the RFC 8785 JSON Canonicalization Scheme form of what
// encoding/json makes of v (a json.RawMessage is taken as the JSON it
// holds). Two values that are the same JSON data have the same canonical
// bytes, whatever their key order, whitespace, escapes or number spelling,
// which is what a signature or a hash over JSON needs.
func Canonical(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotCanonicalizable, err)
	}
	return CanonicalJSON(b)
}

// CanonicalJSON returns the RFC 8785 form of the JSON text data: no
// insignificant whitespace, object members sorted by the UTF-16 code units
// of their names, numbers as ECMAScript writes IEEE 754 doubles, strings
// with only the escapes the RFC requires. The input must be I-JSON (RFC
// 7493): valid UTF-8, no duplicate names in an object, no lone surrogate
// escapes, numbers within the range of a double.
func CanonicalJSON(data []byte) ([]byte, error) {
	p := jcsParser{data: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(data) {
		return nil, p.fail("data after the JSON value")
	}
	var out bytes.Buffer
	out.Grow(len(data))
	writeCanonical(&out, v)
	return out.Bytes(), nil
}

// ErrUnknownMember is wrapped by SignedJSON's refusal of a member its
// layout does not have.
var ErrUnknownMember = errors.New("unknown member")

// SignedJSON reads data, a JSON object that carries its own signature in
// the member named sig, so that the signature can be checked over exactly
// what was received rather than over what a decoder kept of it. It
// refuses what CanonicalJSON refuses (a duplicate name among them) and a
// member not named in known, so a name that differs from a known one only
// in case, which encoding/json would decode into that field, is refused
// too. It returns the RFC 8785 form of the object without sig, and sig's
// value, which must be a string.
func SignedJSON(data []byte, known []string, sig string) (signed []byte, signature string, err error) {
	p := jcsParser{data: data}
	p.space()
	if p.pos >= len(data) || data[p.pos] != '{' {
		return nil, "", p.fail("a JSON object expected")
	}
	v, err := p.value(0)
	if err != nil {
		return nil, "", err
	}
	p.space()
	if p.pos != len(data) {
		return nil, "", p.fail("data after the JSON value")
	}
	obj, rest := v.(*jcsObject), &jcsObject{}
	for i, name := range obj.names {
		switch {
		case !slices.Contains(known, name):
			return nil, "", fmt.Errorf("%w %q", ErrUnknownMember, name)
		case name != sig:
			rest.names, rest.values = append(rest.names, name), append(rest.values, obj.values[i])
		default:
			s, ok := obj.values[i].(string)
			if !ok {
				return nil, "", fmt.Errorf("%w: %q is not a string", ErrNotCanonicalizable, sig)
			}
			signature = s
		}
	}
	var out bytes.Buffer
	writeCanonical(&out, rest)
	return out.Bytes(), signature, nil
}

// jcsObject is a parsed object; members keep their parsed order until
// written.
type jcsObject struct {
	names  []string
	values []any
}

// jcsParser reads JSON into nil, bool, float64, string, []any and
// *jcsObject. It is strict where encoding/json is lenient: encoding/json
// keeps the last of duplicate names and turns a lone surrogate into
// U+FFFD, both of which would let two different texts share a canonical
// form.
type jcsParser struct {
	data []byte
	pos  int
}

func (p *jcsParser) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrNotCanonicalizable, what, p.pos)
}

func (p *jcsParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jcsParser) value(depth int) (any, error) {
	if depth > maxCanonicalDepth {
		return nil, p.fail("nesting deeper than " + strconv.Itoa(maxCanonicalDepth))
	}
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	for _, lit := range []struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(lit.text)) {
			p.pos += len(lit.text)
			return lit.v, nil
		}
	}
	return nil, p.fail("invalid character")
}

func (p *jcsParser) object(depth int) (any, error) {
	p.pos++ // {
	obj := &jcsObject{}
	seen := map[string]bool{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return obj, nil
	}
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("object member name expected")
		}
		name, err := p.string()
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, p.fail(fmt.Sprintf("duplicate member name %q", name))
		}
		seen[name] = true
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("':' expected")
		}
		p.pos++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		obj.names, obj.values = append(obj.names, name), append(obj.values, v)
		more, err := p.more('}', "an object")
		if err != nil {
			return nil, err
		}
		if !more {
			return obj, nil
		}
	}
}

func (p *jcsParser) array(depth int) (any, error) {
	p.pos++ // [
	arr := []any{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return arr, nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		more, err := p.more(']', "an array")
		if err != nil {
			return nil, err
		}
		if !more {
			return arr, nil
		}
	}
}

// more reads what follows a member of an object or an element of an
// array: ',' before another, or the close that ends them.
func (p *jcsParser) more(close byte, in string) (bool, error) {
	p.space()
	if p.pos >= len(p.data) {
		return false, p.fail("unexpected end of input in " + in)
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return true, nil
	case close:
		p.pos++
		return false, nil
	}
	return false, p.fail(fmt.Sprintf("',' or '%c' expected", close))
}

// string reads a string literal (RFC 8259 §7), refusing raw control
// characters, invalid UTF-8 and unpaired surrogate escapes.
func (p *jcsParser) string() (string, error) {
	p.pos++ // "
	var b strings.Builder
	for {
		if p.pos >= len(p.data) {
			return "", p.fail("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", p.fail("control character in a string")
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.fail("invalid UTF-8")
			}
			b.WriteRune(r)
			p.pos += size
		}
	}
}

// escape reads one escape sequence, a surrogate pair counting as one.
func (p *jcsParser) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, p.fail("unterminated escape")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
	default:
		p.pos -= 2
		return 0, p.fail("invalid escape")
	}
	r, err := p.hex4()
	if err != nil {
		return 0, err
	}
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00:
		// A high surrogate must be followed by an escaped low one.
		if p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
			return 0, p.fail("lone high surrogate")
		}
		p.pos += 2
		lo, err := p.hex4()
		if err != nil {
			return 0, err
		}
		if lo < 0xdc00 || lo > 0xdfff {
			return 0, p.fail("high surrogate without a low one")
		}
		return utf16.DecodeRune(r, lo), nil
	case utf16.IsSurrogate(r):
		return 0, p.fail("lone low surrogate")
	}
	return r, nil
}

func (p *jcsParser) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		return 0, p.fail("short \\u escape")
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 16)
	if err != nil {
		return 0, p.fail("invalid \\u escape")
	}
	p.pos += 4
	return rune(n), nil
}

// number reads a number by RFC 8259's grammar and keeps it as the double
// it denotes: RFC 8785 compares and writes numbers as IEEE 754 values.
func (p *jcsParser) number() (any, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case digits() == 0:
		return nil, p.fail("digit expected")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("digit expected after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("digit expected in the exponent")
		}
	}
	f, err := strconv.ParseFloat(string(p.data[start:p.pos]), 64)
	// A number too small for a double rounds to zero, as in ECMAScript; one
	// too large has no canonical form.
	if err != nil && !(errors.Is(err, strconv.ErrRange) && !math.IsInf(f, 0)) {
		p.pos = start
		return nil, p.fail("number out of the range of a double")
	}
	return f, nil
}

func writeCanonical(out *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		out.WriteString("null")
	case bool:
		out.WriteString(strconv.FormatBool(v))
	case float64:
		out.WriteString(ecmaNumber(v))
	case string:
		writeCanonicalString(out, v)
	case []any:
		out.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				out.WriteByte(',')
			}
			writeCanonical(out, x)
		}
		out.WriteByte(']')
	case *jcsObject:
		order := make([]int, len(v.names))
		keys := make([][]uint16, len(v.names))
		for i, name := range v.names {
			order[i], keys[i] = i, utf16.Encode([]rune(name))
		}
		slices.SortFunc(order, func(a, b int) int { return slices.Compare(keys[a], keys[b]) })
		out.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				out.WriteByte(',')
			}
			writeCanonicalString(out, v.names[i])
			out.WriteByte(':')
			writeCanonical(out, v.values[i])
		}
		out.WriteByte('}')
	}
}

// ecmaNumber writes f as ECMAScript's Number.prototype.toString does (RFC
// 8785 §3.2.2.3): the shortest digits that read back as f, in plain
// notation from 1e-6 up to 1e21 and in exponent notation outside.
func ecmaNumber(f float64) string {
	if f == 0 {
		return "0" // minus zero too
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	// Go writes the exponent with at least two digits (1e-07); ECMAScript
	// with as few as it needs (1e-7), and a sign always (1e+21).
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	return mant + "e" + exp[:1] + strings.TrimLeft(exp[1:], "0")
}

// writeCanonicalString escapes as RFC 8785 §3.2.2.2 says: '"' and '\\',
// the two-character forms of \b \t \n \f \r, \u00xx (lowercase) for the
// other control characters, and every other character as itself.
func writeCanonicalString(out *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	out.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\t':
			out.WriteString(`\t`)
		case '\n':
			out.WriteString(`\n`)
		case '\f':
			out.WriteString(`\f`)
		case '\r':
			out.WriteString(`\r`)
		default:
			if r < 0x20 {
				out.WriteString(`\u00`)
				out.WriteByte(hex[r>>4])
				out.WriteByte(hex[r&0xf])
				continue
			}
			out.WriteRune(r)
		}
	}
	out.WriteByte('"')
}
