package policy

import (
	"slices"
	"strings"
)

// Failure is the host's LlmFailure as agent/request-error delivers it.
type Failure struct {
	Code    string
	Message string
	// Status is the HTTP status when the adapter reports one (the DeepSeek
	// adapter does; pi-ai routes do not), else 0.
	Status int
	// RetryAfterMs is the provider's Retry-After, when the adapter reports it, else 0.
	RetryAfterMs int64
}

// Class is how a failure is treated.
type Class string

const (
	// ClassTransient failures go away by themselves: retry the channel after a
	// backoff, and open it only when they persist.
	ClassTransient Class = "transient"
	// ClassQuota failures are a spent allowance (balance, credits, a usage cap):
	// retrying the channel only wastes time, so it opens at once.
	ClassQuota Class = "quota"
	// ClassModelUnavailable failures mean the channel cannot serve at all (model
	// retired or unknown, no adapter, no credential): open at once, fail over.
	ClassModelUnavailable Class = "model-unavailable"
	// ClassPermanent failures would fail identically on every channel, or are the
	// caller's own doing (bad request, cancel): hand them back to the host.
	ClassPermanent Class = "permanent"
	// ClassUnknown failures are counted like transient ones.
	ClassUnknown Class = "unknown"
)

// classes lists every class, in the order the WIT enum declares them.
var classes = []Class{ClassTransient, ClassQuota, ClassModelUnavailable, ClassPermanent, ClassUnknown}

// Classes lists every class, in the order the WIT enum declares them. It is
// a copy: a caller that changes it cannot change what Validate accepts.
func Classes() []Class { return slices.Clone(classes) }

// codeClass maps the host's machine codes (dsh-llm, the adapters and the loop).
var codeClass = map[string]Class{
	"RATE_LIMIT":              ClassTransient,
	"SERVER":                  ClassTransient,
	"TIMEOUT":                 ClassTransient,
	"TRANSPORT":               ClassTransient,
	"EMPTY_RESPONSE":          ClassTransient,
	"STREAM_CLOSED":           ClassTransient,
	"MALFORMED_RESPONSE":      ClassTransient,
	"LLM_STREAM_IDLE_TIMEOUT": ClassTransient,

	"QUOTA":    ClassQuota,
	"HTTP_402": ClassQuota,

	"UNKNOWN_MODEL":        ClassModelUnavailable,
	"MODEL_NOT_FOUND":      ClassModelUnavailable,
	"MODEL_NOT_CONFIGURED": ClassModelUnavailable,
	"NO_ADAPTER":           ClassModelUnavailable,
	"MISSING_CREDENTIAL":   ClassModelUnavailable,
	// A wrong or revoked key is the provider's (credential.go): its models
	// cannot serve, another provider's can.
	"AUTH":               ClassModelUnavailable,
	"INVALID_CREDENTIAL": ClassModelUnavailable,

	"INVALID_REQUEST":              ClassPermanent,
	"CONTEXT_WINDOW_EXCEEDED":      ClassPermanent,
	"ABORTED":                      ClassPermanent,
	"UNSUPPORTED_REASONING_EFFORT": ClassPermanent,
	"UNSUPPORTED_CONTENT":          ClassPermanent,
	"UNSUPPORTED_OPTION":           ClassPermanent,
	"INVALID_PREPARED_CALL":        ClassPermanent,
	// The session's replay state does not fit the request: it fails the same
	// way on every channel, so it is the host's to report, not a channel's fault.
	"INVALID_REPLAY_STATE": ClassPermanent,
}

// quotaWords are phrases that name a spent allowance. The host recognises some
// English ones itself (as QUOTA); providers also say it in Chinese, behind a
// 429 (RATE_LIMIT) or a 403 (AUTH), and the host misses those.
var quotaWords = []string{
	"insufficient balance", "insufficient quota", "insufficient credit", "insufficient funds",
	"quota exceeded", "exceeded your current quota", "exceeded your quota", "out of credits",
	"credit balance is too low", "usage limit", "usage cap", "spending limit", "billing hard limit",
	"used up your", "payment required",
	"余额不足", "额度不足", "额度已用", "用量上限", "配额", "积分不足", "欠费", "超出限额",
}

// modelGoneWords name a model the route does not serve. Gateways that pool
// accounts (one-api, new-api and their kin) answer a model no account carries
// with a PI_AI_ERROR or a bare 4xx/5xx whose only clue is this wording; retrying
// such a channel, or counting it towards a threshold, only spends time.
var modelGoneWords = []string{
	"model not found", "model_not_found", "does not exist", "no such model", "unknown model",
	"not configured", "not supported by any configured account", "type=model_not_configured",
	"not configured for this account", "no model configured", "model_not_configured",
	"模型不存在", "模型未配置", "不支持该模型", "模型未找到", "无可用模型",
}

// classify is Classify under the operator's per-code overrides.
func (c Config) classify(f Failure) Class {
	if k, ok := c.Classes[strings.ToUpper(f.Code)]; ok {
		return k
	}
	return Classify(f)
}

// Classify decides a failure's class from its code, HTTP status and wording.
// Wording wins over the code where the code hides a spent allowance: a 429 or
// 403 that says "usage cap" is quota, not a rate limit or a bad key.
func Classify(f Failure) Class {
	msg := strings.ToLower(f.Message)
	code := strings.ToUpper(f.Code)
	c, known := codeClass[code]
	if c != ClassPermanent || code == "AUTH" {
		// A permanent code is the caller's doing whatever it says, except AUTH:
		// some providers answer 401/403 for a spent plan.
		if containsAny(msg, quotaWords) {
			return ClassQuota
		}
	}
	// The wording decides for codes that do not say what happened: the
	// adapters' catch-alls (PI_AI_ERROR, UNKNOWN) and codes this table lacks.
	if c == ClassModelUnavailable || (!known && containsAny(msg, modelGoneWords)) {
		return ClassModelUnavailable
	}
	if known {
		return c
	}
	switch {
	case f.Status == 402:
		return ClassQuota
	case f.Status == 408 || f.Status == 429 || f.Status >= 500:
		return ClassTransient
	case f.Status == 404:
		return ClassModelUnavailable
	case f.Status >= 400:
		return ClassPermanent
	}
	return ClassUnknown
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
