package web

import (
	"fmt"
	"html/template"
	"strings"

	"rsc.io/qr"
)

// qrQuiet is the light margin around a QR code, in modules: the four the
// standard asks for, without which phone cameras often fail to find it.
const qrQuiet = 4

// qrSVG draws text as a QR code in SVG, drawn here so that the page needs
// no script and no image request: a light square and one path of the dark
// modules, each row's runs of dark modules as one rectangle. The view box
// counts modules, so the code scales to any size the page gives it, and
// crispEdges keeps the modules sharp at sizes that are not a whole number
// of pixels a module. label is what the image says to a screen reader.
func qrSVG(text, label string) (template.HTML, error) {
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		return "", fmt.Errorf("qr code: %w", err)
	}
	n := code.Size + 2*qrQuiet
	var d strings.Builder
	for y := range code.Size {
		for x := 0; x < code.Size; {
			if !code.Black(x, y) {
				x++
				continue
			}
			run := 1
			for x+run < code.Size && code.Black(x+run, y) {
				run++
			}
			fmt.Fprintf(&d, "M%d %dh%dv1h-%dz", x+qrQuiet, y+qrQuiet, run, run)
			x += run
		}
	}
	// The colours are fixed, not the page's: a reader needs dark modules
	// on light, whatever the colour scheme.
	return template.HTML(fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" class="qr" viewBox="0 0 %d %d" shape-rendering="crispEdges" role="img" aria-label="%s">`+
		`<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="%s"/></svg>`,
		n, n, template.HTMLEscapeString(label), n, n, d.String())), nil
}
