package market

import (
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
// beside its field (the REST answer names the first).
func apply(p crtx.ListingParams, a *crtx.Agent, creating bool) error {
	var errs []error
	check := func(f func() error) {
		if err := f(); err != nil {
			errs = append(errs, err)
		}
	}
	required := map[string]bool{
		"name": p.Name == nil, "tagline": p.Tagline == nil, "description": p.Description == nil, "tags": p.Tags == nil,
		"input_schema": p.InputSchema == nil, "output_schema": p.OutputSchema == nil, "pricing_model": p.PricingModel == nil,
		"price_per_call_usdc": p.Price == nil, "endpoint_url": p.EndpointURL == nil, "signing_public_key": p.SigningPublicKey == nil,
	}
	if creating {
		for _, f := range []string{"name", "tagline", "description", "tags", "input_schema", "output_schema",
			"pricing_model", "price_per_call_usdc", "endpoint_url", "signing_public_key"} {
			if required[f] {
				errs = append(errs, crtx.InvalidField(f, "is required"))
			}
		}
	}
	check(func() error {
		if p.Name != nil {
			if err := checkText("name", *p.Name, 64); err != nil {
				return err
			}
			a.Name = strings.TrimSpace(*p.Name)
		}
		return nil
	})
	check(func() error {
		if p.Tagline != nil {
			t := strings.TrimSpace(*p.Tagline)
			if err := checkText("tagline", t, 160); err != nil {
				return err
			}
			if strings.ContainsAny(t, "\n\r") {
				return crtx.InvalidField("tagline", "must be one sentence on one line")
			}
			a.Tagline = t
		}
		return nil
	})
	check(func() error {
		if p.Description != nil {
			if err := checkText("description", *p.Description, 10_000); err != nil {
				return err
			}
			a.Description = *p.Description
		}
		return nil
	})
	check(func() error {
		if p.Tags != nil {
			tags := *p.Tags
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
			a.Tags = slices.Clone(tags)
		}
		return nil
	})
	check(func() error {
		if p.InputSchema != nil {
			if err := checkSchema("input_schema", *p.InputSchema, true); err != nil {
				return err
			}
			a.InputSchema = compactJSON(*p.InputSchema)
		}
		return nil
	})
	check(func() error {
		if p.OutputSchema != nil {
			if err := checkSchema("output_schema", *p.OutputSchema, false); err != nil {
				return err
			}
			a.OutputSchema = compactJSON(*p.OutputSchema)
		}
		return nil
	})
	check(func() error {
		if p.PricingModel != nil {
			if !creating {
				return crtx.InvalidField("pricing_model", "cannot change; pay_per_use is the only model in beta")
			}
			if *p.PricingModel != "pay_per_use" {
				return crtx.InvalidField("pricing_model", "must be \"pay_per_use\" (the only model in beta)")
			}
			a.PricingModel = *p.PricingModel
		}
		return nil
	})
	check(func() error {
		if p.Price != nil {
			if *p.Price <= 0 || *p.Price > crtx.MaxPrice {
				return crtx.InvalidField("price_per_call_usdc", "must be more than 0 and at most %s", crtx.MaxPrice)
			}
			a.Price = *p.Price
		}
		return nil
	})
	check(func() error {
		if p.SigningPublicKey != nil {
			if _, err := crtx.ParseAddress("signing_public_key", *p.SigningPublicKey); err != nil {
				return err
			}
			a.SigningPublicKey = *p.SigningPublicKey
		}
		return nil
	})
	check(func() error {
		if p.EndpointURL != nil {
			a.EndpointURL = *p.EndpointURL
		}
		return nil
	})
	check(func() error {
		if p.TimeoutSeconds != nil {
			if *p.TimeoutSeconds < 1 || *p.TimeoutSeconds > 300 {
				return crtx.InvalidField("timeout_seconds", "must be 1 to 300")
			}
			a.TimeoutSeconds = *p.TimeoutSeconds
		} else if creating {
			a.TimeoutSeconds = 60
		}
		return nil
	})
	check(func() error {
		if p.Status != nil && creating {
			return crtx.InvalidField("status", "a new listing is active; pause it afterwards")
		}
		return nil
	})
	return errors.Join(errs...)
}
