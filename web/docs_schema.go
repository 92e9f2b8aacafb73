package web

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Schemas render as tables of fields whose types link to the schemas they
// name, so that a reader follows a $ref with one click instead of
// searching raw JSON for it.

// typePart is a piece of a rendered type: plain text, or the name of a
// schema the page links to.
type typePart struct{ Text, Ref string }

type docField struct {
	Name, Description, Notes string
	Type                     []typePart
	Required                 bool
}

type docSchema struct {
	Name, Description string
	// Base are the schemas whose fields this one has too (allOf).
	Base   []typePart
	Fields []docField
}

// typeOf renders a schema's type, such as "array of Agent" with Agent a link.
func typeOf(s *schema) ([]typePart, error) {
	if s == nil {
		return []typePart{{Text: "any"}}, nil
	}
	if s.Ref != "" {
		name, err := refName(s.Ref, "schemas")
		return []typePart{{Ref: name}}, err
	}
	for _, alts := range []struct {
		sep     string
		schemas []*schema
	}{{" or ", s.OneOf}, {" or ", s.AnyOf}, {" and ", s.AllOf}} {
		if len(alts.schemas) > 0 {
			return joinTypes(alts.sep, alts.schemas)
		}
	}
	var parts []typePart
	for _, t := range s.Type {
		if len(parts) > 0 {
			parts = append(parts, typePart{Text: " or "})
		}
		switch {
		case t == "array":
			items, err := typeOf(s.Items)
			if err != nil {
				return nil, err
			}
			parts = append(append(parts, typePart{Text: "array of "}), items...)
		case t == "object" && len(s.Properties) == 0 && isSchema(s.AdditionalProperties):
			var values schema
			if err := json.Unmarshal(s.AdditionalProperties, &values); err != nil {
				return nil, fmt.Errorf("additionalProperties: %w", err)
			}
			v, err := typeOf(&values)
			if err != nil {
				return nil, err
			}
			parts = append(append(parts, typePart{Text: "map of "}), v...)
		default:
			parts = append(parts, typePart{Text: t})
		}
	}
	if len(parts) == 0 {
		parts = []typePart{{Text: "any"}}
	}
	return parts, nil
}

func joinTypes(sep string, schemas []*schema) ([]typePart, error) {
	var parts []typePart
	for i, s := range schemas {
		t, err := typeOf(s)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			parts = append(parts, typePart{Text: sep})
		}
		parts = append(parts, t...)
	}
	return parts, nil
}

func isSchema(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '{'
}

// fieldsOf lists an object schema's properties, and those of the objects
// it holds inline as "parent.child" (or "parent[].child" in arrays):
// inline objects have no section of their own to link to.
func fieldsOf(prefix string, s *schema) ([]docField, error) {
	var out []docField
	for _, p := range s.Properties {
		t, err := typeOf(p.Value)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", prefix, p.Key, err)
		}
		f := docField{Name: prefix + p.Key, Type: t, Required: slices.Contains(s.Required, p.Key),
			Description: p.Value.Description, Notes: notes(p.Value)}
		out = append(out, f)
		if in, suffix := inlineObject(p.Value); in != nil {
			nested, err := fieldsOf(f.Name+suffix+".", in)
			if err != nil {
				return nil, err
			}
			out = append(out, nested...)
		}
	}
	return out, nil
}

// inlineObject is the object with properties that s holds without a $ref:
// itself, its items, or one of its alternatives (an object or null).
func inlineObject(s *schema) (*schema, string) {
	switch {
	case s.Ref != "":
		return nil, ""
	case len(s.Properties) > 0:
		return s, ""
	case s.Items != nil && s.Items.Ref == "" && len(s.Items.Properties) > 0:
		return s.Items, "[]"
	}
	for _, alt := range slices.Concat(s.OneOf, s.AnyOf) {
		if alt.Ref == "" && len(alt.Properties) > 0 {
			return alt, ""
		}
	}
	return nil, ""
}

// notes are a field's constraints: its values, format, default and bounds.
func notes(s *schema) string {
	var n []string
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = fmt.Sprint(v)
		}
		n = append(n, "one of: "+strings.Join(vals, ", "))
	}
	if s.Format != "" {
		n = append(n, "format: "+s.Format)
	}
	if s.Default != nil {
		b, _ := json.Marshal(s.Default)
		n = append(n, "default: "+string(b))
	}
	if s.Pattern != "" {
		n = append(n, "pattern: "+s.Pattern)
	}
	bound := func(name string, v *float64) {
		if v != nil {
			n = append(n, name+": "+strconv.FormatFloat(*v, 'f', -1, 64))
		}
	}
	bound("minimum", s.Minimum)
	bound("maximum", s.Maximum)
	for _, l := range []struct {
		name string
		v    *int
	}{{"length at least", s.MinLength}, {"length at most", s.MaxLength}, {"at most items", s.MaxItems}} {
		if l.v != nil {
			n = append(n, l.name+" "+strconv.Itoa(*l.v))
		}
	}
	return strings.Join(n, "; ")
}

// componentSchema renders one schema of components/schemas. One that is
// not an object (an enum, say) is a table of one row for its value.
func componentSchema(name string, s *schema) (docSchema, error) {
	d := docSchema{Name: name, Description: s.Description}
	obj := s
	for _, part := range s.AllOf {
		if part.Ref != "" {
			t, err := typeOf(part)
			if err != nil {
				return d, err
			}
			d.Base = append(d.Base, t...)
		} else {
			obj = part
		}
	}
	if len(obj.Properties) > 0 {
		f, err := fieldsOf("", obj)
		d.Fields = f
		return d, err
	}
	if len(s.AllOf) > 0 {
		return d, nil
	}
	t, err := typeOf(s)
	d.Fields = []docField{{Name: "(value)", Type: t, Required: true, Notes: notes(s)}}
	return d, err
}
