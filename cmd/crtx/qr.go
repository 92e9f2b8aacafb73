package main

import (
	"strings"

	"rsc.io/qr"
)

// terminalQR draws text as a QR code in a terminal, two modules a
// character (upper and lower half blocks), dark on light with the quiet
// zone of four modules that phone cameras need.
func terminalQR(text string) (string, error) {
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		return "", err
	}
	const quiet = 4
	dark := func(x, y int) bool {
		x, y = x-quiet, y-quiet
		return x >= 0 && y >= 0 && x < code.Size && y < code.Size && code.Black(x, y)
	}
	n := code.Size + 2*quiet
	var b strings.Builder
	for y := 0; y < n; y += 2 {
		for x := range n {
			// A light character cell is drawn with the terminal's
			// foreground: full for light over light, halves otherwise.
			switch top, bottom := dark(x, y), dark(x, y+1); {
			case !top && !bottom:
				b.WriteString("█")
			case !top:
				b.WriteString("▀")
			case !bottom:
				b.WriteString("▄")
			default:
				b.WriteString(" ")
			}
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
