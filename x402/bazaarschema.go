package x402

import (
	"bytes"
	"encoding/json"
	"strings"
)

// A resource's own schemas (its body's, its output's) stand inside the
// bazaar extension's schema, which clients compile as one draft 2020-12
// document: @x402/extensions' own validator (Ajv) refuses the whole
// extension if any $id or $ref leads outside it, and resolves "#/…" from
// the extension's root, not the embedded schema's. So an embedded schema's
// $schema and $id go, its local references are rewritten to where it now
// stands, and a schema that still cannot stand there (a reference outside
// itself, an older draft's form that 2020-12 refuses) is left out.

// EmbedSchema is raw without its $schema and $id, its local references
// rewritten to stand at the pointer at; alone is the same schema with its
// references as they were, to compile by itself. ok is false when a
// reference or $id would still lead outside the document.
func EmbedSchema(raw json.RawMessage, at string) (v any, alone json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, false
	}
	if obj, isObj := v.(map[string]any); isObj {
		delete(obj, "$schema")
		delete(obj, "$id")
	}
	alone, err := json.Marshal(v)
	if err != nil {
		return nil, nil, false
	}
	rewriteRefs(v, at)
	return v, alone, !external(v)
}

// rewriteRefs prefixes every "#" and "#/…" $ref of schema v with at,
// leaving instances (const, enum, default, examples) as they are.
func rewriteRefs(v any, at string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "$ref":
				if ref, ok := x.(string); ok && (ref == "#" || strings.HasPrefix(ref, "#/")) {
					v[k] = at + ref[1:]
				}
			case "const", "enum", "default", "examples", "example":
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				// Names, each of a schema.
				if named, ok := x.(map[string]any); ok {
					for _, s := range named {
						rewriteRefs(s, at)
					}
				}
			default:
				rewriteRefs(x, at)
			}
		}
	case []any:
		for _, x := range v {
			rewriteRefs(x, at)
		}
	}
}

// external reports what @x402/extensions' validator refuses: a $ref or
// $id anywhere in v, instances included, that is not a string starting
// with "#".
func external(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); (k == "$ref" || k == "$id") && (!ok || !strings.HasPrefix(s, "#")) {
				return true
			}
			if external(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if external(x) {
				return true
			}
		}
	}
	return false
}
