package agents

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/crtx-market/crtx/creator"
)

// TextStatsInput and TextStatsOutput are the schemas to list it with.
const TextStatsInput = `{"type":"object","properties":{"top":{"type":"integer","minimum":0,"maximum":50,"description":"how many frequent words to list (default 5)"}},"required":[],"additionalProperties":false}`

const TextStatsOutput = `{"type":"object","properties":{"words":{"type":"integer"},"sentences":{"type":"integer"},"lines":{"type":"integer"},"characters":{"type":"integer"},"reading_time_seconds":{"type":"integer"},"top_words":{"type":"array","items":{"type":"object","properties":{"word":{"type":"string"},"count":{"type":"integer"}}}}},"required":["words","sentences","lines","characters"]}`

// Stats is the answer.
type Stats struct {
	Words       int         `json:"words"`
	Sentences   int         `json:"sentences"`
	Lines       int         `json:"lines"`
	Characters  int         `json:"characters"`
	ReadingTime int         `json:"reading_time_seconds"`
	TopWords    []WordCount `json:"top_words"`
}

// WordCount is one frequent word.
type WordCount struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

var stopWords = map[string]bool{"the": true, "a": true, "an": true, "and": true, "or": true, "of": true, "to": true,
	"in": true, "is": true, "it": true, "that": true, "for": true, "on": true, "with": true, "as": true, "was": true, "at": true, "by": true, "be": true}

// TextStats reads the task as a text and answers its statistics as JSON:
// words, sentences, lines, characters, reading time, frequent words.
func TextStats(_ context.Context, r creator.Request) (string, int, error) {
	var p struct {
		Top *int `json:"top"`
	}
	if len(r.Parameters) > 0 {
		if err := json.Unmarshal(r.Parameters, &p); err != nil {
			return "", 0, errors.New("parameters: top must be a whole number")
		}
	}
	top := 5
	if p.Top != nil {
		top = *p.Top
	}
	s := analyse(r.Task, top)
	b, _ := json.Marshal(s)
	return string(b), 0, nil
}

func analyse(text string, top int) Stats {
	s := Stats{Characters: utf8.RuneCountInString(text), TopWords: []WordCount{}}
	if strings.TrimSpace(text) != "" {
		s.Lines = strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	}
	counts := map[string]int{}
	inSentence := false
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) }) {
		word := strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }))
		if word != "" {
			s.Words++
			inSentence = true
			if !stopWords[word] {
				counts[word]++
			}
		}
		if strings.ContainsAny(w, ".!?…") && inSentence {
			s.Sentences++
			inSentence = false
		}
	}
	if inSentence {
		s.Sentences++
	}
	s.ReadingTime = (s.Words*60 + 237) / 238 // 238 words a minute, rounded up
	for w, c := range counts {
		s.TopWords = append(s.TopWords, WordCount{w, c})
	}
	slices.SortFunc(s.TopWords, func(a, b WordCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Word, b.Word))
	})
	if len(s.TopWords) > top {
		s.TopWords = s.TopWords[:top]
	}
	return s
}
