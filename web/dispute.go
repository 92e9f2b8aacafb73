package web

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
)

// disputeReasons are the reasons a caller gives, as the pages say them.
var disputeReasons = []struct{ Value, Label string }{
	{"hash_mismatch", "The result does not match its hash or signature"},
	{"fraud", "The result is not what was asked, or is made up"},
	{"other", "Something else"},
}

// reasonLabel is a dispute reason in words.
func reasonLabel(reason string) string {
	if i := slices.IndexFunc(disputeReasons, func(r struct{ Value, Label string }) bool { return r.Value == reason }); i >= 0 {
		return disputeReasons[i].Label
	}
	return reason
}

// evidenceField is one member of a dispute's evidence, as a page lists it.
type evidenceField struct{ Name, Value string }

// evidenceFields lists a dispute's evidence object member by member, in
// the order of their names; the form's own fields under their labels.
func evidenceFields(raw json.RawMessage) []evidenceField {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	labels := map[string]string{"expected": "What was expected", "link": "Link"}
	var out []evidenceField
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range obj {
			if !yield(k) {
				return
			}
		}
	}) {
		name := labels[k]
		if name == "" {
			name = k
		}
		out = append(out, evidenceField{name, shown(obj[k])})
	}
	return out
}

// disputeData is what an execution's page shows of its dispute, or how to
// open one.
type disputeData struct {
	Dispute *api.DisputeInfo
	// Until is when the window to report a problem closes; zero when the
	// execution cannot be disputed (not completed, or disputed already).
	Until   time.Time
	Reasons []struct{ Value, Label string }
	Form    map[string]string
	Fields  map[string]string
}

// Open says a problem can still be reported.
func (d disputeData) Open(now time.Time) bool { return !d.Until.IsZero() && now.Before(d.Until) }

// disputeOf is the dispute part of an execution's page.
func disputeOf(e crtx.Execution, out outcome) disputeData {
	d := disputeData{Reasons: disputeReasons, Form: out.Form, Fields: out.Fields}
	if e.Dispute != nil {
		info := api.NewDisputeInfo(*e.Dispute)
		d.Dispute = &info
	} else if e.Status == crtx.ExecCompleted && e.CompletedAt != nil {
		d.Until = e.CompletedAt.Add(crtx.DisputeWindow)
	}
	return d
}

// reportProblem opens a dispute of one of the wallet's completed
// executions, from its page: the reason, a description and evidence as
// fields, which the marketplace keeps as a JSON object.
func (h *Handler) reportProblem(w http.ResponseWriter, r *http.Request, v visit) (outcome, error) {
	id := r.PathValue("id")
	e, _, err := h.ownExecution(r.Context(), v.Wallet, id)
	if err != nil {
		return outcome{}, err
	}
	form := map[string]string{}
	for _, f := range []string{"reason", "description", "expected", "link"} {
		form[f] = strings.TrimSpace(r.PostFormValue(f))
	}
	page := "/dashboard/executions/" + id + "#dispute"
	evidence := map[string]string{}
	for _, f := range []string{"expected", "link"} {
		if form[f] != "" {
			evidence[f] = form[f]
		}
	}
	if l := form["link"]; l != "" && !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "http://") {
		return refused(crtx.InvalidField("link", "a web address, starting with https://"), form, page), nil
	}
	raw, _ := json.Marshal(evidence)
	_, err = h.market.Disputes.OpenDispute(r.Context(), crtx.Principal{Wallet: v.Wallet, Key: &crtx.APIKey{Environment: e.Environment}}, id,
		crtx.DisputeParams{Reason: form["reason"], Description: form["description"], Evidence: raw})
	if isUserError(err) {
		return refused(err, form, page), nil
	}
	if err != nil {
		return outcome{}, err
	}
	return outcome{Notice: "Problem reported. The creator has until the date below to answer; the operator then rules, and an upheld dispute refunds what the operator decides.",
		Landing: page}, nil
}
