package mcp

import (
	"context"
	"encoding/json"

	"github.com/crtx-market/crtx"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// textOnly refuses a message whose parameters are not text (crtx.IsText):
// a NUL in a task, an idempotency key, an id or a search reaches no handler,
// as REST and A2A refuse it.
func textOnly(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		b, err := json.Marshal(req.GetParams())
		if err != nil || crtx.IsJSONText(b) {
			return next(ctx, method, req)
		}
		return refuse(method, jsonrpc.CodeInvalidParams,
			crtx.Errorf(crtx.CodeInvalidRequest, "the request holds a NUL character (\\u0000), which no parameter accepts"))
	}
}

// refuse answers a message the marketplace will not serve: a tool call
// with a tool error, as the SDK answers arguments outside a tool's schema,
// so that the model reads why; any other method with the protocol's error
// of that code.
func refuse(method string, code int64, err *crtx.Error) (sdk.Result, error) {
	if method == "tools/call" {
		res := &sdk.CallToolResult{}
		res.SetError(err)
		return res, nil
	}
	return nil, &jsonrpc.Error{Code: code, Message: err.Error()}
}
