package http

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"net/http"

	"github.com/crtx-market/crtx"
	"github.com/crtx-market/crtx/api"
	"github.com/crtx-market/crtx/web"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = map[string]*template.Template{}

func init() {
	for _, name := range []string{"home", "account", "tx", "block"} {
		pages[name] = template.Must(template.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
}

// cluster reads ?cluster=, as Solana explorers do; mainnet when absent.
func cluster(r *http.Request) (crtx.Environment, error) {
	c := r.URL.Query().Get("cluster")
	if c == "" {
		return crtx.Mainnet, nil
	}
	return crtx.ParseEnvironment("cluster", c)
}

// page renders into a buffer first, so a template failure still answers
// with a clean error body.
func page(w http.ResponseWriter, name string, data any) error {
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, name+".html", data); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", web.PageCSP)
	w.Write(buf.Bytes())
	return nil
}

type pageData struct {
	Title string
	Env   crtx.Environment
}

func (s *Server) explorerHome(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	var blocks []crtx.Block
	last, err := s.market.LatestBlock(r.Context(), env)
	if err != nil && !errors.Is(err, crtx.ErrNotFound) {
		return err
	}
	for h := last.Height; h > 0 && h > last.Height-20; h-- {
		v, err := s.market.Block(r.Context(), env, h)
		if err != nil {
			return err
		}
		blocks = append(blocks, v.Block)
	}
	return page(w, "home", struct {
		pageData
		Authority string
		Blocks    []crtx.Block
	}{pageData{"Ledger", env}, crtx.Address(s.market.AuthorityPublicKey()), blocks})
}

func (s *Server) explorerAccount(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	v, err := s.market.Account(r.Context(), env, r.PathValue("address"))
	if err != nil {
		return err
	}
	return page(w, "account", struct {
		pageData
		V api.AccountView
	}{pageData{"Account", env}, v})
}

func (s *Server) explorerTransaction(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	t, err := s.market.Transaction(r.Context(), env, r.PathValue("id"))
	if err != nil {
		return err
	}
	return page(w, "tx", struct {
		pageData
		T    crtx.LedgerTx
		Hash string
	}{pageData{"Transaction " + string(t.Kind), env}, t, t.Hash().String()})
}

func (s *Server) explorerBlock(w http.ResponseWriter, r *http.Request) error {
	env, err := cluster(r)
	if err != nil {
		return err
	}
	h, err := height(r.PathValue("height"))
	if err != nil {
		return err
	}
	v, err := s.market.Block(r.Context(), env, h)
	if err != nil {
		return err
	}
	return page(w, "block", struct {
		pageData
		V    api.BlockView
		Prev int64
	}{pageData{"Block", env}, v, h - 1})
}
