package api

// Page says where a page of a list stands: how many items match in all,
// and the limit and offset it was read with.
type Page struct {
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}
