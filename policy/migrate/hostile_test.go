package migrate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func rowOf(id string, config Value) Row { return Row{ID: id, Config: &config} }

// The JS migration looked keys up in an object, so a key named like a
// member of Object.prototype found that member: constructor and toString
// were listed with no note, hasOwnProperty, valueOf and __proto__ failed
// the migration, and our own row's __proto__ wrote into Object.prototype.
// Here a key is a string: each is one more key the old plugin never
// documented, and the rest of the row is migrated.
func TestPrototypeNamedKeysAreOrdinaryKeys(t *testing.T) {
	for _, key := range []string{"constructor", "toString", "isPrototypeOf", "hasOwnProperty", "valueOf", "__proto__", "__defineGetter__", "propertyIsEnumerable"} {
		for _, p := range []*plugin{&daruma, &reconnect, &quotaRetry, &toolRetry, &modelFailover} {
			res := Migrate([]Row{rowOf(p.ids[0], Obj(M(key, Obj(M(exprKey, Str("globalThis.x = 1")))), M("extra", Num(1))))})
			require.Empty(t, res.Errors, "%s.%s", p.name, key)
			var line *Line
			for i := range res.Table {
				if res.Table[i].Key == key {
					line = &res.Table[i]
				}
			}
			require.NotNil(t, line, "%s.%s is in the table", p.name, key)
			require.Nil(t, line.To)
			require.Equal(t, "not a key "+p.name+" documents: not migrated; check what it did by hand", line.Note)
		}
	}
	// Our own row carries every key: __proto__ too, as a key of the row, for
	// the module's check to name.
	res := Migrate([]Row{
		rowOf("resilience", Obj(M("__proto__", Obj(M(exprKey, Str("x")))))),
		rowOf("dsh-daruma", Obj(M("channels", List(Str("p/a"))))),
	})
	require.Empty(t, res.Errors)
	require.Equal(t, `{"__proto__":{"__jsExpr":"x"},"chain":[{"provider":"p","model":"a"}]}`, res.Row.JSON())
}

// A key set inside another's value must agree with it; a value that is not
// a map of keys (an expression, a list) holds nothing inside it.
func TestSettingsInsideAnotherKeyAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ours  Value
		old   Row
		error string
	}{
		{"inside an expression", Obj(M("quota", Obj(M(exprKey, Str("q"))))), rowOf("reconnect", Obj(M("retryQuota", Boolean(true)))),
			`dsh-reconnect key "retryQuota" sets quota.defaultEnabled to true, but dsh-resilience key "quota" sets quota to {"__jsExpr":"q"}: keep one of them`},
		{"inside a list", Obj(M("tools", List(Str("a")))), rowOf("tool-retry", Obj(M("retryTools", List(Str("a"))))),
			`dsh-plugin-tool-retry key "retryTools" sets tools.retry to ["a"], but dsh-resilience key "tools" sets tools to ["a"]: keep one of them`},
		{"an unknown map of ours, agreeing", Obj(M("tools", Obj(M("retry", List(Str("a")))))), rowOf("tool-retry", Obj(M("retryTools", List(Str("a"))))), ""},
		{"beside the marker", Obj(M("quota", Obj())), rowOf("reconnect", Obj(M("retryQuota", Boolean(true)))), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Migrate([]Row{rowOf("resilience", tc.ours), tc.old})
			if tc.error == "" {
				require.Empty(t, res.Errors)
				return
			}
			require.Equal(t, []string{tc.error}, res.Errors)
		})
	}
}

func TestClaimBothOrders(t *testing.T) {
	var m migration
	require.Empty(t, m.claim(setting{Path{"tools", "retry"}, List(Str("a")), "x"}))
	require.Contains(t, m.claim(setting{Path{"tools"}, Obj(M(exprKey, Str("t"))), "y"}), "y sets tools to")
	require.Contains(t, m.claim(setting{Path{"tools"}, Obj(M("retry", List(Str("b")))), "z"}), `but x sets tools.retry to ["a"]`)
	require.Empty(t, m.claim(setting{Path{"tools"}, Obj(M("retry", List(Str("a"))), M("maxAttempts", Num(2))), "w"}))
	require.Equal(t, `{"tools":{"retry":["a"],"maxAttempts":2}}`, m.build().JSON())
}

// A `!!js` expression where a number belongs is carried as written (the JS
// took its Math.max and printed null).
func TestExpressionNumbersCarried(t *testing.T) {
	e := Obj(M(exprKey, Str("Number(process.env.N)")))
	res := Migrate([]Row{rowOf("tool-retry", Obj(M("maxAttempts", e), M("backoffMs", e), M("maxBackoffMs", e), M("retryDeadlineMs", e)))})
	require.Empty(t, res.Errors)
	tools, _ := res.Row.Get("tools")
	for _, k := range []string{"maxAttempts", "backoffMs", "maxBackoffMs", "retryDeadlineMs"} {
		v, _ := tools.Get(k)
		require.True(t, v.IsExpr(), k)
	}
}

func TestSecretWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		warn        bool
	}{
		{"OPENAI_API_KEY", "anything", true},
		{"github_token", "x", true},
		{"DB_PASSWORD", "hunter2", true},
		{"CLIENT_SECRET", "s3cr3t-value", true},
		{"API_KEY", "", false}, // nothing written out
		{"UPSTREAM", "sk-proj-Ab3dEf6hIj9kLm2nOp5q", true},
		{"X", "ghp_0123456789abcdefghij", true},
		{"SESSION", "aZ3kP9qLm2Xv8RtY6wB1nC4dE7fG0hJ5", true},
		{"B64", "dGhpcyBpcyBhIHNlY3JldCBrZXkgMTIzNDU2Nzg5MA==", true},
		{"BASE_URL", "https://api.example.com/v1/balance?account=12345", false},
		{"REGION", "eu-west-1", false},
		{"REQUEST_ID", "550e8400-e29b-41d4-a716-446655440000", false},
		{"DIGEST", "0123456789abcdef0123456789abcdef", true},
		{"CACHE_DIR", "/var/cache/balance/opencode-go-2026", false},
		{"MODEL", "deepseek/deepseek-v4.1-flash-20260101", false},
		{"NOTE", "remaining credits in USD, 2026 plan", false},
		{"VERSION", "2026-01-01T00:00:00.000000Z", false},
		// Credentials inside a value, whatever its name.
		{"ALL_PROXY", "http://balance:hunter2@proxy.internal:3128", true},
		{"GIT_URL", "https://ghp_0123456789abcdefghij@github.com/o/r", true},
		{"STATUS", "https://status.example.com/v1?account=42&api_key=hunter2", true},
		{"HEADER", "Bearer hunter2hunter2", true},
		{"DB_PASS", "hunter2", true},
		{"AUTHORIZATION", "x", true},
		{"PROXY", "http://user@proxy.internal:3128", false}, // a user name, no password
		{"EMPTY_PASSWORD_URL", "", false},
		{"STATUS_URL", "https://status.example.com/v1?account=42&tokens=&user=me@example.com", false},
		{"PROXY_BYPASS", "localhost,127.0.0.1", false},
		{"SPIN", "3", false},
	} {
		b := Obj(M("env", List(Obj(M("name", Str(tc.name)), M("value", Str(tc.value))))))
		got := secrets(b, "[0]")
		require.Equal(t, tc.warn, len(got) == 1, "%s=%s: %v", tc.name, tc.value, got)
		for _, w := range got {
			require.NotContains(t, w, tc.value, "a warning never quotes the secret")
			require.Contains(t, w, "!!js process.env."+tc.name)
		}
	}
	key := secrets(Obj(M("apiKeyEnv", Str("sk-live-0123456789abcdef0123"))), "[2]")
	require.Len(t, key, 1)
	require.True(t, strings.HasPrefix(key[0], "warning: [2].apiKeyEnv looks like the key itself"))
	require.Empty(t, secrets(Obj(M("apiKeyEnv", Str("OPENCODE_API_KEY"))), "[0]"))
}

// balanceEnv is our row with one balance script of one env entry.
func balanceEnv(name string, value Value) Value {
	entry := Obj(M("name", Str(name)), M("value", value))
	return Obj(M("quota", Obj(M("balances", List(Obj(M("env", List(entry))))))))
}

// Our own row is carried over as written, so the secrets in it are named
// as an old row's are: balance scripts, and the URLs and *Env keys that
// must hold a credential's name, never the credential.
func TestOwnRowSecretWarnings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config Value
		warn   string // the start of the one warning; "" for none
	}{
		{"balance env", balanceEnv("TOKEN", Str("t")), "warning: quota.balances[0].env TOKEN looks like a secret"},
		{"balance env by reference", balanceEnv("TOKEN", Obj(M(exprKey, Str("process.env.TOKEN")))), ""},
		{"redis url", Obj(M("shared", Obj(M("redis", Obj(M("url", Str("rediss://u:pw@r:6380"))))))), "warning: shared.redis.url holds a password"},
		{"redis url without", Obj(M("shared", Obj(M("redis", Obj(M("url", Str("redis://r:6379/0")), M("passwordEnv", Str("DSH_REDIS_PASSWORD"))))))), ""},
		{"redis passwordEnv", Obj(M("shared", Obj(M("redis", Obj(M("passwordEnv", Str("sk-live-0123456789abcdef0123"))))))), "warning: shared.redis.passwordEnv looks like the password itself"},
		{"notify url", Obj(M("notify", List(Obj(M("url", Str("https://a:b@h/x")))))), "warning: notify[0].url holds credentials"},
		{"notify secretEnv", Obj(M("notify", List(Obj(M("url", Str("https://h/x")), M("secretEnv", Str("ghp_0123456789abcdefghij")))))), "warning: notify[0].secretEnv looks like the secret itself"},
		{"notify by reference", Obj(M("notify", List(Obj(M("url", Str("https://h/x")), M("secretEnv", Str("DSH_NOTIFY_SECRET")))))), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Migrate([]Row{rowOf("resilience", tc.config)})
			require.Empty(t, res.Errors)
			var warnings []string
			for _, l := range res.Table {
				if strings.HasPrefix(l.Note, "warning:") {
					require.Nil(t, l.To, "a warning sets nothing")
					warnings = append(warnings, l.Note)
				}
			}
			if tc.warn == "" {
				require.Empty(t, warnings)
				return
			}
			require.Len(t, warnings, 1)
			require.True(t, strings.HasPrefix(warnings[0], tc.warn), warnings[0])
			require.Contains(t, warnings[0], "credential")
			require.Equal(t, tc.config.JSON(), res.Row.JSON(), "the row keeps what it held: dropping it would break it")
		})
	}
}

// The quota plugin's env, a map of name to value, becomes our list.
func TestEnvMapBecomesList(t *testing.T) {
	script := Obj(M("provider", Str("p")), M("script", List(Str("run"))), M("env", Obj(M("REGION", Str("eu")), M("MODE", Str("json")))))
	res := Migrate([]Row{rowOf("quota-retry", Obj(M("balances", List(script))))})
	require.Empty(t, res.Errors)
	require.Equal(t, `{"quota":{"balances":[{"provider":"p","script":["run"],"env":[{"name":"REGION","value":"eu"},{"name":"MODE","value":"json"}]}]}}`, res.Row.JSON())
}

// Numbers and strings are written as JSON.stringify writes them: notes and
// refusals quote values, and the printout compares them as text.
func TestJSONAsJS(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", 1: "1", -1: "-1", 2.5: "2.5", 1e21: "1e+21", 1e20: "100000000000000000000", 123456789012345680000: "123456789012345680000",
		1e-7: "1e-7", 1e-6: "0.000001", 0.1: "0.1", 1.5e300: "1.5e+300", -2.5e-8: "-2.5e-8", 86_400_000: "86400000", 4294967296.5: "4294967296.5",
	} {
		require.Equal(t, want, jsNumber(f), "%v", f)
	}
	require.Equal(t, `"a\"b\\c\n\t\b\f\r\u0001é`+"\u2028"+`<>&"`, Str("a\"b\\c\n\t\b\f\r\x01é\u2028<>&").JSON())
	require.Equal(t, `"\ufffd�"`, Str("\xff\uFFFD").JSON(), "a byte that is not UTF-8, then a real U+FFFD")
	require.Equal(t, `{"a":[1,true,null,{}],"b":"x"}`, Obj(M("a", List(Num(1), Boolean(true), Value{}, Obj())), M("b", Str("x"))).JSON())
}

func TestJSTrim(t *testing.T) {
	require.Equal(t, "a b", jsTrim("\ufeff\u00a0\u2003 a b\u3000\n"))
	require.Equal(t, "\u0085a", jsTrim("\u0085a"), "NEL is not JS white space")
}
