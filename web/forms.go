package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// formTTL is how long a served form may be sent.
const formTTL = 12 * time.Hour

// formKey signs the forms served in one session: the session's own secret
// token (a wallet's, or the operator's). A form's token can then be known
// only to a page of this site served in that session.
type formKey string

// token is a new one-time value for one form: when it was served, a nonce,
// and a MAC of both under the session.
func (k formKey) token(now time.Time) string {
	if k == "" {
		return ""
	}
	head := strconv.FormatInt(now.Unix(), 10) + "." + crtx.RandomBase62(16)
	return head + "." + k.mac(head)
}

func (k formKey) mac(head string) string {
	m := hmac.New(sha256.New, []byte("crtx-form:"+string(k)))
	m.Write([]byte(head))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// bound is a key for the forms of one thing, named by parts: a token it
// signs is refused for any other, even in the same session (a consent
// form's token, for another authorization request).
func (k formKey) bound(parts ...string) formKey {
	if k == "" {
		return ""
	}
	return formKey(k.mac("bound\x00" + strings.Join(parts, "\x00")))
}

// check returns the nonce of a token k issued less than formTTL ago.
func (k formKey) check(token string, now time.Time) (string, error) {
	parts := strings.Split(token, ".")
	if k == "" || len(parts) != 3 || !hmac.Equal([]byte(k.mac(parts[0]+"."+parts[1])), []byte(parts[2])) {
		return "", crtx.Errorf(crtx.CodeInvalidSession, "this form was not served in your current session (it may be from before you signed in again, or from another site)")
	}
	served, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || now.Sub(time.Unix(served, 0)) > formTTL {
		return "", crtx.Errorf(crtx.CodeInvalidSession, "this form was opened more than %d hours ago", int(formTTL.Hours()))
	}
	return parts[1], nil
}

// visit is who looks at a page: the signed-in wallet (or the operator),
// and the key that signs the page's forms.
type visit struct {
	Wallet string
	key    formKey
	// at is when the visit is, by the market's clock: the time its forms'
	// tokens are issued and checked at.
	at time.Time
}

// owner is who the visitor's forms belong to: the wallet, or the operator
// (a session without a wallet); "" for a visitor without a session.
func (v visit) owner() string {
	if v.Wallet == "" && v.key != "" {
		return crtx.OperatorOwner
	}
	return v.Wallet
}

// page is a page for the visitor.
func (v visit) page(title string, data any) page {
	return page{Title: title, Wallet: v.Wallet, key: v.key, at: v.at, Data: data}
}

// outcome is what a sent form led to, kept with the form and shown on the
// page it lands on: by that page, and again to any replay of the form.
type outcome struct {
	Landing string `json:"landing"`
	Notice  string `json:"notice,omitempty"`
	Error   string `json:"error,omitempty"`
	// Form holds the values as typed, for a form shown again to be mended,
	// and Fields what is wrong with each field at fault.
	Form   map[string]string `json:"form,omitempty"`
	Fields map[string]string `json:"fields,omitempty"`
	Report *api.TestReport   `json:"report,omitempty"`
	// Key is the id of the API key the form made, whose secret its page
	// shows once.
	Key string `json:"key,omitempty"`
	// Withdrawal is the withdrawal the form asked for: its notice that it
	// is on its way goes once it is final.
	Withdrawal string `json:"withdrawal,omitempty"`
}

// replayWait is how long a replay waits for the first sending to finish.
const replayWait = 10 * time.Second

// action serves a form's POST. It checks the form's token, runs act at
// most once per token, keeps what act led to and sends the browser on
// (303) to the page that shows it, whose address stays harmless to reload:
// the outcome's Landing, by default the form's own page (formPage). A
// replay (Back and send again, a double click) runs nothing: it is sent to
// the same page, with the first sending's outcome.
func (h *Handler) action(who func(*http.Request) (visit, error),
	act func(w http.ResponseWriter, r *http.Request, v visit) (outcome, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		home := formPage(r.URL.Path)
		v, err := who(r)
		if err != nil {
			return h.signedIn(w, r, err)
		}
		nonce, err := v.key.check(r.PostFormValue("csrf"), v.at)
		if err != nil {
			return err
		}
		first, err := h.market.Accounts.ClaimForm(r.Context(), v.owner(), nonce)
		if err != nil {
			return err
		}
		if !first {
			return h.replay(w, r, v, nonce, home)
		}
		// Once claimed, the action and its outcome are seen through even if
		// the browser goes away: a claim without an outcome would leave
		// the form's page waiting for good.
		r = r.WithContext(context.WithoutCancel(r.Context()))
		out, err := act(w, r, v)
		if err != nil && isUserError(err) {
			out.Error, err = message(err), nil
		}
		if err != nil {
			h.logInternal(w, r, err)
			out = outcome{Error: "Something went wrong on our side, and this may not have been done: look at the page before you send it again."}
		}
		if out.Error != "" {
			out.Notice = ""
		}
		if out.Landing == "" {
			out.Landing = home
		}
		b, err := json.Marshal(out)
		if err == nil {
			err = h.market.Accounts.SetFormOutcome(r.Context(), v.owner(), nonce, b)
		}
		if err != nil {
			return err
		}
		http.Redirect(w, r, landing(out.Landing, nonce), http.StatusSeeOther)
		return nil
	}
}

// replay answers a form sent again: once the first sending has finished,
// with the page it landed on.
func (h *Handler) replay(w http.ResponseWriter, r *http.Request, v visit, nonce, home string) error {
	deadline := time.Now().Add(replayWait)
	for {
		f, err := h.market.Accounts.SentForm(r.Context(), v.owner(), nonce)
		if err != nil && !errors.Is(err, crtx.ErrNotFound) {
			return err
		}
		var out outcome
		if f.Outcome != nil && json.Unmarshal(f.Outcome, &out) == nil && out.Landing != "" {
			home = out.Landing
		}
		if f.Outcome != nil || time.Now().After(deadline) {
			http.Redirect(w, r, landing(home, nonce), http.StatusSeeOther)
			return nil
		}
		select {
		case <-r.Context().Done():
			return r.Context().Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// landing is the address of a page that shows a form's outcome: the
// page's own, with ?sent= naming the form (before any #fragment).
func landing(page, nonce string) string {
	path, frag, _ := strings.Cut(page, "#")
	u, err := url.Parse(path)
	if err != nil {
		return "/"
	}
	q := u.Query()
	q.Set("sent", nonce)
	u.RawQuery = q.Encode()
	if frag != "" {
		return u.String() + "#" + frag
	}
	return u.String()
}

// formWork is longer than a form's action can run: the longest, a run from
// the agent page, waits at most an agent's longest timeout (300 s). A form
// without an outcome after that was cut off, as when the marketplace
// stopped.
const formWork = 10 * time.Minute

// outcome reads what the form named by ?sent= led to, if the visitor sent
// it; a form still at work says so, and one cut off says that its outcome
// is unknown.
func (h *Handler) outcome(r *http.Request, v visit) outcome {
	nonce := r.URL.Query().Get("sent")
	if nonce == "" || v.owner() == "" {
		return outcome{}
	}
	f, err := h.market.Accounts.SentForm(r.Context(), v.owner(), nonce)
	var out outcome
	switch {
	case err != nil:
	case f.Outcome == nil && v.at.Sub(f.SentAt) > formWork:
		out.Error = "This form was received at " + f.SentAt.UTC().Format("2006-01-02 15:04 UTC") + ", but how it ended was not recorded: the marketplace stopped while it ran. Look at this page to see whether it was done before you send it again."
	case f.Outcome == nil:
		out.Notice = "This is still being done: reload the page in a moment to see how it went."
	default:
		json.Unmarshal(f.Outcome, &out)
	}
	return out
}

// with is p showing the outcome o.
func (p page) with(o outcome) page {
	p.Notice, p.Error = o.Notice, o.Error
	return p
}

// mendFields is what a form refused for its fields says at the top.
const mendFields = "Nothing was saved: mend the fields marked below."

// refused is the outcome of a form the marketplace refused, shown again as
// typed on landing: each field at fault with its own words beside it, or
// else the refusal at the top.
func refused(err error, form map[string]string, landing string) outcome {
	out := outcome{Form: form, Landing: landing, Fields: map[string]string{}}
	var each func(error)
	each = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, err := range j.Unwrap() {
				each(err)
			}
			return
		}
		var e *crtx.Error
		if errors.As(err, &e) {
			if _, shown := form[e.Field]; shown {
				if out.Fields[e.Field] == "" { // the first fault found is the one to mend first
					out.Fields[e.Field] = sentence(strings.TrimPrefix(e.Message, e.Field+": "))
				}
				return
			}
		}
		if out.Error == "" {
			out.Error = message(err)
		}
	}
	each(err)
	if out.Error == "" && len(out.Fields) > 0 {
		out.Error = mendFields
	}
	return out
}
