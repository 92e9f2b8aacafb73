package market

import (
	"context"
	"strings"
	"testing"
)

// A stream that waits for the next piece is woken by the call's end, and
// still reads the pieces that came just before it; a call that runs here
// again starts its pieces anew.
func TestPiecesCameJustBeforeTheEnd(t *testing.T) {
	p := &pieces{by: map[string]*pieceLog{}}
	m := &Executions{&core{streamed: p}}
	p.add("exe", "Bon")
	_, next, held := p.since("exe", 1)
	if !held {
		t.Fatal("the running call's pieces are not held")
	}
	p.add("exe", "jour")
	p.end("exe")
	<-next
	var got []string
	m.Pieces(context.Background(), "exe", 1, func(text string) { got = append(got, text) })
	if strings.Join(got, "|") != "jour" {
		t.Fatalf("after the end, the pieces after the first are %q", got)
	}
	p.add("exe", "again")
	if texts, _, held := p.since("exe", 0); !held || strings.Join(texts, "|") != "again" {
		t.Fatalf("run again: %q, held %v", texts, held)
	}
	// A run that lost its call to another replica drops its pieces at
	// once: that replica's result may differ.
	_, next, _ = p.since("exe", 1)
	p.drop("exe")
	<-next
	if texts, _, held := p.since("exe", 0); held || texts != nil {
		t.Fatalf("dropped: %q, held %v", texts, held)
	}
}
