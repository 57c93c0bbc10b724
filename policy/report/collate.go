package report

import "strings"

// Channels are listed in the order people read names in: the order the
// JavaScript report gave them (the locale's collation: punctuation before
// digits before letters, a letter's cases together, lower first), for the
// ASCII names providers and models use. Beyond ASCII, by code point.

// asciiOrder is the printable ASCII characters in collation order, a
// letter's two cases at one rank.
const asciiOrder = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"

var asciiRank = func() (r [128]int) {
	for i := range r {
		r[i] = len(asciiOrder) + i // control characters: after everything printable
	}
	for i := 0; i < len(asciiOrder); i++ {
		r[asciiOrder[i]] = i
		if c := asciiOrder[i]; c >= 'a' && c <= 'z' {
			r[c-'a'+'A'] = i
		}
	}
	return r
}()

func rank(r rune) int {
	if r < 128 {
		return asciiRank[r]
	}
	return 256 + int(r)
}

// byName compares two names: by character ranks first, then lower case
// before upper at the first place they differ, then as written.
func byName(x, y string) int {
	xs, ys := []rune(x), []rune(y)
	for i := 0; i < min(len(xs), len(ys)); i++ {
		if a, b := rank(xs[i]), rank(ys[i]); a != b {
			return a - b
		}
	}
	if len(xs) != len(ys) {
		return len(xs) - len(ys)
	}
	for i := range xs {
		lx, ly := xs[i] >= 'a' && xs[i] <= 'z', ys[i] >= 'a' && ys[i] <= 'z'
		if xs[i] != ys[i] && lx != ly {
			if lx {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(x, y)
}
