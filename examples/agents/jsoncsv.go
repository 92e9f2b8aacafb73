package agents

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/crtx-market/crtx/creator"
)

// JSONCSVInput and JSONCSVOutput are the schemas to list it with.
const JSONCSVInput = `{"type":"object","properties":{"direction":{"type":"string","enum":["json_to_csv","csv_to_json"]},"delimiter":{"type":"string","minLength":1,"maxLength":1}},"required":["direction"],"additionalProperties":false}`

const JSONCSVOutput = `{"type":"string","description":"the converted document"}`

type params struct {
	Direction string `json:"direction"`
	Delimiter string `json:"delimiter"`
}

// JSONCSV converts between a JSON array of objects and CSV with a header
// row. The task is the data; the parameter "direction" says which way
// ("json_to_csv" or "csv_to_json").
func JSONCSV(_ context.Context, r creator.Request) (string, int, error) {
	var p params
	if err := json.Unmarshal(r.Parameters, &p); err != nil {
		return "", 0, errors.New("parameters must be an object with direction")
	}
	delim := ','
	if p.Delimiter != "" {
		d, size := utf8.DecodeRuneInString(p.Delimiter)
		if size != len(p.Delimiter) || d == '"' || d == '\n' {
			return "", 0, errors.New("delimiter must be one character other than a quote or newline")
		}
		delim = d
	}
	switch p.Direction {
	case "json_to_csv":
		out, err := jsonToCSV(r.Task, delim)
		return out, 0, err
	case "csv_to_json":
		out, err := csvToJSON(r.Task, delim)
		return out, 0, err
	}
	return "", 0, fmt.Errorf("direction %q: use json_to_csv or csv_to_json", p.Direction)
}

// jsonToCSV writes one row per object; the header is every key seen, in
// order of first appearance. Nested values are written as JSON.
func jsonToCSV(data string, delim rune) (string, error) {
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	var rows []map[string]any
	if err := dec.Decode(&rows); err != nil {
		return "", errors.New("the task must be a JSON array of objects")
	}
	var header []string
	for _, row := range rows {
		keys := make([]string, 0, len(row))
		for k := range row {
			keys = append(keys, k)
		}
		slices.Sort(keys) // within an object, JSON keys have no order
		for _, k := range keys {
			if !slices.Contains(header, k) {
				header = append(header, k)
			}
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = delim
	w.Write(header)
	for _, row := range rows {
		rec := make([]string, len(header))
		for i, k := range header {
			rec[i] = cell(row[k])
		}
		w.Write(rec)
	}
	w.Flush()
	return buf.String(), w.Error()
}

func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return fmt.Sprint(v)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// csvToJSON reads a header row and answers an array of objects of strings.
func csvToJSON(data string, delim rune) (string, error) {
	r := csv.NewReader(strings.NewReader(data))
	r.Comma = delim
	recs, err := r.ReadAll()
	if err != nil {
		return "", fmt.Errorf("the task is not CSV: %v", err)
	}
	if len(recs) == 0 {
		return "[]", nil
	}
	out := make([]map[string]string, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		row := make(map[string]string, len(rec))
		for i, h := range recs[0] {
			row[h] = rec[i]
		}
		out = append(out, row)
	}
	b, err := json.Marshal(out)
	return string(b), err
}
