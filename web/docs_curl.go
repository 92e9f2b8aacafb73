package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/crtx-market/crtx/shell"
)

// credential is how the page names a security scheme of the document, and
// the shell variable its curl lines read the secret from: the variables
// are those the crtx command line reads, plus two for what it keeps to
// itself.
func credential(scheme string) (name, variable string, err error) {
	switch scheme {
	case "apiKey":
		return "API key", "CRTX_API_KEY", nil
	case "session":
		return "session token", "CRTX_SESSION", nil
	case "adminToken":
		return "admin token", "CRTX_ADMIN_TOKEN", nil
	case "signInWithX":
		// Sent as its own header, never as the first way: the curl
		// lines use the API key.
		return "sign-in-with-x proof of the wallet that paid", "CRTX_SIWX", nil
	}
	return "", "", fmt.Errorf("security scheme %q has no shell variable for its curl lines", scheme)
}

// curlLine is the request of an operation's examples as a curl command
// against the marketplace at base. security is the first way the
// operation accepts to authenticate, empty for none.
func curlLine(base, method, path string, op operation, security string, stream bool) (string, error) {
	var query []string
	var headers []string
	for _, p := range op.Parameters {
		if p.Example == nil {
			if p.In == "path" {
				return "", fmt.Errorf("path parameter %s has no example", p.Name)
			}
			continue
		}
		v := exampleText(p.Example)
		switch p.In {
		case "path":
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(v))
		case "query":
			query = append(query, url.QueryEscape(p.Name)+"="+url.QueryEscape(v))
		case "header":
			headers = append(headers, shell.Quote(p.Name+": "+v))
		}
	}
	u := base + path
	if len(query) > 0 {
		u = shell.Quote(u + "?" + strings.Join(query, "&"))
	}
	args := []string{"curl"}
	if stream {
		args[0] += " -N" // print each event as it comes
	}
	args[0] += " " + u
	var body json.RawMessage
	if op.RequestBody != nil && len(op.RequestBody.Content) > 0 {
		mt := op.RequestBody.Content[0]
		body = mt.Value.Example
		headers = append(headers, shell.Quote("Content-Type: "+mt.Key))
	}
	if method != "GET" && (method != "POST" || body == nil) {
		args = append(args, "-X "+method)
	}
	if security != "" {
		_, variable, err := credential(security)
		if err != nil {
			return "", err
		}
		// Double quotes: the shell fills in the variable.
		args = append(args, `-H "Authorization: Bearer $`+variable+`"`)
	}
	for _, h := range headers {
		args = append(args, "-H "+h)
	}
	switch {
	case body != nil && op.RequestBody.Content[0].Key == "application/x-www-form-urlencoded":
		form, err := formBody(body)
		if err != nil {
			return "", err
		}
		args = append(args, "-d "+shell.Quote(form))
	case body != nil:
		args = append(args, "-d "+shell.Quote(indent(body)))
	}
	return strings.Join(args, " \\\n  "), nil
}

// formBody is a form's example, a JSON object of strings, as the form
// it stands for.
func formBody(example json.RawMessage) (string, error) {
	var fields map[string]string
	if err := json.Unmarshal(example, &fields); err != nil {
		return "", fmt.Errorf("a form's example must be an object of strings: %w", err)
	}
	form := url.Values{}
	for k, v := range fields {
		form.Set(k, v)
	}
	return form.Encode(), nil
}

// exampleText is an example value as it goes into a URL or header: a
// string without its quotes, anything else as written. The document was
// decoded already, so raw is valid JSON.
func exampleText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

// indent lays an example out for reading, in the document's key order.
func indent(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s // a text body: shown as the bytes it is
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}
