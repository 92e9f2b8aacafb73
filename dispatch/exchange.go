package dispatch

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// shownBytes is how much of an answer's body an exchange shows: enough for
// an error page or a reply's start, not a whole result.
const shownBytes = 4 << 10

// recordWait bounds the reading of a refused answer's body, which only the
// exchange shows: a service that answers 500 and then holds the connection
// does not hold the test until its deadline.
const recordWait = 2 * time.Second

// sent writes a request as HTTP/1.1 text, body included, with the
// Accept-Encoding the transport adds to it.
func sent(r *http.Request, body []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\nHost: %s\n", r.Method, r.URL.RequestURI(), r.URL.Host)
	h := r.Header.Clone()
	if h.Get("Accept-Encoding") == "" {
		h.Set("Accept-Encoding", "gzip")
	}
	writeHeaders(&b, h)
	fmt.Fprintf(&b, "Content-Length: %d\n\n", len(body))
	b.WriteString(shown(body, true))
	return b.String()
}

// received writes an answer's status line, headers and the first
// shownBytes of body, as far as it was read (whole: to its end).
func received(r *http.Response, body []byte, whole bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Proto, r.Status)
	writeHeaders(&b, r.Header)
	if r.Uncompressed {
		// The transport took the header off as it decompressed the body.
		b.WriteString("Content-Encoding: gzip (the body below is decompressed)\n")
	}
	b.WriteString("\n")
	b.WriteString(shown(body, whole))
	return b.String()
}

// writeHeaders writes h in name order, one line a value.
func writeHeaders(w io.Writer, h http.Header) {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			fmt.Fprintf(w, "%s: %s\n", k, printable(v))
		}
	}
}

// shown is body cut to shownBytes on a character's boundary, printable:
// with how much more there was when the whole body was read, or that the
// rest was not read.
func shown(body []byte, whole bool) string {
	cut := len(body)
	if cut > shownBytes {
		cut = shownBytes
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
	}
	out := printable(string(body[:cut]))
	switch {
	case cut < len(body) && whole:
		out += fmt.Sprintf("\n… (%d more bytes)", len(body)-cut)
	case !whole:
		out += "\n… (the rest was not read)"
	}
	return out
}

// printable is s as valid UTF-8 without control characters but line ends
// and tabs: an endpoint's answer is shown in pages and printed on
// terminals, where an escape sequence would act.
func printable(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

// unreachable says why nothing answered, in words that name no address or
// resolver ("" when the cause is none of the usual ones): a creator
// testing an endpoint, or reading a failed execution, needs more than
// "could not be reached".
func unreachable(err error) string {
	var dns *net.DNSError
	var authority x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection was reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "there is no route to the host"
	case errors.As(err, &dns) && dns.IsNotFound:
		return "the host name does not exist"
	case errors.As(err, &dns):
		return "the host name could not be resolved"
	case errors.As(err, &authority):
		return "its TLS certificate is signed by an authority that is not trusted"
	case errors.As(err, &host):
		return "its TLS certificate is not for this host name"
	case errors.As(err, &invalid):
		return "its TLS certificate is not valid (expired, not yet valid or not for serving)"
	case errors.As(err, &record):
		return "it does not answer TLS"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed before an answer"
	}
	return ""
}
