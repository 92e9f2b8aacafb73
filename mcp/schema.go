package mcp

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/crtx-market/crtx"
	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor infers a tool's JSON Schema from its Go type, told how the
// types with their own JSON encoding look on the wire: amounts are decimal
// numbers of USDC (not the int64 of micro-USDC inside), times RFC 3339
// strings, raw JSON any value.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[crtx.USDC]():       {Type: "number", Description: "USDC, up to 6 decimals"},
		reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		panic(err) // the tools' types are this package's own: a test runs every one
	}
	return s
}

// property returns the schema of one property, to add what struct tags
// cannot say (enums, bounds).
func property(s *jsonschema.Schema, name string) *jsonschema.Schema { return s.Properties[name] }

func ptr[T any](v T) *T { return &v }
