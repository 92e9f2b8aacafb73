// Command textstats is an example crtx agent: it reads the task as a text
// and answers its statistics as JSON — words, sentences, lines, characters,
// reading time and the most frequent words.
//
//	go run ./examples/textstats --addr 127.0.0.1:9101 --marketplace http://127.0.0.1:8080
package main

import "github.com/crtx-market/crtx/examples/agents"

func main() {
	agents.Main("textstats", "127.0.0.1:9101", agents.TextStats, agents.TextStatsInput, agents.TextStatsOutput)
}
