package web

import (
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"rsc.io/qr"
)

// The QR code's SVG is one path whose rectangles cover exactly the dark
// modules of the code, inside a light square four modules wider on each
// side, sharp-edged and named for screen readers.
func TestQRSVG(t *testing.T) {
	text := "solana:7vzEoA6qPLqGXe5rxmMK7iha63znnLfwGppBrUfELajg?amount=25&label=crtx&memo=crtx%20deposit%20dep_1"
	out, err := qrSVG(text, `QR code of "25" USDC`)
	if err != nil {
		t.Fatal(err)
	}
	var svg struct {
		ViewBox string `xml:"viewBox,attr"`
		Shape   string `xml:"shape-rendering,attr"`
		Role    string `xml:"role,attr"`
		Label   string `xml:"aria-label,attr"`
		Rect    []struct {
			Width  string `xml:"width,attr"`
			Height string `xml:"height,attr"`
			Fill   string `xml:"fill,attr"`
		} `xml:"rect"`
		Path []struct {
			D    string `xml:"d,attr"`
			Fill string `xml:"fill,attr"`
		} `xml:"path"`
	}
	if err := xml.Unmarshal([]byte(out), &svg); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	code, _ := qr.Encode(text, qr.M)
	n := code.Size + 2*qrQuiet
	if svg.ViewBox != fmt.Sprintf("0 0 %d %d", n, n) || svg.Shape != "crispEdges" || svg.Role != "img" ||
		svg.Label != `QR code of "25" USDC` || len(svg.Rect) != 1 || len(svg.Path) != 1 || svg.Path[0].Fill != "#000" ||
		svg.Rect[0].Fill != "#fff" || svg.Rect[0].Width != fmt.Sprint(n) || svg.Rect[0].Height != fmt.Sprint(n) {
		t.Fatalf("svg: %+v", svg)
	}
	dark := map[[2]int]bool{}
	for _, cmd := range strings.Split(strings.TrimSuffix(svg.Path[0].D, "z"), "z") {
		var x, y, w, w2 int
		if _, err := fmt.Sscanf(cmd, "M%d %dh%dv1h-%d", &x, &y, &w, &w2); err != nil || w != w2 || w < 1 {
			t.Fatalf("path command %q: %v", cmd, err)
		}
		for i := range w {
			if dark[[2]int{x + i, y}] {
				t.Fatalf("module %d,%d drawn twice", x+i, y)
			}
			dark[[2]int{x + i, y}] = true
		}
	}
	for y := range n {
		for x := range n {
			in := x >= qrQuiet && y >= qrQuiet && x < qrQuiet+code.Size && y < qrQuiet+code.Size
			if want := in && code.Black(x-qrQuiet, y-qrQuiet); dark[[2]int{x, y}] != want {
				t.Fatalf("module %d,%d: dark %v, want %v", x, y, dark[[2]int{x, y}], want)
			}
		}
	}
}
