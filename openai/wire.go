package openai

import (
	"encoding/json"

	"github.com/crtx-market/crtx/api"
)

// The OpenAI API's shapes this endpoint speaks (platform.openai.com's API
// reference: "Models", "Chat"), with crtx's additions where the reference
// leaves room: an execution's id and cost beside each answer.

// model is one agent as a model.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type modelList struct {
	Object string  `json:"object"`
	Data   []model `json:"data"`
}

// message is one turn of a conversation. content is a string, or an array
// of parts of which the text ones are read.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// chatRequest is the body of POST /v1/chat/completions. The fields not
// named here (temperature, max_tokens, tools…) are accepted and not used:
// an agent is not a model with knobs.
type chatRequest struct {
	Model         string          `json:"model"`
	Messages      []message       `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	Parameters    json.RawMessage `json:"parameters"`
	MaxCost       *json.Number    `json:"max_cost_usdc"`
	MaxPrice      *json.Number    `json:"max_price_usdc"`
	Private       bool            `json:"private"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

type choiceMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type choice struct {
	Index        int           `json:"index"`
	Message      choiceMessage `json:"message"`
	FinishReason string        `json:"finish_reason"`
}

// execution is what crtx adds: the call's execution, to verify or dispute.
type execution struct {
	ExecutionID string      `json:"execution_id"`
	Cost        json.Number `json:"cost_usdc"`
	ResultHash  *string     `json:"result_hash"`
	Record      string      `json:"on_chain_record"`
	// Metered is how an agent priced per token was charged: usage is
	// then the usage its creator signed (usage_signature).
	Metered *api.MeteredView `json:"metered,omitempty"`
}

type completion struct {
	ID      string    `json:"id"`
	Object  string    `json:"object"`
	Created int64     `json:"created"`
	Model   string    `json:"model"`
	Choices []choice  `json:"choices"`
	Usage   usage     `json:"usage"`
	Crtx    execution `json:"crtx"`
}

type delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *usage        `json:"usage,omitempty"`
	Crtx    *execution    `json:"crtx,omitempty"`
}

// errorBody is OpenAI's error shape; code is crtx's error code.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message     string  `json:"message"`
	Type        string  `json:"type"`
	Param       *string `json:"param"`
	Code        string  `json:"code"`
	ExecutionID *string `json:"execution_id,omitempty"`
}
