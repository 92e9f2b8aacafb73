package web

import (
	"bytes"
	"encoding/json"
	"strconv"
)

func jsonIndent(b *bytes.Buffer, raw []byte) error { return json.Indent(b, raw, "", "  ") }

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
