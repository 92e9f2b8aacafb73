package api

// Wire shapes of REST responses that are not domain types themselves. The
// http package writes them and the client package reads them.

// ErrorBody is the seed's error body.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the object inside ErrorBody.
type ErrorDetail struct {
	Code        string  `json:"code"`
	Message     string  `json:"message"`
	ExecutionID *string `json:"execution_id"`
}
