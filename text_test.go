package crtx

import "testing"

func TestText(t *testing.T) {
	for s, want := range map[string]bool{"": true, "Größe ✓ 🚀": true, "a\x00b": false, "\x00": false, "\xff": false} {
		if IsText(s) != want {
			t.Errorf("IsText(%q) = %v", s, !want)
		}
	}
	for s, want := range map[string]bool{
		`{"a":"b"}`: true, `{"a":"\\u0000"}`: true, `{"a":"\\\\u0000"}`: true, `{"a":"\u00000"}`: false,
		`{"a":"\\\u0000"}`: false, `{"\u0000":1}`: false, `{"a":"\u0001"}`: true, "{\"a\":\"\x00\"}": false, "\"\xff\"": false, `"\u000`: true,
	} {
		if IsJSONText([]byte(s)) != want {
			t.Errorf("IsJSONText(%s) = %v", s, !want)
		}
	}
	if CheckText("task", "a\x00") == nil || CheckText("task", "a") != nil || CheckJSONText("parameters", []byte(`{"a":"\u0000"}`)) == nil {
		t.Error("Check* disagree with Is*")
	}
}
