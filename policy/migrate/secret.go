package migrate

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// A balance script's env is literal text in the row: the quota plugin's
// docs and ours say it is never for secrets, yet a key pasted there works,
// and a migration is the moment someone reads the row again. So a value
// that looks like a secret is named in the table (never quoted back), with
// where it belongs instead. The row keeps it: dropping it would break the
// script, and the user's file already holds it.

// secrets warns about the secrets written out in one balance script (at:
// [i] in an old row's balances, quota.balances[i] in our own row).
func secrets(b Value, at string) []string {
	var out []string
	if env, ok := b.Get("env"); ok && env.Kind == Array {
		for _, e := range env.Arr {
			name, _ := e.Get("name")
			value, _ := e.Get("value")
			if value.Kind == String && (secretName(name.Str) && value.Str != "" || secretValue(value.Str)) {
				out = append(out, "warning: "+at+".env "+name.Str+" looks like a secret written into the row: move it to a credential reference: "+
					"if it is the script's key, keep it in the host's credentials ($DSH_HOME/.credentials.yaml) or the environment and name it in apiKeyEnv; "+
					"else keep it in the environment and give it as !!js process.env."+envRef(name.Str))
			}
		}
	}
	if key, ok := b.Get("apiKeyEnv"); ok && key.Kind == String && secretValue(key.Str) {
		out = append(out, "warning: "+at+".apiKeyEnv looks like the key itself: it names the credential (an environment variable); keep the key in the environment or the credential store")
	}
	return out
}

// ownSecrets warns about the secrets written out in our own row's key: a
// row carried over as it is keeps them, so they are named as an old row's
// are. Balance scripts as above; the Redis URL and a notify target's URL
// hold no credentials (activation refuses them) and their *Env keys name
// one, never hold it.
func ownSecrets(key string, v Value) []string {
	var out []string
	switch key {
	case "quota":
		if b, ok := v.Get("balances"); ok && b.Kind == Array {
			for i, s := range b.Arr {
				out = append(out, secrets(s, "quota.balances["+strconv.Itoa(i)+"]")...)
			}
		}
	case "shared":
		redis, _ := v.Get("redis")
		if u, ok := redis.Get("url"); ok && u.Kind == String && urlCredentials(u.Str) {
			out = append(out, "warning: shared.redis.url holds a password: move it to a credential reference: keep it in the environment or the host's credentials, name it in shared.redis.passwordEnv, and take it out of the URL (activation refuses a URL with one)")
		}
		if p, ok := redis.Get("passwordEnv"); ok && p.Kind == String && secretValue(p.Str) {
			out = append(out, "warning: shared.redis.passwordEnv looks like the password itself: it names the credential (an environment variable); keep the password in the environment or the credential store")
		}
	case "notify":
		if v.Kind != Array {
			break
		}
		for i, t := range v.Arr {
			at := "notify[" + strconv.Itoa(i) + "]"
			if u, ok := t.Get("url"); ok && u.Kind == String && urlCredentials(u.Str) {
				out = append(out, "warning: "+at+".url holds credentials: move them to a credential reference: sign with "+at+".secretEnv (an environment variable) instead, and take them out of the URL")
			}
			if s, ok := t.Get("secretEnv"); ok && s.Kind == String && secretValue(s.Str) {
				out = append(out, "warning: "+at+".secretEnv looks like the secret itself: it names the credential (an environment variable); keep the secret in the environment or the credential store")
			}
		}
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

// secretWords name a variable that holds a secret anywhere in its name;
// secretParts only as a whole part (DB_PASS, not BYPASS).
var (
	secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"}
	secretParts = []string{"PASS", "PAT", "PIN"}
)

func secretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(upper, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }) {
		if slices.Contains(secretParts, part) {
			return true
		}
	}
	return false
}

// secretValue reports whether s holds a secret whatever its name: a key, a
// URL with a password (or a token for a user name, or a key= or token=
// parameter), an Authorization header's value.
func secretValue(s string) bool {
	return secretText(s) || urlCredentials(s) || authHeader(s)
}

// urlCredentials reports whether s is a URL that carries a credential: a
// password after the user name, a key-like user name, or a query parameter
// named like a secret with a value. A loop, not net/url: the module keeps
// its size, and nothing here needs more than where the parts start.
func urlCredentials(s string) bool {
	scheme := strings.Index(s, "://")
	if scheme <= 0 {
		return false
	}
	rest := s[scheme+3:]
	authority := rest
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		authority = rest[:end]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		user, password, hasPassword := strings.Cut(authority[:at], ":")
		if hasPassword && password != "" || secretText(user) {
			return true
		}
	}
	_, query, ok := strings.Cut(rest[len(authority):], "?")
	if !ok {
		return false
	}
	query, _, _ = strings.Cut(query, "#")
	for _, param := range strings.Split(query, "&") {
		name, value, _ := strings.Cut(param, "=")
		if secretName(name) && value != "" {
			return true
		}
	}
	return false
}

// authHeader reports whether s is an Authorization header's value: a
// scheme the services use, then the credential.
func authHeader(s string) bool {
	for _, scheme := range []string{"bearer ", "basic ", "token "} {
		if len(s) > len(scheme)+8 && strings.EqualFold(s[:len(scheme)], scheme) {
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
