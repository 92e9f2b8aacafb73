package openai

import (
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/gate"
)

// maxModels bounds the list: the catalog's most run agents, as a model
// picker shows them.
const maxModels = 1000

// models lists the agents the key can run, most run first in the key's
// environment.
func (s *Server) models(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Caller(r)
	if err != nil {
		return err
	}
	out := modelList{Object: "list", Data: []model{}}
	for len(out.Data) < maxModels {
		page, err := s.market.Catalog.Agents(r.Context(), crtx.AgentQuery{Environment: p.Key.Environment, Limit: 100, Offset: len(out.Data)})
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			out.Data = append(out.Data, modelOf(it.Agent))
		}
		if len(page.Items) < 100 {
			break
		}
	}
	gate.WriteJSON(w, http.StatusOK, out)
	return nil
}

// model is one agent as a model.
func (s *Server) model(w http.ResponseWriter, r *http.Request) error {
	p, err := s.gate.Caller(r)
	if err != nil {
		return err
	}
	it, err := s.market.Catalog.Agent(r.Context(), r.PathValue("model"), p.Key.Environment)
	if err != nil {
		return err
	}
	gate.WriteJSON(w, http.StatusOK, modelOf(it.Agent))
	return nil
}

func modelOf(a crtx.Agent) model {
	return model{ID: a.ID, Object: "model", Created: a.CreatedAt.Unix(), OwnedBy: a.Creator}
}
