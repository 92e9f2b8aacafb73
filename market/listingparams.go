package market

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/crtx-market/crtx"
)

var tagPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func checkText(field, v string, max int) error {
	if strings.TrimSpace(v) == "" {
		return crtx.InvalidField(field, "is required")
	}
	// A form post can carry any bytes; JSON, the ledger and the listing
	// statement a creator signs carry text.
	if !utf8.ValidString(v) {
		return crtx.InvalidField(field, "is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(v); n > max {
		return crtx.InvalidField(field, "is %d characters; at most %d", n, max)
	}
	return nil
}

// CheckListing checks a listing's fields as CreateListing (creating) or
// UpdateListing would, changing nothing: for a form that found some fields
// at fault itself, to name the others' faults too.
func CheckListing(p crtx.ListingParams, creating bool) error {
	return apply(p, &crtx.Agent{}, creating)
}

// apply checks p and writes its fields into a. Fields of a creation are all
// required but timeout_seconds; an edit may not change name, pricing model
// or status through this path. Every field is checked: the error joins one
// per field at fault, in the form's order, so that a form can show each
// beside its field (the REST answer names them all: error.fields).
func apply(p crtx.ListingParams, a *crtx.Agent, creating bool) error {
	var errs []error
	ok := func(err error) bool {
		if err != nil {
			errs = append(errs, err)
		}
		return err == nil
	}
	if creating {
		missing := map[string]bool{"name": p.Name == nil, "tagline": p.Tagline == nil, "description": p.Description == nil,
			"tags": p.Tags == nil, "input_schema": p.InputSchema == nil, "output_schema": p.OutputSchema == nil,
			"pricing_model": p.PricingModel == nil, "price_per_call_usdc": p.Price == nil, "endpoint_url": p.EndpointURL == nil,
			"signing_public_key": p.SigningPublicKey == nil}
		for _, f := range formOrder {
			if missing[f] {
				errs = append(errs, crtx.InvalidField(f, "is required"))
			}
		}
	}
	if p.Name != nil && ok(checkText("name", *p.Name, 64)) {
		a.Name = strings.TrimSpace(*p.Name)
	}
	if p.Tagline != nil && ok(checkTagline(strings.TrimSpace(*p.Tagline))) {
		a.Tagline = strings.TrimSpace(*p.Tagline)
	}
	if p.Description != nil && ok(checkText("description", *p.Description, 10_000)) {
		a.Description = *p.Description
	}
	if p.Tags != nil && ok(checkTags(*p.Tags)) {
		a.Tags = slices.Clone(*p.Tags)
	}
	if p.InputSchema != nil && ok(checkSchema("input_schema", *p.InputSchema, true)) {
		a.InputSchema = compactJSON(*p.InputSchema)
	}
	if p.OutputSchema != nil && ok(checkSchema("output_schema", *p.OutputSchema, false)) {
		a.OutputSchema = compactJSON(*p.OutputSchema)
	}
	if p.PricingModel != nil && ok(checkPricingModel(*p.PricingModel, creating)) {
		a.PricingModel = *p.PricingModel
	}
	if p.Price != nil && ok(checkPrice("price_per_call_usdc", *p.Price)) {
		a.Price = *p.Price
	}
	if p.Per1k != nil && ok(checkPer1k(*p.Per1k)) {
		a.Per1k = *p.Per1k
	}
	if p.Cap != nil && ok(checkPrice("max_price_per_call_usdc", *p.Cap)) {
		a.Cap = *p.Cap
	}
	ok(checkMetered(*a, p, creating))
	if p.SigningPublicKey != nil {
		if _, err := crtx.ParseAddress("signing_public_key", *p.SigningPublicKey); ok(err) {
			a.SigningPublicKey = *p.SigningPublicKey
		}
	}
	if p.EndpointURL != nil {
		a.EndpointURL = *p.EndpointURL
	}
	switch {
	case p.TimeoutSeconds == nil && creating:
		a.TimeoutSeconds = 60
	case p.TimeoutSeconds != nil && (*p.TimeoutSeconds < 1 || *p.TimeoutSeconds > 300):
		errs = append(errs, crtx.InvalidField("timeout_seconds", "must be 1 to 300"))
	case p.TimeoutSeconds != nil:
		a.TimeoutSeconds = *p.TimeoutSeconds
	}
	if p.Status != nil && creating {
		errs = append(errs, crtx.InvalidField("status", "a new listing is active; pause it afterwards"))
	}
	// A new input schema is checked against the example kept too.
	if p.ExampleTask != nil || p.ExampleParameters != nil || p.InputSchema != nil && a.Example.Task != "" {
		ok(applyExample(p, a))
	}
	return errors.Join(errs...)
}

// applyExample writes p's example into a: a task of text and parameters
// its input schema takes, or none (an empty task).
func applyExample(p crtx.ListingParams, a *crtx.Agent) error {
	ex := a.Example
	if p.ExampleTask != nil {
		ex.Task = strings.TrimSpace(*p.ExampleTask)
	}
	if p.ExampleParameters != nil {
		ex.Parameters = compactJSON(*p.ExampleParameters)
		if string(ex.Parameters) == "{}" || string(ex.Parameters) == "null" {
			ex.Parameters = nil
		}
	}
	if ex.Task == "" {
		// An empty task removes the example, its parameters with it,
		// unless parameters are given with it.
		if p.ExampleParameters != nil && len(ex.Parameters) > 0 {
			return crtx.InvalidField("example_task", "is required with example parameters")
		}
		a.Example = crtx.Example{}
		return nil
	}
	if err := checkText("example_task", ex.Task, 2000); err != nil {
		return err
	}
	var obj map[string]any
	if len(ex.Parameters) > 0 && (json.Unmarshal(ex.Parameters, &obj) != nil || obj == nil) {
		return crtx.InvalidField("example_parameters", "must be a JSON object")
	}
	if sch, err := CompileSchema(a.InputSchema); err == nil {
		if err := validate(sch, ex.Parameters); err != nil {
			return crtx.InvalidField("example_parameters", "do not match the input schema: %s", crtx.ErrorMessage(err))
		}
	}
	a.Example = ex
	return nil
}

// formOrder is the order of a listing's required fields in its form and
// its documentation, in which their absence is reported.
var formOrder = []string{"name", "tagline", "description", "tags", "input_schema", "output_schema",
	"pricing_model", "price_per_call_usdc", "endpoint_url", "signing_public_key"}

func checkTagline(t string) error {
	if err := checkText("tagline", t, 160); err != nil {
		return err
	}
	if strings.ContainsAny(t, "\n\r") {
		return crtx.InvalidField("tagline", "must be one sentence on one line")
	}
	return nil
}

func checkTags(tags []string) error {
	if len(tags) < 1 || len(tags) > 5 {
		return crtx.InvalidField("tags", "give 1 to 5 tags")
	}
	for i, t := range tags {
		if !tagPattern.MatchString(t) || len(t) > 32 {
			return crtx.InvalidField("tags", "%q is not a lowercase slug (a-z, 0-9 and single hyphens, up to 32 characters)", t)
		}
		if slices.Contains(tags[:i], t) {
			return crtx.InvalidField("tags", "%q appears twice", t)
		}
	}
	return nil
}

func checkPricingModel(m string, creating bool) error {
	if !creating {
		return crtx.InvalidField("pricing_model", "cannot change; list a new agent to change how it is priced")
	}
	if m != crtx.PricingPerCall && m != crtx.PricingMetered {
		return crtx.InvalidField("pricing_model", "must be \"pay_per_use\" (a price per call) or \"metered\" (a base, a price per 1,000 tokens and a most per call)")
	}
	return nil
}

func checkPrice(field string, price crtx.USDC) error {
	if price < crtx.MinPrice || price > crtx.MaxPrice {
		return crtx.InvalidField(field, "must be at least %s and at most %s", crtx.MinPrice, crtx.MaxPrice)
	}
	return nil
}

func checkPer1k(price crtx.USDC) error {
	if price < 1 || price > crtx.MaxPrice {
		return crtx.InvalidField("price_per_1k_tokens_usdc", "must be at least 0.000001 and at most %s", crtx.MaxPrice)
	}
	return nil
}

// checkMetered holds a's prices, p written into it, to its pricing model:
// a metered listing has a price per 1,000 tokens and a most no lower than
// its base; a listing priced per call has neither.
func checkMetered(a crtx.Agent, p crtx.ListingParams, creating bool) error {
	if _, metered := a.Metered(); !metered {
		if p.Per1k != nil || p.Cap != nil {
			field := "price_per_1k_tokens_usdc"
			if p.Per1k == nil {
				field = "max_price_per_call_usdc"
			}
			return crtx.InvalidField(field, "is for a metered listing (pricing_model \"metered\") only")
		}
		return nil
	}
	switch {
	case creating && (p.Per1k == nil || p.Cap == nil):
		field := "price_per_1k_tokens_usdc"
		if p.Per1k != nil {
			field = "max_price_per_call_usdc"
		}
		return crtx.InvalidField(field, "is required for a metered listing")
	case a.Cap != 0 && a.Price != 0 && a.Cap < a.Price:
		return crtx.InvalidField("max_price_per_call_usdc", "is %s, below the base price_per_call_usdc %s; a call's most is at least its base", a.Cap, a.Price)
	}
	return nil
}
