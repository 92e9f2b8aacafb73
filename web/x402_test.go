package web_test

import (
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// An agent of a marketplace with a chain offers to be paid per call with
// x402: the page says a failed call costs nothing, and its snippets (the
// official TypeScript and Python clients, and the command line) name this
// agent's execute URL; the TypeScript and Python programs parse. Without a
// chain the page offers none.
func TestAgentPagePayPerCallWithX402(t *testing.T) {
	m := marketOnChain(t)
	id := greeter(t, m.Daemon)
	page := get(t, m.URL+"/agents/"+id)
	pre := func(name string) string {
		t.Helper()
		got := regexp.MustCompile(`(?s)<pre tabindex="0" id="` + name + `">(.*?)</pre>`).FindStringSubmatch(page)
		if got == nil {
			t.Fatalf("the agent page has no <pre id=%q>", name)
		}
		return html.UnescapeString(got[1])
	}
	url := m.URL + "/v1/agents/" + id + "/execute"
	if !strings.Contains(page, `<h2 id="x402">Pay per call with x402</h2>`) || !strings.Contains(page, "a call that fails costs nothing") {
		t.Fatal("the page offers no x402 payment")
	}
	fetch, python, cli := pre("x402-fetch"), pre("x402-python"), pre("x402-cli")
	for name, s := range map[string]string{"fetch": fetch, "python": python} {
		if !strings.Contains(s, url) {
			t.Errorf("the %s snippet does not call %s:\n%s", name, url, s)
		}
	}
	if !strings.Contains(fetch, "wrapFetchWithPayment") || !strings.Contains(python, "wrapRequestsWithPayment") ||
		!strings.HasPrefix(cli, "crtx run "+id+" ") || !strings.Contains(cli, "--x402 --keypair payer.json --rpc ") {
		t.Errorf("snippets:\n%s\n%s\n%s", fetch, python, cli)
	}
	dir := t.TempDir()
	for file, src := range map[string]string{"pay.mjs": fetch, "pay.py": python} {
		os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644)
	}
	if out, err := exec.Command("node", "--check", filepath.Join(dir, "pay.mjs")).CombinedOutput(); err != nil {
		t.Errorf("the TypeScript snippet does not parse: %v\n%s", err, out)
	}
	if out, err := exec.Command("python3", "-m", "py_compile", filepath.Join(dir, "pay.py")).CombinedOutput(); err != nil {
		t.Errorf("the Python snippet does not parse: %v\n%s", err, out)
	}

	d := market(t)
	if page := get(t, d.URL+"/agents/"+greeter(t, d)); strings.Contains(page, `id="x402"`) {
		t.Error("a marketplace without a chain offers x402")
	}
}

// get reads a page that must answer 200.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, b)
	}
	return string(b)
}
