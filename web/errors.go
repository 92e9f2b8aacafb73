package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// problem is an error page: what happened, in plain words, and where to
// go next.
type problem struct {
	Heading, Text string
	Next          []link
	RequestID     string
}

type link struct{ Href, Label string }

// guided is an error whose page says more than its message, and offers
// ways on that only the page that failed knows of.
type guided struct {
	error
	text string
	next []link
}

func (g *guided) Unwrap() error { return g.error }

// notFound names what a page looked for, by the code of its absence.
var notFound = map[string]string{
	crtx.CodeAgentNotFound: "No such agent", crtx.CodeExecutionNotFound: "No such execution",
	crtx.CodeTransactionNotFound: "No such transaction", crtx.CodeAccountNotFound: "No such account",
	crtx.CodeBlockNotFound: "No such block", crtx.CodeKeyNotFound: "No such key",
	crtx.CodeDisputeNotFound: "No such dispute", crtx.CodeDepositNotFound: "No such request to add funds",
	crtx.CodeNotFound: "Nothing here",
}

// human serves a page's error as a page for people, in the site's
// layout, never as the API's JSON. An internal error is logged with the
// request id, which the page gives to quote, and its text is not shown.
func (h *Handler) human(next func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		err := next(w, r)
		if err == nil {
			return nil
		}
		var status int
		p := problem{Next: []link{{"/", "Browse the agents"}}}
		var e *crtx.Error
		switch {
		case !errors.As(err, &e):
			p.RequestID = h.logInternal(w, r, err)
			status, p.Heading = http.StatusInternalServerError, "Something went wrong on our side"
			p.Text = "Nothing you did caused it. Try again in a minute; if it keeps happening, tell the operator the request id below."
		case notFound[e.Code] != "":
			status, p.Heading, p.Text = http.StatusNotFound, notFound[e.Code], sentence(e.Message)
		case e.Code == crtx.CodeInvalidSession:
			status, p.Heading = http.StatusForbidden, "This form was not sent"
			p.Text = sentence(e.Message) + " Nothing was done: open the page again and send the form from there."
			p.Next = []link{{formPage(r.URL.Path), "Open the page again"}}
		case e.Code == crtx.CodeUnavailable:
			// Its message speaks to programs (Idempotency-Key, retry).
			status, p.Heading = api.Status(e), "The marketplace is busy"
			p.Text = "Nothing was changed. Try again in a few seconds."
		default:
			status, p.Heading, p.Text = api.Status(e), "That did not work", sentence(e.Message)
		}
		if e != nil && e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		}
		if g := (*guided)(nil); errors.As(err, &g) {
			p.Text = strings.TrimSpace(p.Text + " " + g.text)
			p.Next = append(g.next, p.Next...)
		}
		v := h.visitor(r)
		return h.renderStatus(w, status, "error", v.page(p.Heading+" — crtx", p))
	}
}

// sentence is an API message as a sentence: capitalised, with its stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// logInternal logs an error that is not the person's to act on, with the
// request id it answers under, and returns that id.
func (h *Handler) logInternal(w http.ResponseWriter, r *http.Request, err error) string {
	id := w.Header().Get("X-Request-Id")
	h.log.ErrorContext(r.Context(), "internal error", "request_id", id, "err", err)
	return id
}

// NotFound is the page of a wrong address outside the programs' paths:
// the site's layout with a way back that fits where the person was.
func (h *Handler) NotFound(w http.ResponseWriter, r *http.Request) {
	p := problem{Heading: "No page here", Text: "There is no page at this address. It may have been mistyped, or the page has moved."}
	for _, way := range []struct{ prefix, href, label string }{
		{"/dashboard", "/dashboard/", "Go to your dashboard"}, {"/explorer", "/explorer/", "Go to the explorer"},
		{"/docs", "/docs", "Read the API docs"}, {"/login", "/login", "Sign in"},
	} {
		if strings.HasPrefix(r.URL.Path, way.prefix) {
			p.Next = append(p.Next, link{way.href, way.label})
		}
	}
	p.Next = append(p.Next, link{"/", "Browse the agents"})
	if err := h.renderStatus(w, http.StatusNotFound, "error", h.visitor(r).page(p.Heading+" — crtx", p)); err != nil {
		h.logInternal(w, r, err)
		http.Error(w, "no page here", http.StatusNotFound)
	}
}
