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
	"unicode/utf8"
)

// shownBytes is how much of an answer's body an exchange shows: enough for
// an error page or a reply's start, not a whole result.
const shownBytes = 4 << 10

// sent writes a request as HTTP/1.1 puts it on the wire, body included.
func sent(r *http.Request, body []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\nHost: %s\n", r.Method, r.URL.RequestURI(), r.URL.Host)
	writeHeaders(&b, r.Header)
	fmt.Fprintf(&b, "Content-Length: %d\n\n", len(body))
	b.WriteString(shown(body))
	return b.String()
}

// received writes an answer's status line, headers and the first
// shownBytes of body (as far as it was read).
func received(r *http.Response, body []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Proto, r.Status)
	writeHeaders(&b, r.Header)
	b.WriteString("\n")
	b.WriteString(shown(body))
	return b.String()
}

func writeHeaders(w io.Writer, h http.Header) {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			fmt.Fprintf(w, "%s: %s\n", k, v)
		}
	}
}

// shown is body cut to shownBytes, on a character's boundary, as valid
// UTF-8 (a binary answer is shown as replacement characters).
func shown(body []byte) string {
	if len(body) <= shownBytes {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	cut := shownBytes
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(body[:cut]), "\uFFFD") + fmt.Sprintf("\n… (%d more bytes)", len(body)-cut)
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
