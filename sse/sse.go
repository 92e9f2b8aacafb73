// Package sse reads and writes Server-Sent Events (the HTML Standard's
// "Server-sent events", §9.2), as a creator's streamed answer and a
// streamed call's answer carry them.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Event is one dispatched event: its type ("message" when the stream
// names none), its data lines joined by "\n", and its id as last set.
type Event struct {
	ID   string
	Name string
	Data []byte
}

// ErrTooLarge is returned when a stream goes past the bytes its reader
// was given.
var ErrTooLarge = errors.New("sse: the stream is larger than allowed")

// Reader reads events from a stream of at most max bytes.
type Reader struct {
	r    *bufio.Reader
	left int64
	id   string
}

// NewReader reads events from r, at most max bytes in all.
//
// Its buffer is small: a stream is held open for as long as its writer
// takes (thousands at once while models think), and lines are read a byte
// at a time from the buffer whatever its size, from a body that is itself
// buffered (docs/performance.md).
func NewReader(r io.Reader, max int64) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 512), left: max}
}

// line is the next line without its end (CRLF, LF or CR per §9.2.5; a CR
// alone ends a line only when the next byte is not LF).
func (r *Reader) line() ([]byte, error) {
	var out []byte
	for {
		b, err := r.r.ReadByte()
		if err != nil {
			if err == io.EOF && len(out) > 0 {
				// A last line without its end is not dispatched (§9.2.5).
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if r.left--; r.left < 0 {
			return nil, ErrTooLarge
		}
		switch b {
		case '\n':
			return out, nil
		case '\r':
			if next, err := r.r.Peek(1); err == nil && next[0] == '\n' {
				r.r.ReadByte()
				r.left--
			}
			return out, nil
		}
		out = append(out, b)
	}
}

// Next returns the next event; io.EOF when the stream ended cleanly
// between events, io.ErrUnexpectedEOF when it ended inside one.
func (r *Reader) Next() (Event, error) {
	var name string
	var data bytes.Buffer
	hasData := false
	for {
		l, err := r.line()
		if err != nil {
			if err == io.EOF && (hasData || name != "") {
				err = io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if len(l) == 0 {
			// A blank line dispatches the event, if it has data (§9.2.6).
			if !hasData {
				name = ""
				continue
			}
			if name == "" {
				name = "message"
			}
			return Event{ID: r.id, Name: name, Data: data.Bytes()}, nil
		}
		if l[0] == ':' {
			continue // a comment
		}
		field, value, _ := bytes.Cut(l, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "id":
			if !bytes.ContainsRune(value, 0) {
				r.id = string(value)
			}
		}
		// "retry" and unknown fields are ignored.
	}
}

// ErrNotOneLine is returned by Write for an id or a name that holds a line
// end: it would end its field and start another.
var ErrNotOneLine = errors.New("sse: an event's id and name are one line each")

// Write writes one event: its id when not empty, its name, and its data,
// one data line for each of its lines (which any line end ends, as a
// reader splits them).
func Write(w io.Writer, e Event) error {
	if strings.ContainsAny(e.ID+e.Name, "\r\n") {
		return ErrNotOneLine
	}
	var b strings.Builder
	if e.ID != "" {
		fmt.Fprintf(&b, "id: %s\n", e.ID)
	}
	if e.Name != "" {
		fmt.Fprintf(&b, "event: %s\n", e.Name)
	}
	for _, l := range strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(e.Data), "\r\n", "\n"), "\r", "\n"), "\n") {
		fmt.Fprintf(&b, "data: %s\n", l)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}
