package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/crtx-market/crtx"
)

const (
	// MaxBodyBytes caps every request body (CONTRACT §8).
	MaxBodyBytes = 512 << 10
	maxDepth     = 64
)

func invalid(format string, args ...any) error {
	return crtx.Errorf(crtx.CodeInvalidRequest, format, args...)
}

// decode reads a JSON object into dst, a pointer to a struct, strictly: JSON
// content type, valid UTF-8, one value, at most 64 levels deep, no unknown
// fields, every field of its declared type. Each failure names the field.
func decode(r *http.Request, dst any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return crtx.Errorf(crtx.CodeUnsupportedMediaType, "send the body as JSON with Content-Type: application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err := tooLarge(err); err != nil {
		return err
	}
	if err != nil {
		return invalid("the body could not be read")
	}
	return decodeBytes(body, dst)
}

// tooLarge is request_too_large when err is a read cut off at the body
// limit, else nil.
func tooLarge(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return crtx.Errorf(crtx.CodeRequestTooLarge, "the body is larger than %d bytes", tooBig.Limit)
	}
	return nil
}

// decodeBytes is decode without the HTTP; the fuzz target drives it.
func decodeBytes(body []byte, dst any) error {
	if !utf8.Valid(body) {
		return invalid("the body is not valid UTF-8")
	}
	// Escaped NUL characters are valid JSON but no text a field may hold
	// (crtx.IsText).
	if !crtx.IsJSONText(body) {
		return invalid("the body holds a NUL character (\\u0000), which no field accepts")
	}
	if depth(body) > maxDepth {
		return invalid("the body nests deeper than %d levels", maxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return invalid("the body must be a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("the body must hold a single JSON value")
	}
	fields := jsonFields(reflect.TypeOf(dst).Elem())
	v := reflect.ValueOf(dst).Elem()
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	slices.Sort(names) // report the same field first every time
	for _, name := range names {
		idx, ok := fields[name]
		if !ok {
			return invalid("unknown parameter: %s", name)
		}
		if err := json.Unmarshal(raw[name], v.Field(idx).Addr().Interface()); err != nil {
			return fieldError(name, err)
		}
	}
	return nil
}

func fieldError(name string, err error) error {
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, crtx.ErrAmount):
		return invalid("%s: %v (amounts are JSON numbers in USDC, at least 0, with at most 6 decimals)", name, err)
	case errors.As(err, &te):
		return invalid("%s must be %s, not a JSON %s", name, kindName(te.Type), te.Value)
	}
	return invalid("%s is not valid", name)
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	case reflect.Pointer:
		return kindName(t.Elem())
	}
	return "of another type"
}

// jsonFields maps each JSON name of struct type t to its field index.
func jsonFields(t reflect.Type) map[string]int {
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = i
	}
	return out
}

// depth returns the deepest nesting of arrays and objects in a JSON text,
// skipping over strings, without building anything.
func depth(b []byte) int {
	d, max := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			if d > max {
				max = d
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return max
}

// withBody authenticates a request with auth, then decodes its body.
func withBody[T any](r *http.Request, auth func(*http.Request) (crtx.Principal, error)) (crtx.Principal, T, error) {
	var body T
	p, err := auth(r)
	if err == nil {
		err = decode(r, &body)
	}
	return p, body, err
}
