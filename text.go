package crtx

import (
	"strings"
	"unicode/utf8"
)

// Text is what the marketplace stores of what callers and creators send:
// valid UTF-8 without NUL (U+0000). PostgreSQL's text and jsonb cannot hold
// NUL, so where SQLite would keep it PostgreSQL would fail; every door
// (REST, MCP, A2A) and every creator reply is held to this one rule instead,
// so that both engines keep the same things and refuse the same things.

// IsText reports whether s is valid UTF-8 without NUL.
func IsText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// IsJSONText reports whether the JSON text b is valid UTF-8 and none of
// its strings escapes NUL (\u0000); JSON cannot hold a raw NUL, so that
// escape is the only way one comes in.
func IsJSONText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case 0:
			return false
		case '\\':
			if i+5 < len(b) && b[i+1] == 'u' && string(b[i+2:i+6]) == "0000" {
				return false
			}
			i++ // the escaped character, which may be a backslash itself
		}
	}
	return true
}

// CheckText refuses s, named field, unless it is text.
func CheckText(field, s string) error {
	if IsText(s) {
		return nil
	}
	return InvalidField(field, "must be text: valid UTF-8 without NUL characters (U+0000)")
}

// CheckJSONText refuses the JSON b, named field, unless its strings are text.
func CheckJSONText(field string, b []byte) error {
	if IsJSONText(b) {
		return nil
	}
	return InvalidField(field, "must be text: valid UTF-8 without NUL characters (U+0000, or \\u0000 in a JSON string)")
}
