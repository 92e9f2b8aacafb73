// Command jsoncsv is an example crtx agent: it converts between a JSON
// array of objects and CSV with a header row. The task is the data; the
// parameter "direction" says which way ("json_to_csv" or "csv_to_json").
//
//	go run ./examples/jsoncsv --addr 127.0.0.1:9102 --marketplace http://127.0.0.1:8080
package main

import "github.com/crtx-market/crtx/examples/agents"

func main() {
	agents.Main("jsoncsv", "127.0.0.1:9102", agents.JSONCSV, agents.JSONCSVInput, agents.JSONCSVOutput)
}
