package crtx

// AgentPage is a page of the catalog: the listed agents of a query's page,
// with their statistics, and how many agents match its filter in all.
type AgentPage struct {
	Items  []AgentListItem
	Total  int
	Limit  int
	Offset int
	// Memo is shared by the copies of a page the marketplace keeps for a
	// while, so that one served many times is mapped and encoded once.
	Memo *Memo
}
