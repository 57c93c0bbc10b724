package migrate

import (
	"math"
	"strings"
)

// A balance script's env is literal text in the row: the quota plugin's
// docs and ours say it is never for secrets, yet a key pasted there works,
// and a migration is the moment someone reads the row again. So a value
// that looks like a secret is named in the table (never quoted back), with
// where it belongs instead. The row keeps it: dropping it would break the
// script, and the user's file already holds it.

// secrets warns about the secrets written out in one balance script (at: [i]).
func secrets(b Value, at string) []string {
	var out []string
	if env, ok := b.Get("env"); ok && env.Kind == Array {
		for _, e := range env.Arr {
			name, _ := e.Get("name")
			value, _ := e.Get("value")
			if value.Kind == String && (secretName(name.Str) && value.Str != "" || secretText(value.Str)) {
				out = append(out, "warning: "+at+".env "+name.Str+" looks like a secret written into the row: keep it in the environment (or the credential store) and give it as !!js process.env."+envRef(name.Str)+", or name it in apiKeyEnv if it is the script's key")
			}
		}
	}
	if key, ok := b.Get("apiKeyEnv"); ok && key.Kind == String && secretText(key.Str) {
		out = append(out, "warning: "+at+".apiKeyEnv looks like the key itself: it names the credential (an environment variable); keep the key in the environment or the credential store")
	}
	return out
}

// envRef is the name to suggest for !!js process.env.<name>.
func envRef(name string) string {
	if name == "" {
		return "<NAME>"
	}
	return name
}

// secretWords name a variable that holds a secret.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}

func secretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return false
}

// minKeyRun is the shortest unbroken run of letters and digits a key
// without a known prefix has: generated keys run 32 and more, names and
// dates break every few characters.
const minKeyRun = 20

// keyPrefixes start the API keys and tokens of common services.
var keyPrefixes = []string{"sk-", "sk_", "pk_", "rk_", "ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "AKIA", "AIza"}

// secretText reports whether s looks like a key: a known key prefix, or one
// long run of mixed letters and digits with no room for words (a URL, a
// path, a region, a model name and a sentence all fail at least one of these).
func secretText(s string) bool {
	for _, p := range keyPrefixes {
		if strings.HasPrefix(s, p) && len(s) >= len(p)+8 {
			return true
		}
	}
	if len(s) < 24 || strings.Contains(s, "://") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") {
		return false
	}
	var lower, upper, digit bool
	run, longest := 0, 0 // letters and digits without a separator
	for _, r := range s {
		run++
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		case strings.ContainsRune("-_+/=.", r):
			run = 0
		default:
			return false // a space, a colon, anything past base64: not one token
		}
		longest = max(longest, run)
	}
	if longest < minKeyRun {
		return false // words and numbers joined by separators: a name, a version, a date
	}
	classes := 0
	for _, c := range []bool{lower, upper, digit} {
		if c {
			classes++
		}
	}
	return digit && classes >= 2 && entropy(s) >= 3.5
}

// entropy is s's Shannon entropy in bits per byte: random keys sit near
// log2 of their alphabet (about 5 to 6), words and names well below 3.5.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}
