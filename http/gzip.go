package http

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
)

// acceptsGzip reports whether an Accept-Encoding header admits gzip
// (RFC 9110 §12.5.3): gzip or x-gzip listed with a weight above zero, or
// else * with a weight above zero.
func acceptsGzip(header string) bool {
	star := false
	for _, item := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(item, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "x-gzip" && coding != "*" {
			continue
		}
		ok := weightAboveZero(params)
		if coding != "*" {
			return ok
		}
		star = ok
	}
	return star
}

// weightAboveZero reads q= among a coding's parameters; without one the
// weight is 1, and a weight that does not parse admits nothing.
func weightAboveZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q > 0 && q <= 1
		}
	}
	return true
}

// gzipped compresses a body that is kept and served many times, so it
// spends the most time compressing for the smallest body.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// writeKept writes a kept JSON body, gzip-compressed when the client
// accepts it and that is smaller. A kept catalog page of 20 agents is
// ~5 KB: past net/http's 4 KiB connection buffer it leaves in two writes,
// compressed in one, and a client reads a quarter of the bytes.
func writeKept(w http.ResponseWriter, r *http.Request, b []byte, compressed func(func([]byte) []byte) ([]byte, error)) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Add("Vary", "Accept-Encoding")
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		gz, err := compressed(gzipped)
		if err != nil {
			return err
		}
		if len(gz) < len(b) {
			h.Set("Content-Encoding", "gzip")
			b = gz
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	return nil
}
