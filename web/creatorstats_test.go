package web_test

import (
	"io"
	"net/http"
	"regexp"
	"testing"
)

// The creator's listings show "—", not "0%" and "0", for the success rate
// and average time of an agent that never ran: 0% would say it failed
// every time.
func TestCreatorListingOfAnAgentThatNeverRan(t *testing.T) {
	d := market(t)
	id, session := greeterOf(t, d)
	req, _ := http.NewRequest("GET", d.URL+"/dashboard/creator?tab=listings", nil)
	req.AddCookie(&http.Cookie{Name: "crtx_session", Value: session})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !regexp.MustCompile(id).Match(b) || !regexp.MustCompile(`data-label="success">—</td><td class="num" data-label="latency">—</td>`).Match(b) {
		t.Errorf("the creator page shows no — for an agent that never ran:\n%s", b)
	}
}
