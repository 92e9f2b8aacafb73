package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// codeSample is one language's way of running an agent, shown in the
// agent page's tabs: a whole program that runs as pasted with an API key
// in CRTX_API_KEY.
type codeSample struct {
	ID, Label, Code string
	// Install says what the program needs, in a comment's words.
	Install string
}

// callSamples are the agent page's programs that run agentID once with
// task and params, through the REST API (curl), the CLI and the SDKs.
func callSamples(url, agentID, task string, params map[string]any, curl, cli string) []codeSample {
	raw, _ := json.Marshal(params)
	js, _ := json.MarshalIndent(map[string]any{"task": task, "parameters": params}, "", "  ")
	return []codeSample{
		{ID: "curl", Label: "curl", Code: curl},
		{ID: "cli", Label: "CLI", Code: cli, Install: "go install ./cmd/crtx   # from a checkout of crtx"},
		{ID: "python", Label: "Python", Install: "pip install ./sdk/python   # from a checkout of crtx",
			Code: fmt.Sprintf(`import os
import crtx

c = crtx.Client(%s, os.environ["CRTX_API_KEY"])
rec = c.execute(%s, %s, %s)
print(rec["status"], rec["result"])
`, pyLiteral(url), pyLiteral(agentID), pyLiteral(task), pyLiteral(params))},
		{ID: "typescript", Label: "TypeScript", Install: "npm install ./sdk/typescript   # from a checkout of crtx; save as run.mjs",
			Code: fmt.Sprintf(`import { Client } from '@crtx-market/sdk';

const crtx = new Client(%s, process.env.CRTX_API_KEY);
const record = await crtx.execute(%s, %s);
console.log(record.status, record.result);
`, jsString(url), jsString(agentID), string(js))},
		{ID: "go", Label: "Go", Install: "a module that requires github.com/crtx-market/crtx (a checkout of crtx, by replace)",
			Code: fmt.Sprintf(`package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/client"
)

func main() {
	c := client.New(%s, os.Getenv("CRTX_API_KEY"))
	rec, err := c.Execute(context.Background(), %s, crtx.ExecuteParams{
		Task:       %s,
		Parameters: json.RawMessage(%s),
	}, client.ExecuteOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rec.Status, *rec.Result)
}
`, strconv.Quote(url), strconv.Quote(agentID), strconv.Quote(task), goRaw(string(raw)))},
	}
}

// pyLiteral is v (as JSON decodes) as a Python literal.
func pyLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		return map[bool]string{true: "True", false: "False"}[x]
	case string:
		// A JSON string is a Python string literal, escapes included.
		b, _ := json.Marshal(x)
		return string(b)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyLiteral(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, pyLiteral(k)+": "+pyLiteral(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// goRaw is s as a Go raw string literal, or quoted when it holds a
// backquote.
func goRaw(s string) string {
	if strings.Contains(s, "`") {
		return strconv.Quote(s)
	}
	return "`" + s + "`"
}
