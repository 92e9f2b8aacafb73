package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// recovered answers a handler's panic with an internal error and logs it:
// the SDK runs each request in a goroutine of its own, past the HTTP
// layer's recovery, so a panic there would end the process.
func recovered(log *slog.Logger) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (res sdk.Result, err error) {
			defer func() {
				if v := recover(); v != nil {
					log.ErrorContext(ctx, "mcp handler panic", "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
					res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
				}
			}()
			return next(ctx, method, req)
		}
	}
}
