package policy

import (
	"slices"
	"strings"
)

// ToolCause is why a tool call failed, as far as repeating it is concerned.
// A call is worth repeating when it never got an answer or the answer said
// "later"; never when it would fail identically however often it ran.
type ToolCause string

const (
	// ToolCauseSocket: the connection failed or was cut before an answer
	// (ECONNRESET, socket hang up, UND_ERR_SOCKET, fetch failed). Transient.
	ToolCauseSocket ToolCause = "socket"
	// ToolCauseRateLimit: 429, or wording that says too many, come back later. Transient.
	ToolCauseRateLimit ToolCause = "rate-limit"
	// ToolCauseServer: a 5xx, or a peer saying it is overloaded. Transient.
	ToolCauseServer ToolCause = "server"
	// ToolCauseTimeout: the call, or the peer it called, ran out of time. Transient.
	ToolCauseTimeout ToolCause = "timeout"
	// ToolCauseQuota: a spent allowance (balance, credits, usage cap). It
	// lasts hours, not the seconds a repeat waits.
	ToolCauseQuota ToolCause = "quota"
	// ToolCausePermanent: wrong arguments, permission denied, a missing file, a
	// schema error, a cancel: the same call fails the same way forever.
	ToolCausePermanent ToolCause = "permanent"
	// ToolCauseUnrecognised: nothing says the failure is transient. Not
	// repeated: a repeat runs the tool again, so doubt means no.
	ToolCauseUnrecognised ToolCause = "unrecognised"
)

// toolCauses lists every cause, in the order the WIT enum declares them.
var toolCauses = []ToolCause{ToolCauseSocket, ToolCauseRateLimit, ToolCauseServer, ToolCauseTimeout,
	ToolCauseQuota, ToolCausePermanent, ToolCauseUnrecognised}

// ToolCauses lists every cause, in the order the WIT enum declares them (a
// copy: callers cannot change the package's list).
func ToolCauses() []ToolCause { return slices.Clone(toolCauses) }

// Transient reports whether a failure with this cause may go away by itself.
func (k ToolCause) Transient() bool {
	switch k {
	case ToolCauseSocket, ToolCauseRateLimit, ToolCauseServer, ToolCauseTimeout:
		return true
	}
	return false
}

// toolCodes are the structured codes the host's tools report (error.info.code
// of a HarnessError), read from the installed dsh 0.1.0-rc.8 packages.
var toolCodes = map[string]ToolCause{
	"TOOL_TIMEOUT": ToolCauseTimeout, // dsh-tool-call-timeout-policy's deadline won
	"BASH_TIMEOUT": ToolCauseTimeout,

	"INVALID_ARGS":            ToolCausePermanent,
	"UNKNOWN_TOOL":            ToolCausePermanent,
	"INVALID_TOOL_OUTPUT":     ToolCausePermanent,
	"UNSUPPORTED_SCHEMA":      ToolCausePermanent,
	"CODE_RUN_FAILED":         ToolCausePermanent, // a program: its sub-calls were each retried already
	"ABORTED":                 ToolCausePermanent, // the caller cancelled
	"ABORTED_BEFORE_DISPATCH": ToolCausePermanent,
	"WEB_ABORTED":             ToolCausePermanent,
	"FS_ABORTED":              ToolCausePermanent,
	"FS_NOT_FOUND":            ToolCausePermanent,
	"FS_PERMISSION_DENIED":    ToolCausePermanent,
	"FS_SANDBOX_DENIED":       ToolCausePermanent,
	"FS_NOT_REGULAR_FILE":     ToolCausePermanent,
	"FS_NOT_DIRECTORY":        ToolCausePermanent,
	"FS_NOT_TEXT":             ToolCausePermanent,
	"FS_TOO_LARGE":            ToolCausePermanent,
	"FS_STALE_VERSION":        ToolCausePermanent,
	"FS_NOT_OBSERVED":         ToolCausePermanent,
	"FS_EDIT_NOT_FOUND":       ToolCausePermanent,
	"FS_AMBIGUOUS_EDIT":       ToolCausePermanent,

	"WEB_PROVIDER_UNAVAILABLE":            ToolCausePermanent, // configuration, not load
	"WEB_PROVIDER_CONFIGURED_MISSING":     ToolCausePermanent,
	"WEB_PROVIDER_CONFIGURED_UNAVAILABLE": ToolCausePermanent,
	"WEB_PROVIDER_AMBIGUOUS":              ToolCausePermanent,
	"WEB_PROVIDER_CREDENTIAL_MISSING":     ToolCausePermanent,

	// Node's and undici's socket codes, for tools that put them in a HarnessError.
	"ECONNRESET":              ToolCauseSocket,
	"ECONNREFUSED":            ToolCauseSocket,
	"EPIPE":                   ToolCauseSocket,
	"EAI_AGAIN":               ToolCauseSocket,
	"UND_ERR_SOCKET":          ToolCauseSocket,
	"ETIMEDOUT":               ToolCauseTimeout,
	"UND_ERR_CONNECT_TIMEOUT": ToolCauseTimeout,
	"UND_ERR_HEADERS_TIMEOUT": ToolCauseTimeout,
	"UND_ERR_BODY_TIMEOUT":    ToolCauseTimeout,
	"ENOENT":                  ToolCausePermanent,
	"EACCES":                  ToolCausePermanent,
	"EPERM":                   ToolCausePermanent,
}

// toolPermanentWords say the call itself is wrong. They veto every transient
// word, which can turn up inside them by accident: "EACCES: permission
// denied, open 'timeout.log'".
var toolPermanentWords = []string{
	"permission denied", "eacces", "eperm", "operation not permitted",
	"enoent", "no such file", "enotdir", "not a directory", "eisdir", "is a directory",
	"invalid argument", "invalid parameter", "schema", "validation failed",
	"没有权限", "无权限", "权限不足", "拒绝访问", "文件不存在", "找不到文件", "目录不存在",
	"参数错误", "参数无效", "无效参数", "参数校验",
}

// Wording the model-request classifier has no use for: the host maps model
// transport failures to codes (TRANSPORT, RATE_LIMIT), but a tool's failure is
// often a plain Error whose message is all there is.
var (
	toolSocketWords = []string{
		"econnreset", "socket hang up", "und_err_socket", "fetch failed", "econnrefused",
		"econnaborted", "epipe", "eai_again", "connection reset", "connection refused",
		"other side closed", "socket disconnected", "socket closed",
		"连接被重置", "连接被拒绝", "连接中断", "连接已断开", "网络异常", "网络错误",
	}
	toolTimeoutWords = []string{
		"etimedout", "timed out", "timeout", "time out", "deadline exceeded", "超时",
	}
	toolRateLimitWords = []string{
		"rate limit", "rate-limit", "rate_limit", "ratelimit", "too many requests", "throttl",
		"try again later", "retry later",
		"频率超限", "过于频繁", "请求频繁", "限流", "速率限制", "稍后再试", "稍后重试",
	}
	toolServerWords = []string{
		"internal server error", "bad gateway", "service unavailable", "temporarily unavailable",
		"overloaded", "服务繁忙", "系统繁忙", "服务不可用", "服务器错误", "服务器内部错误",
	}
)

// ClassifyToolFailure decides why a tool call failed. The vocabulary it
// shares with Classify (the model-request classifier) is used through it:
// spent allowances in English and Chinese (quotaWords: 积分不足 is a quota
// in a tool's answer as in a provider's), the host's model-request codes, and
// what an HTTP status means. What differs stays here: a tool's own codes, a
// missing file or denied permission, socket errors that reach a tool as text,
// and the default, which for a tool is "do not repeat" where a model request's
// unknown failure is counted like a transient one.
func ClassifyToolFailure(f ToolFailure) ToolCause {
	code := strings.ToUpper(strings.TrimSpace(f.Code))
	if k, ok := toolCodes[code]; ok {
		return k
	}
	msg := strings.ToLower(f.Message)
	if containsAny(msg, toolPermanentWords) {
		return ToolCausePermanent
	}
	switch Classify(Failure{Code: code, Message: f.Message}) {
	case ClassQuota:
		return ToolCauseQuota
	case ClassPermanent, ClassModelUnavailable:
		return ToolCausePermanent
	case ClassTransient:
		return hostCodeCause(code)
	}
	switch {
	case containsAny(msg, toolSocketWords):
		return ToolCauseSocket
	case containsAny(msg, toolTimeoutWords):
		return ToolCauseTimeout
	case containsAny(msg, toolRateLimitWords):
		return ToolCauseRateLimit
	case containsAny(msg, toolServerWords):
		return ToolCauseServer
	}
	if status := statusIn(msg); status != 0 {
		switch Classify(Failure{Status: status}) {
		case ClassTransient:
			return statusCause(status)
		case ClassQuota:
			return ToolCauseQuota
		}
		return ToolCausePermanent
	}
	return ToolCauseUnrecognised
}

// hostCodeCause names the cause of a transient model-request code reaching a
// tool (a tool that calls a model itself).
func hostCodeCause(code string) ToolCause {
	switch code {
	case "RATE_LIMIT":
		return ToolCauseRateLimit
	case "SERVER":
		return ToolCauseServer
	case "TIMEOUT", "LLM_STREAM_IDLE_TIMEOUT":
		return ToolCauseTimeout
	}
	return ToolCauseSocket // TRANSPORT, STREAM_CLOSED, EMPTY_RESPONSE: no proper answer
}

func statusCause(status int) ToolCause {
	switch status {
	case 429:
		return ToolCauseRateLimit
	case 408:
		return ToolCauseTimeout
	}
	return ToolCauseServer
}

// statusMarkers precede an HTTP status in error text ("HTTP 503", "(HTTP
// 429)", "HTTP/1.1 502", "status code 500", "状态码 503"); reasonPhrases
// follow one ("429 Too Many Requests"). A bare number is not a status: "line
// 429" or "read 503 bytes" say nothing about the peer.
var (
	statusMarkers = []string{"http", "http/1.0", "http/1.1", "http/2", "status", "code", "状态码", "错误码"}
	reasonPhrases = []string{"too many requests", "internal server error", "bad gateway",
		"service unavailable", "gateway timeout", "request timeout", "payment required",
		"bad request", "unauthorized", "forbidden", "not found"}
)

// statusIn finds an HTTP error status (400-599) named as one in msg
// (lower-cased), or returns 0.
func statusIn(msg string) int {
	digit := func(i int) bool { return i >= 0 && i < len(msg) && msg[i] >= '0' && msg[i] <= '9' }
	for i := 0; i+3 <= len(msg); i++ {
		if !digit(i) || !digit(i+1) || !digit(i+2) || digit(i-1) || digit(i+3) {
			continue
		}
		n := int(msg[i]-'0')*100 + int(msg[i+1]-'0')*10 + int(msg[i+2]-'0')
		if n < 400 || n > 599 {
			continue
		}
		before := strings.TrimRight(msg[:i], " :=(#[")
		after := strings.TrimLeft(msg[i+3:], " :-)]")
		for _, m := range statusMarkers {
			if strings.HasSuffix(before, m) {
				return n
			}
		}
		for _, r := range reasonPhrases {
			if strings.HasPrefix(after, r) {
				return n
			}
		}
	}
	return 0
}
