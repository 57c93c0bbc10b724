// Package redact takes credentials out of text a provider wrote (an error
// body, a probe's failure) before the plugin records it or passes it on: a
// provider that echoes the request's Authorization header or the key it
// refused must not put that key in the audit log, a webhook, telemetry or a
// session file.
//
// Two rules, both replacing only the secret and keeping the words around it:
//   - the values of the credentials the plugin can resolve (the host hands
//     them over: wit/policy.wit, `secrets`), wherever they appear;
//   - the shapes keys take: `sk-…`, `Bearer <token>`, the value after an
//     `Authorization`, `api_key`, `apikey`, `x-api-key`, `password` field,
//     AWS access key ids (`AKIA…`, `ASIA…`), JWTs (`eyJ….….`), and a long
//     token with a digit in it after a `key`, `token` or `secret` word.
//
// Pure, and plain loops rather than regular expressions: the regexp package
// would come into every policy instance (module size and start-up).
package redact

import (
	"slices"
	"strings"
)

// Marker stands where a secret was.
const Marker = "[redacted]"

// MinValueLen is the shortest credential value replaced wherever it appears:
// a shorter one (a test's "x") would blank ordinary words.
const MinValueLen = 6

// MaxValues bounds the values one Redactor holds.
const MaxValues = 256

// Redactor holds the credential values to take out. The zero value takes out
// the shapes only.
type Redactor struct {
	values []string // longest first: a value holding another is replaced whole
}

// New keeps the values of at least MinValueLen bytes (surrounding spaces
// trimmed, duplicates dropped), at most MaxValues of them.
func New(values []string) Redactor {
	var kept []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) >= MinValueLen && !slices.Contains(kept, v) && len(kept) < MaxValues {
			kept = append(kept, v)
		}
	}
	slices.SortStableFunc(kept, func(a, b string) int { return len(b) - len(a) })
	return Redactor{values: kept}
}

// Len is how many values the Redactor holds.
func (r Redactor) Len() int { return len(r.values) }

// Text is s with every credential value and key shape replaced by Marker.
// Text of its own answer is that answer.
func (r Redactor) Text(s string) string {
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Marker)
		}
	}
	return shapes(s)
}

// shapes replaces every key shape in s, left to right.
func shapes(s string) string {
	var b []byte
	last := 0
	for i := 0; i < len(s); {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		start, end, ok := match(s, i)
		if !ok {
			i += run(s, i, alnum) // to the next word: a shape starts one
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(b, s[last:start]...)
		b = append(b, Marker...)
		last, i = end, end
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// match tries each shape at i: the span [start, end) to replace, start >= i.
func match(s string, i int) (start, end int, ok bool) {
	if !isAlnum(s[i]) || i > 0 && isAlnum(s[i-1]) {
		return 0, 0, false // every shape starts a word, with a letter
	}
	// The fixed shapes, by their first letter (the scan is per word, and most words are none).
	switch s[i] {
	case 's':
		if n := prefixedToken(s, i, "sk-", 16); n > 0 {
			return i, i + n, true
		}
	case 'A':
		if n := awsKeyID(s, i); n > 0 {
			return i, i + n, true
		}
	case 'e':
		if n := jwt(s, i); n > 0 {
			return i, i + n, true
		}
	}
	// Outside a header only `bearer` and `basic` are schemes: a word that
	// does not start with a b is not asked (the scan asks every word, and in
	// the wasm module a call costs more than this test).
	if s[i]|0x20 == 'b' {
		if at := scheme(s, i, false); at > i {
			if n := run(s, at, token); n >= 8 && hasDigit(s[at:at+n]) {
				return at, at + n, true
			}
		}
	}
	if at, strict := field(s, i); at > i {
		v := at
		if sc := scheme(s, at, true); sc > at {
			v = sc // `Authorization: Bearer x`: the scheme stays, its token goes
		}
		if n := run(s, v, value); n > 0 && (strict || n >= 16 && hasDigit(s[v:v+n]) && run(s, v, token) == n) {
			return v, v + n, true
		}
	}
	return 0, 0, false
}

// prefixedToken: prefix (case as written) then at least min token bytes.
func prefixedToken(s string, i int, prefix string, min int) int {
	if !strings.HasPrefix(s[i:], prefix) {
		return 0
	}
	n := run(s, i+len(prefix), b64url)
	if n < min {
		return 0
	}
	return len(prefix) + n
}

// awsKeyID: AKIA or ASIA and 16 upper-case letters or digits, a whole word.
func awsKeyID(s string, i int) int {
	if !strings.HasPrefix(s[i:], "AKIA") && !strings.HasPrefix(s[i:], "ASIA") {
		return 0
	}
	n := run(s, i+4, upperOrDigit)
	if n < 16 || i+4+n < len(s) && isAlnum(s[i+4+n]) {
		return 0
	}
	return 4 + n
}

// jwt: eyJ… (base64url of `{"`), a dot, a payload, and an optional signature.
func jwt(s string, i int) int {
	if !strings.HasPrefix(s[i:], "eyJ") {
		return 0
	}
	head := run(s, i, b64url)
	if head < 10 || i+head >= len(s) || s[i+head] != '.' {
		return 0
	}
	j := i + head + 1
	body := run(s, j, b64url)
	if body < 10 {
		return 0
	}
	j += body
	if j < len(s) && s[j] == '.' {
		j += 1 + run(s, j+1, b64url)
	}
	return j - i
}

// scheme: where the credential starts after an HTTP auth scheme word
// (`Bearer `, `Basic `; in a header's value also `Token `) at i, or i when
// there is none. Outside a header, `token` is an ordinary word.
func scheme(s string, i int, inHeader bool) int {
	for _, w := range []string{"bearer", "basic", "token"} {
		if w == "token" && !inHeader || i >= len(s) || s[i]|0x20 != w[0] {
			continue
		}
		if hasFold(s, i, w) {
			j := i + len(w)
			n := run(s, j, blank)
			if n > 0 {
				return j + n
			}
		}
	}
	return i
}

// The field names whose value is a credential whatever it looks like (strict),
// and the words after which only a long token with a digit is taken as one.
var (
	strictNames = []string{"proxy-authorization", "authorization", "x-api-key", "api-key", "api_key", "apikey",
		"access_token", "access-token", "refresh_token", "client_secret", "password", "passwd"}
	looseWords = []string{"key", "token", "secret"}
)

// field: where the value starts after a credential field's name at i and its
// separator (`: `, `=`, `":"`, a JSON string's escaped quotes), or i when
// there is no such field here. strict: the name alone makes the value a
// credential; loose (a `key`, `token`, `secret` word, which may also end
// `api key is`) it must look like one.
func field(s string, i int) (at int, strict bool) {
	first := s[i] | 0x20 // ASCII lower case
	for _, name := range strictNames {
		if name[0] == first && hasFold(s, i, name) && !(i+len(name) < len(s) && isAlnum(s[i+len(name)])) {
			if v, sep := separator(s, i+len(name)); sep {
				return v, true
			}
		}
	}
	// A loose word ends a word, possibly a longer one (`apiKey`, `session_token`).
	end := i + run(s, i, b64url)
	for _, w := range looseWords {
		if end-i < len(w) || s[end-1]|0x20 != w[len(w)-1] || !hasFold(s, end-len(w), w) {
			continue
		}
		v, sep := separator(s, end)
		if !sep {
			v = end + run(s, end, blank) // `key abc123…`
		}
		if v > end {
			return v, false
		}
	}
	return i, false
}

// separator skips quotes and spaces around one `:` or `=` from i: where the
// value starts, and whether there was one.
func separator(s string, i int) (int, bool) {
	j := i + run(s, i, quoteOrBlank)
	if j >= len(s) || s[j] != ':' && s[j] != '=' {
		return i, false
	}
	j++
	return j + run(s, j, quoteOrBlank), true
}

// run is how many bytes of class c start at i.
func run(s string, i int, c uint8) int {
	n := 0
	for i+n < len(s) && classes[s[i+n]]&c != 0 {
		n++
	}
	return n
}

func hasFold(s string, i int, lower string) bool {
	if len(s)-i < len(lower) {
		return false
	}
	for k := 0; k < len(lower); k++ {
		c := s[i+k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[k] {
			return false
		}
	}
	return true
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func isAlnum(c byte) bool { return classes[c]&alnum != 0 }

// Byte classes, one table lookup each: the scan looks at every byte, and in
// the wasm module a call through a function value per byte cost more than
// the rule itself.
const (
	alnum        uint8 = 1 << iota
	b64url             // alnum, '-', '_': base64url, and the bytes of a word
	token              // b64url, '.', '~', '+', '/', '=': a bearer token or an encoded key
	value              // a field's value runs to a space, a quote, a backslash or punctuation that ends a value in JSON, a header list or a query string; not '[', so Marker is never taken for one (Text of its own answer is that answer)
	upperOrDigit       // an AWS key id's body
	blank              // ' ', '\t'
	quoteOrBlank       // blank, '"', '\'', '\\'
)

var classes = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		isA := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
		set := func(on bool, k uint8) {
			if on {
				t[c] |= k
			}
		}
		set(isA, alnum)
		set(isA || b == '-' || b == '_', b64url)
		set(isA || b == '-' || b == '_' || strings.IndexByte(".~+/=", b) >= 0, token)
		set(b > ' ' && b < 0x7f && strings.IndexByte("\"'`\\,;&{}()[]<>", b) < 0, value)
		set(b >= 'A' && b <= 'Z' || b >= '0' && b <= '9', upperOrDigit)
		set(b == ' ' || b == '\t', blank)
		set(b == ' ' || b == '\t' || b == '"' || b == '\'' || b == '\\', quoteOrBlank)
	}
	return t
}()
