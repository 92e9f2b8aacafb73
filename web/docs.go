package web

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// The docs page renders /v1/openapi.json on the server: readable without
// JavaScript and without a network.

type docParam struct {
	Name, In, Schema, Description string
	Required                      bool
}

type docResponse struct{ Code, Description, Schema string }

type docOp struct {
	ID, Method, Path, Summary, Security, Request, Codes string
	Params                                              []docParam
	Responses                                           []docResponse
}

type docGroup struct {
	Tag string
	Ops []docOp
}

type docSchema struct{ Name, JSON string }

type docPage struct {
	page
	API, Version, Description, OpenAPI string
	Tags                               []string
	Groups                             []docGroup
	Schemas                            []docSchema
}

func pretty(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// buildDocs renders the OpenAPI document as the /docs page.
func (h *Handler) buildDocs(openAPI []byte) ([]byte, error) {
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Title, Version, Description string
		} `json:"info"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		return nil, err
	}
	p := docPage{page: page{Title: doc.Info.Title + " — API reference", NoScript: true},
		API: doc.Info.Title, Version: doc.Info.Version, Description: doc.Info.Description, OpenAPI: doc.OpenAPI}
	groups := map[string]*docGroup{}
	for _, path := range slices.Sorted(maps.Keys(doc.Paths)) {
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := doc.Paths[path][method]
			if !ok {
				continue
			}
			var op struct {
				Summary    string                            `json:"summary"`
				Tags       []string                          `json:"tags"`
				Security   []map[string][]string             `json:"security"`
				Parameters []map[string]any                  `json:"parameters"`
				Body       *struct{ Content map[string]any } `json:"requestBody"`
				Responses  map[string]map[string]any         `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, err
			}
			o := docOp{ID: method + strings.ReplaceAll(path, "/", "-"), Method: strings.ToUpper(method), Path: path, Summary: op.Summary}
			var sec []string
			for _, s := range op.Security {
				for k := range s {
					sec = append(sec, k)
				}
			}
			o.Security = strings.Join(sec, " or ")
			for _, prm := range op.Parameters {
				d := docParam{Name: str(prm["name"]), In: str(prm["in"]), Schema: compact(prm["schema"]), Description: str(prm["description"])}
				d.Required, _ = prm["required"].(bool)
				o.Params = append(o.Params, d)
			}
			if op.Body != nil {
				o.Request = pretty(op.Body.Content)
			}
			codes := slices.Sorted(maps.Keys(op.Responses))
			o.Codes = strings.Join(codes, " ")
			for _, c := range codes {
				r := op.Responses[c]
				dr := docResponse{Code: c, Description: str(r["description"])}
				if ref := str(r["$ref"]); ref != "" {
					dr.Description = "the error body (" + ref[strings.LastIndex(ref, "/")+1:] + ")"
				}
				if content, ok := r["content"]; ok {
					dr.Schema = pretty(content)
				}
				o.Responses = append(o.Responses, dr)
			}
			tag := "other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			if groups[tag] == nil {
				groups[tag] = &docGroup{Tag: tag}
				p.Tags = append(p.Tags, tag)
			}
			groups[tag].Ops = append(groups[tag].Ops, o)
		}
	}
	slices.Sort(p.Tags)
	for _, t := range p.Tags {
		p.Groups = append(p.Groups, *groups[t])
	}
	for _, n := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
		p.Schemas = append(p.Schemas, docSchema{Name: n, JSON: pretty(doc.Components.Schemas[n])})
	}
	return h.execute("docs", p)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (h *Handler) docs(w http.ResponseWriter, r *http.Request) error {
	writePage(w, h.docsHTML)
	return nil
}
