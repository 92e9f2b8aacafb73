package agents

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/crtx-market/crtx/creator"
)

func run(t *testing.T, task, params string) (string, error) {
	out, _, err := JSONCSV(context.Background(), creator.Request{Task: task, Parameters: json.RawMessage(params)})
	return out, err
}

func TestConvert(t *testing.T) {
	csv, err := run(t, `[{"name":"Ada","age":36,"tags":["x"]},{"name":"Bob, Jr.","city":"Paris"}]`, `{"direction":"json_to_csv"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "age,name,tags,city\n36,Ada,\"[\"\"x\"\"]\",\n,\"Bob, Jr.\",,Paris\n"
	if csv != want {
		t.Errorf("json_to_csv:\n%q\nwant\n%q", csv, want)
	}
	back, err := run(t, "name;city\nAda;London\n", `{"direction":"csv_to_json","delimiter":";"}`)
	if err != nil || back != `[{"city":"London","name":"Ada"}]` {
		t.Errorf("csv_to_json = %s, %v", back, err)
	}
	for _, c := range [][2]string{
		{`{"a":1}`, `{"direction":"json_to_csv"}`}, {`a,b`, `{"direction":"sideways"}`}, {"a\n\"b", `{"direction":"csv_to_json"}`},
		{`[]`, `{"direction":"json_to_csv","delimiter":"ab"}`}, {`[]`, `[]`},
	} {
		if _, err := run(t, c[0], c[1]); err == nil {
			t.Errorf("%s with %s: no error", c[0], c[1])
		}
	}
}
