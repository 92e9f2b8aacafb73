package crtx

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
)

// The examples of RFC 8785 §3.2.2 (values) and §3.2.3 (sorting).
func TestCanonicalRFC8785Examples(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"values", `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"sorting", `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`, "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\"," +
			"\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"nested", ` { "b" : [ { "z": 1, "a": [] }, {} ], "a" : "" } `, `{"a":"","b":[{"a":[],"z":1},{}]}`},
		{"scalar", ` -0.0 `, `0`},
		{"escapes", `"\u001f\u007f\u2028\b\t\n\f\r\/"`, "\"\\u001f\u007f\u2028\\b\\t\\n\\f\\r/\""},
	} {
		got, err := CanonicalJSON([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %s, %v\nwant %s", tc.name, got, err, tc.want)
		}
	}
}

// RFC 8785 Appendix B: IEEE 754 doubles and their canonical text.
func TestCanonicalNumbersAppendixB(t *testing.T) {
	for _, tc := range []struct{ bits, want string }{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"},
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	} {
		raw, _ := hex.DecodeString(tc.bits)
		f := math.Float64frombits(binary.BigEndian.Uint64(raw))
		if got := ecmaNumber(f); got != tc.want {
			t.Errorf("%s: ecmaNumber = %s, want %s", tc.bits, got, tc.want)
		}
		// The same through the parser: Go's shortest text of f reads back as f.
		got, err := Canonical(f)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: Canonical = %s, %v; want %s", tc.bits, got, err, tc.want)
		}
	}
	// NaN and the infinities (7fffffffffffffff, 7ff0000000000000) have no
	// JSON form; a literal beyond a double's range has none either.
	for _, in := range []string{"1e400", "-1e309", "[1,2e999]"} {
		if _, err := CanonicalJSON([]byte(in)); !errors.Is(err, ErrNotCanonicalizable) {
			t.Errorf("%s: %v, want ErrNotCanonicalizable", in, err)
		}
	}
	if got, err := CanonicalJSON([]byte("1e-400")); err != nil || string(got) != "0" {
		t.Errorf("1e-400 (underflow) = %s, %v; want 0, as ECMAScript reads it", got, err)
	}
	if _, err := Canonical(math.Inf(1)); !errors.Is(err, ErrNotCanonicalizable) {
		t.Errorf("Canonical(+Inf) = %v", err)
	}
}

func TestCanonicalRefusesWhatIsNotIJSON(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`,
		`"\x"`, `"\u12"`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"a` + "\x01" + `"`, "\"\xff\"", `"abc`,
		`{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `1 2`, `[1] x`, `NaN`, `Infinity`,
	} {
		if out, err := CanonicalJSON([]byte(in)); !errors.Is(err, ErrNotCanonicalizable) {
			t.Errorf("%q: %s, %v; want ErrNotCanonicalizable", in, out, err)
		}
	}
	deep := make([]byte, 0, 2*(maxCanonicalDepth+2))
	for range maxCanonicalDepth + 2 {
		deep = append(deep, '[')
	}
	for range maxCanonicalDepth + 2 {
		deep = append(deep, ']')
	}
	if _, err := CanonicalJSON(deep); !errors.Is(err, ErrNotCanonicalizable) {
		t.Errorf("nesting past the limit: %v", err)
	}
}

// Go values canonicalize as the JSON encoding/json makes of them.
func TestCanonicalGoValues(t *testing.T) {
	type row struct {
		Z      string          `json:"z"`
		A      USDC            `json:"a_usdc"`
		Raw    json.RawMessage `json:"raw"`
		Skip   string          `json:"-"`
		Nested map[string]int  `json:"nested"`
	}
	got, err := Canonical(row{Z: "<&>", A: 50_000, Raw: json.RawMessage(`{ "y" : 1e2 , "x" : [ true ] }`), Nested: map[string]int{"b": 2, "a": 1}})
	want := `{"a_usdc":0.05,"nested":{"a":1,"b":2},"raw":{"x":[true],"y":100},"z":"<&>"}`
	if err != nil || string(got) != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}
	if _, err := Canonical(func() {}); !errors.Is(err, ErrNotCanonicalizable) {
		t.Errorf("a func: %v", err)
	}
}

// FuzzCanonical: whatever is accepted is valid JSON meaning the same as the
// input, and canonicalizing the output again changes nothing.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
		`{"\u20ac":"Euro Sign","\r":"CR","\ufb33":"Dalet","1":"One","\ud83d\ude00":"Emoji","\u0080":"Control","\u00f6":"o"}`,
		`[-0, 5e-324, 1.7976931348623157e308, 9007199254740993, 1e21, 1e-7, 0.1]`,
		`{"a":{"b":{"c":[{},[],""]}}}`, `"\ud800\udc00"`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, "\"\u2028\"", `  null `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := CanonicalJSON(data)
		if err != nil {
			if !errors.Is(err, ErrNotCanonicalizable) {
				t.Fatalf("error %v does not wrap ErrNotCanonicalizable", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted %q, which encoding/json calls invalid", data)
		}
		if !json.Valid(out) {
			t.Fatalf("output %q is not JSON", out)
		}
		again, err := CanonicalJSON(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a fixed point: %q → %q, %v", out, again, err)
		}
		var in, back any
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatalf("unmarshal input: %v", err)
		}
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("unmarshal output: %v", err)
		}
		if !reflect.DeepEqual(in, back) {
			t.Fatalf("meaning changed:\n%q\n%q", data, out)
		}
	})
}
