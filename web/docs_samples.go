package web

import "strings"

// sampleSources says where a reader finds, on the marketplace serving the
// page, a value of each path parameter whose example in openapi.json is a
// sample that exists on no marketplace in particular. The page is built
// once at start, so it names the way to a real value instead of one.
var sampleSources = map[string]string{
	"agent_id":       "crtx agents list, or GET /v1/agents (crtxd dev prints one in its banner)",
	"execution_id":   "crtx executions list, or the execution_id of a run",
	"key_id":         "crtx keys list",
	"dispute_id":     "the dispute of crtx executions show EXECUTION_ID",
	"transaction_id": "the ledger_transaction of an execution record",
	"deposit_id":     "crtx deposits list, or GET /v1/wallet/deposits",
	"withdrawal_id":  "crtx withdrawals list, or GET /v1/wallet/withdrawals",
	"wallet":         "crtx wallet show",
	"address":        "crtx wallet show",
}

// keySource is where the API key of a curl line comes from.
const keySource = "$CRTX_API_KEY is a key of yours: crtx keys create dev devnet, or the devnet key crtxd dev prints in its banner"

// samples is the note under an operation's examples saying which of their
// values are samples and where to get real ones.
func samples(op operation, scheme string) string {
	var notes []string
	for _, p := range op.Parameters {
		if src, ok := sampleSources[p.Name]; ok && p.In == "path" && p.Example != nil {
			notes = append(notes, exampleText(p.Example)+" is a sample "+p.Name+": take one from "+src)
		}
	}
	if scheme == "apiKey" {
		notes = append(notes, keySource)
	}
	if len(notes) == 0 {
		return ""
	}
	return strings.Join(notes, "; ") + "."
}
