package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

// A stream's pieces reach the caller; a stream that ends with an error
// event is that error, and one cut before its end is a StreamCut that
// names where to resume.
func TestStreamEnds(t *testing.T) {
	ends := map[string]string{
		"error": "event: error\ndata: {\"error\":{\"code\":\"unavailable\",\"message\":\"the call has not ended here\",\"execution_id\":\"exe_1\"}}\n\n",
		"cut":   "",
	}
	for name, end := range ends {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("X-Crtx-Execution-Id", "exe_1")
			fmt.Fprint(w, "id: 1\nevent: delta\ndata: {\"text\":\"Bon\"}\n\n"+end)
		}))
		var got []string
		_, err := client.New(srv.URL, "crtx_test_x").ExecuteStream(context.Background(), "agt_1", crtx.ExecuteParams{Task: "x"},
			client.ExecuteOptions{}, func(text string) { got = append(got, text) })
		srv.Close()
		if len(got) != 1 || got[0] != "Bon" {
			t.Errorf("%s: pieces %q", name, got)
		}
		var ce *client.Error
		var cut *client.StreamCut
		switch {
		case name == "error" && (!errors.As(err, &ce) || ce.Code != crtx.CodeUnavailable || ce.ExecutionID == nil || *ce.ExecutionID != "exe_1"):
			t.Errorf("an error event: %v", err)
		case name == "cut" && (!errors.As(err, &cut) || cut.ExecutionID != "exe_1" || cut.LastEventID != 1):
			t.Errorf("a cut stream: %v", err)
		}
	}
}
