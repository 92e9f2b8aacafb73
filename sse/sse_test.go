package sse_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/crtx-market/crtx/sse"
)

func all(t *testing.T, stream string, max int64) ([]sse.Event, error) {
	t.Helper()
	r := sse.NewReader(strings.NewReader(stream), max)
	var out []sse.Event
	for {
		e, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, err
		}
		out = append(out, e)
	}
}

// The standard's own examples (§9.2.6): ids carry over, comments and
// unknown fields are ignored, data lines join with "\n", any line end
// counts, and an event without data is not dispatched.
func TestReadsTheStandardsStreams(t *testing.T) {
	stream := ": a comment\r\n" +
		"event: delta\r\ndata: {\"text\":\"Bon\"}\r\nid: 1\r\n\r\n" +
		"data: first\ndata:second\n\n" +
		"event: nothing\n\n" +
		"retry: 10\nunknown: x\rdata: cr\r\r"
	got, err := all(t, stream, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := []sse.Event{{ID: "1", Name: "delta", Data: []byte(`{"text":"Bon"}`)}, {ID: "1", Name: "message", Data: []byte("first\nsecond")},
		{ID: "1", Name: "message", Data: []byte("cr")}}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Name != want[i].Name || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// What Write writes, Next reads back; a stream cut inside an event, or
// past its bound, is an error, not a shorter event.
func TestWriteReadsBackAndBounds(t *testing.T) {
	var b bytes.Buffer
	in := []sse.Event{{ID: "7", Name: "delta", Data: []byte("two\nlines")}, {Name: "result", Data: []byte(`{}`)}}
	for _, e := range in {
		if err := sse.Write(&b, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := all(t, b.String(), int64(b.Len()))
	if err != nil || len(got) != 2 || string(got[0].Data) != "two\nlines" || got[1].Name != "result" || got[1].ID != "7" {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if _, err := all(t, b.String(), int64(b.Len()-1)); !errors.Is(err, sse.ErrTooLarge) {
		t.Fatalf("one byte over: %v", err)
	}
	if _, err := all(t, "event: delta\ndata: cut", 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut inside an event: %v", err)
	}
	if _, err := all(t, "data: whole\n", 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut before the blank line: %v", err)
	}
	// Data lines end at any line end, as the reader splits them; an id or
	// a name holding one is refused, not written as two fields.
	b.Reset()
	sse.Write(&b, sse.Event{Data: []byte("a\rb\r\nc")})
	if got, err := all(t, b.String(), 100); err != nil || string(got[0].Data) != "a\nb\nc" {
		t.Fatalf("CR and CRLF in data: %q, %v", got, err)
	}
	if err := sse.Write(&b, sse.Event{Name: "x\ndata: injected", Data: []byte("{}")}); !errors.Is(err, sse.ErrNotOneLine) {
		t.Fatalf("a name with a line end: %v", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("event: delta\ndata: {\"text\":\"a\"}\n\nevent: result\ndata: {}\n\n"))
	f.Add([]byte(": c\r\nid: 1\r\ndata: x\r\r\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := sse.NewReader(bytes.NewReader(stream), int64(len(stream)))
		for range len(stream) + 1 {
			e, err := r.Next()
			if err != nil {
				return
			}
			if e.Name == "" || len(e.Data) > len(stream) {
				t.Fatalf("event %+v from %q", e, stream)
			}
		}
		t.Fatalf("more events than bytes in %q", stream)
	})
}
