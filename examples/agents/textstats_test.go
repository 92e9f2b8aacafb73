package agents

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/crtx-market/crtx/creator"
)

func TestStats(t *testing.T) {
	text := "The cat sat. The cat ran!\nA dog barked at the cat?\n\nFin"
	res, _, err := TextStats(context.Background(), creator.Request{Task: text, Parameters: json.RawMessage(`{"top":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	var s Stats
	json.Unmarshal([]byte(res), &s)
	if s.Words != 13 || s.Sentences != 4 || s.Lines != 4 || s.Characters != len(text) || s.ReadingTime != 4 {
		t.Errorf("stats = %+v", s)
	}
	if len(s.TopWords) != 2 || s.TopWords[0] != (WordCount{"cat", 3}) || s.TopWords[1] != (WordCount{"barked", 1}) {
		t.Errorf("top words = %+v", s.TopWords)
	}
	if _, _, err := TextStats(context.Background(), creator.Request{Task: "x", Parameters: json.RawMessage(`{"top":"many"}`)}); err == nil {
		t.Error("a bad parameter was accepted")
	}
	empty := analyse("", 5)
	if empty.Words != 0 || empty.Lines != 0 || empty.Sentences != 0 || empty.TopWords == nil {
		t.Errorf("empty = %+v", empty)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
