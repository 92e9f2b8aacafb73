// Package shell writes words for a POSIX shell: the command lines the
// service prints for people to paste (the banner of crtxd dev, the
// snippets of the agent pages and /docs).
package shell

import "strings"

// safe are the characters a word may hold and still be pasted bare.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:"

// Quote is s as one word: bare when it holds only safe characters, else
// in single quotes, each single quote within written '\”.
func Quote(s string) string {
	if s != "" && strings.Trim(s, safe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
