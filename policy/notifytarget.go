package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// The row's `notify` list (docs/configuration.md, "Notifications"): the
// webhook receivers an operator names. The module checks them with the rest
// of the row, so a bad one is refused by key like any other, and it says on
// each notification which of them chose its kind (notify.go); the shim only
// signs and POSTs.

// NotifyTarget is one receiver: where the notifications go, which kinds it
// chose, the name of the variable holding its signing secret (a reference:
// the secret itself never goes in the config), and how long one POST may
// wait for it.
type NotifyTarget struct {
	URL       string
	Events    []NotifyKind
	SecretEnv string
	TimeoutMs int64
}

const (
	// DefaultNotifyTimeoutMs: a receiver that has not answered in 5 s is
	// down; its tries go on off the decision path either way.
	DefaultNotifyTimeoutMs = 5_000
	// MaxNotifyTargets bounds the list: an operator's pager and chat, not a fan-out.
	MaxNotifyTargets = 20
	// MaxNotifyURL bounds a receiver's URL: a webhook's path carries a token, not a document.
	MaxNotifyURL = 2048
)

// validateNotify checks the list. A URL is never quoted back: webhook URLs
// often carry a token in their path.
func validateNotify(targets []NotifyTarget) error {
	if len(targets) > MaxNotifyTargets {
		return &FieldError{"notify", fmt.Sprintf("at most %d targets", MaxNotifyTargets)}
	}
	for i, t := range targets {
		at := "notify[" + strconv.Itoa(i) + "]"
		if reason := urlProblem(t.URL); reason != "" {
			return &FieldError{at + ".url", reason}
		}
		if len(t.Events) == 0 {
			return &FieldError{at + ".events", "must be a non-empty list of: " + kindList()}
		}
		for j, e := range t.Events {
			if !knownKind(e) {
				return &FieldError{fmt.Sprintf("%s.events[%d]", at, j), fmt.Sprintf("unknown event %q (known: %s)", e, kindList())}
			}
			for _, before := range t.Events[:j] {
				if before == e {
					return &FieldError{at + ".events", "lists an event twice"}
				}
			}
		}
		if t.SecretEnv != "" && !envName(t.SecretEnv) {
			return &FieldError{at + ".secretEnv", "must be an environment variable name, e.g. DSH_NOTIFY_SECRET (the secret itself never goes in the config)"}
		}
		if t.TimeoutMs < 100 || t.TimeoutMs > 60_000 {
			return &FieldError{at + ".timeoutMs", "must be an integer between 100 and 60000"}
		}
	}
	return nil
}

// urlProblem is why u cannot be a receiver, or "". The rule is the one a
// fetch can always send to: an http:// or https:// URL whose host is a
// name or an address (an IPv6 one in brackets), with an optional port,
// and no user or password (a secret is signed with, never sent in the URL).
func urlProblem(u string) string {
	const scheme = "must be an http:// or https:// URL"
	rest, ok := cutPrefixFold(u, "http://")
	if !ok {
		rest, ok = cutPrefixFold(u, "https://")
	}
	if !ok || len(u) > MaxNotifyURL {
		return scheme
	}
	for _, c := range u {
		if c <= ' ' || c == 0x7f || c == '\\' {
			return scheme // whitespace, a control character, or a backslash (read as a slash by some parsers)
		}
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if strings.Contains(authority, "@") {
		return "must not hold credentials: sign with secretEnv instead"
	}
	host, port := authority, ""
	if strings.HasPrefix(authority, "[") { // an IPv6 address
		end := strings.IndexByte(authority, ']')
		if end < 0 || strings.Trim(authority[1:end], "0123456789abcdefABCDEF:.") != "" || end == 1 {
			return scheme
		}
		host, port = authority[:end+1], authority[end+1:]
		if port != "" && port[0] != ':' {
			return scheme
		}
	} else if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		host, port = authority[:i], authority[i:]
	}
	if port != "" {
		n, err := strconv.Atoi(port[1:])
		if err != nil || n < 0 || n > 65535 || port[1:] == "" || port[1] == '+' || port[1] == '-' {
			return scheme
		}
	}
	if host == "" || strings.Trim(host, ".") == "" {
		return scheme
	}
	if host[0] == '[' {
		return "" // checked above
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' ||
			c > 0x7f) { // a name beyond ASCII is the fetch's to encode
			return scheme
		}
	}
	return ""
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

func knownKind(k NotifyKind) bool {
	for _, known := range NotifyKinds {
		if k == known {
			return true
		}
	}
	return false
}

func kindList() string {
	names := make([]string, len(NotifyKinds))
	for i, k := range NotifyKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Origin is the URL's scheme and host (and port): all a log may name of a
// receiver, as its `notify-failed` line does.
func (t NotifyTarget) Origin() string {
	scheme, rest, _ := strings.Cut(t.URL, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.ToLower(scheme) + "://" + rest
}

// Loggable is c as a log may hold it: each receiver's URL cut to its
// origin, since webhook URLs carry tokens in their paths. It checks and
// configures as c does, and decides the same.
func (c Config) Loggable() Config {
	if len(c.Notify) == 0 {
		return c
	}
	targets := make([]NotifyTarget, len(c.Notify))
	for i, t := range c.Notify {
		targets[i] = t
		targets[i].URL = t.Origin()
	}
	c.Notify = targets
	return c
}
