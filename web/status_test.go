package web

import (
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crtx-market/crtx"
)

// An error page answers with the status the REST interface gives the same
// error, so a page's 503 or 429 reads as one to a browser, a crawler or a
// monitor, with Retry-After where the error has one; an internal error's
// text is withheld, and a busy marketplace speaks to people, not programs.
func TestErrorPageStatuses(t *testing.T) {
	h := &Handler{pages: map[string]*template.Template{"error": parsePage("error")}, log: slog.New(slog.DiscardHandler)}
	for _, c := range []struct {
		err    error
		status int
		shown  string
	}{
		{crtx.Errorf(crtx.CodeInvalidRequest, "height must be a number"), 400, "Height must be a number."},
		{crtx.Errorf(crtx.CodeAgentNotFound, "no agent x"), 404, "No agent x."},
		{crtx.Errorf(crtx.CodePriceChanged, "the price changed"), 409, "The price changed."},
		{crtx.Errorf(crtx.CodeRateLimited, "slow down"), 429, "Slow down."},
		{&crtx.Error{Code: crtx.CodeUnavailable, RetryAfter: 1, Message: "the marketplace is too busy to take this request now and changed nothing; retry in a second (with the same Idempotency-Key, the retry is safe)"},
			503, "Nothing was changed. Try again in a few seconds."},
		{errors.New("disk on fire"), 500, "tell the operator the request id"},
	} {
		w := httptest.NewRecorder()
		h.human(func(http.ResponseWriter, *http.Request) error { return c.err })(w, httptest.NewRequest("GET", "/agents/x", nil))
		body := w.Body.String()
		if w.Code != c.status || !strings.Contains(body, c.shown) || strings.Contains(body, "disk on fire") || strings.Contains(body, "Idempotency-Key") {
			t.Errorf("%v: %d, want %d showing %q", c.err, w.Code, c.status, c.shown)
		}
		if retry := w.Header().Get("Retry-After"); (c.status == 503) != (retry == "1") {
			t.Errorf("%v: Retry-After %q", c.err, retry)
		}
	}
}
