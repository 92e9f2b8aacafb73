package a2a

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/crtx-market/crtx"
)

// idempotencyPrefix keeps the keys of A2A messages apart from REST and MCP
// keys, which share a wallet's key space (crtx.A2AKeys): a messageId that
// happens to equal a REST key is not the same request.
const idempotencyPrefix = crtx.A2AKeys

// maxMessageID leaves room for the prefix in the 255 characters a key may have.
const maxMessageID = crtx.MaxIdempotencyKey - len(idempotencyPrefix)

// maxParameterDepth is the REST body's nesting limit, less the body itself.
const maxParameterDepth = 63

// order is an A2A message read as an execution: what to run, and the
// idempotency key and request hash that make a resent message a replay.
type order struct {
	params crtx.ExecuteParams
	key    string
	hash   string
}

// readMessage reads a message to agentID: its text parts, joined with
// newlines, are the task; its one data part, a JSON object, the
// parameters; its metadata may hold max_cost_usdc (a decimal string) and
// timeout_seconds (a whole number). The messageId is the idempotency key,
// and the request hash covers all of that, so the same messageId with
// another task is refused rather than answered with the first one's result.
func readMessage(agentID string, msg *a2a.Message) (order, error) {
	if msg == nil {
		return order{}, crtx.InvalidField("message", "is required")
	}
	switch {
	case msg.ID == "":
		return order{}, crtx.InvalidField("message.messageId", "is required: it is the idempotency key of the call")
	case len(msg.ID) > maxMessageID || !crtx.IsText(msg.ID):
		return order{}, crtx.InvalidField("message.messageId", "must be text of at most %d bytes", maxMessageID)
	case msg.TaskID != "":
		return order{}, a2a.NewError(a2a.ErrUnsupportedOperation,
			"a task here is one call and takes one message; send a new message, without taskId, to run the agent again")
	}
	var texts []string
	var params json.RawMessage
	for _, p := range msg.Parts {
		if p == nil {
			return order{}, crtx.InvalidField("message.parts", "holds a null part")
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			texts = append(texts, string(c))
		case a2a.Data:
			if params != nil {
				return order{}, crtx.InvalidField("message.parts", "hold more than one data part; send the parameters as one JSON object")
			}
			obj, ok := c.Value.(map[string]any)
			if !ok {
				return order{}, crtx.InvalidField("message.parts", "the data part must be a JSON object: the agent's parameters")
			}
			if depth(obj) > maxParameterDepth {
				return order{}, crtx.InvalidField("message.parts", "the data part nests deeper than %d levels", maxParameterDepth)
			}
			b, err := json.Marshal(obj)
			if err != nil {
				return order{}, crtx.InvalidField("message.parts", "the data part is not JSON")
			}
			params = b
		default:
			return order{}, a2a.NewError(a2a.ErrUnsupportedContentType,
				"this agent reads text parts and one JSON data part; file, URL and raw parts are not accepted")
		}
	}
	in := crtx.ExecuteParams{Task: strings.Join(texts, "\n"), Parameters: params}
	if !crtx.IsText(in.Task) || !crtx.IsJSONText(params) {
		return order{}, crtx.InvalidField("message.parts", "hold a NUL character, which no task or parameter accepts")
	}
	if in.Task == "" {
		return order{}, crtx.InvalidField("message.parts", "hold no text: the task is sent as text parts")
	}
	if err := readMetadata(msg.Metadata, &in); err != nil {
		return order{}, err
	}
	body, err := crtx.Canonical(struct {
		Task       string          `json:"task"`
		Parameters json.RawMessage `json:"parameters,omitempty"`
		Timeout    *int            `json:"timeout_seconds,omitempty"`
		MaxCost    *crtx.USDC      `json:"max_cost_usdc,omitempty"`
		MaxPrice   *crtx.USDC      `json:"max_price_usdc,omitempty"`
	}{in.Task, params, in.TimeoutSeconds, in.MaxCost, in.MaxPrice})
	if err != nil {
		// What the SDK decoded and Marshal wrote back is JSON; only a
		// number past a double's range could fail, and JSON holds none.
		return order{}, crtx.InvalidField("message", "cannot be read as JSON")
	}
	return order{params: in, key: idempotencyPrefix + msg.ID, hash: crtx.RequestHash(agentID, body)}, nil
}

// readMetadata takes the execution's options from message metadata; other
// keys (an extension's, say) are left alone.
func readMetadata(meta map[string]any, in *crtx.ExecuteParams) error {
	for _, m := range []struct {
		name string
		to   **crtx.USDC
	}{{"max_cost_usdc", &in.MaxCost}, {"max_price_usdc", &in.MaxPrice}} {
		v, ok := meta[m.name]
		if !ok {
			continue
		}
		s, isString := v.(string)
		if !isString {
			return crtx.InvalidField("metadata."+m.name, "must be a decimal string such as \"0.05\", so that no float rounds it")
		}
		u, err := crtx.ParseUSDC(s)
		if err != nil {
			return crtx.InvalidField("metadata."+m.name, "%v (an amount in USDC, at least 0, with at most 6 decimals)", err)
		}
		*m.to = &u
	}
	if v, ok := meta["timeout_seconds"]; ok {
		f, isNumber := v.(float64)
		if !isNumber || f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
			return crtx.InvalidField("metadata.timeout_seconds", "must be a whole number of seconds, at least 1")
		}
		n := int(f)
		in.TimeoutSeconds = &n
	}
	return nil
}

// depth is how deeply v nests arrays and objects.
func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			d = max(d, depth(x))
		}
	case []any:
		for _, x := range v {
			d = max(d, depth(x))
		}
	default:
		return 0
	}
	return d + 1
}
