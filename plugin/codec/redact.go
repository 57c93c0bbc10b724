package codec

import (
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/dsh-resilience/dsh-resilience/policy/redact"
)

func init() {
	register("secrets", (*Module).Secrets)
	register("redact", (*Module).Redact)
}

// maxSecretLen and maxRedactTexts bound the two inputs: a credential is a
// header's value, and the shim asks about a few texts at a time.
const (
	maxSecretLen   = 4096
	maxRedactTexts = 64
)

// Secrets takes the values of the credentials the plugin can resolve
// (wit/policy.wit, `secrets`): from now on, provider text that enters the
// module, and every text the shim asks Redact about, is shown without them.
// The values replace the last call's. They live beside the policy state,
// never in it: no snapshot, effect or answer carries them.
func (m *Module) Secrets(input []byte) ([]byte, error) {
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	d := decoder{prefix: "secrets"}
	d.object(v, "", "values")
	var values []string
	for i, x := range d.array(v.Get("values"), "values", true) {
		p := "values[" + strconv.Itoa(i) + "]"
		s := d.str(x, p, true)
		if len(s) > maxSecretLen {
			d.fail(p, "longer than %d bytes", maxSecretLen) // the value itself is never named
		}
		values = append(values, s)
	}
	if d.err != nil {
		return nil, d.err
	}
	m.redactor = redact.New(values)
	var w writer
	w.beginObject("")
	w.int("held", int64(m.redactor.Len()))
	w.endObject()
	return w.b, nil
}

// Redact answers texts the shim writes itself (a probe's failure on the
// plugin's events, a session's retry row, a module failure's words) as the
// module shows provider text: the same rule, in one place (policy/redact).
func (m *Module) Redact(input []byte) ([]byte, error) {
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	d := decoder{prefix: "redact"}
	d.object(v, "", "texts")
	list := d.array(v.Get("texts"), "texts", true)
	if len(list) > maxRedactTexts {
		d.fail("texts", "more than %d texts", maxRedactTexts)
	}
	texts := make([]string, 0, len(list))
	for i, x := range list {
		texts = append(texts, d.str(x, "texts["+strconv.Itoa(i)+"]", true))
	}
	if d.err != nil {
		return nil, d.err
	}
	var w writer
	w.beginObject("")
	w.beginArray("texts")
	for _, s := range texts {
		w.b = appendString(w.sep(w.b), m.redactor.Text(s))
	}
	w.endArray()
	w.endObject()
	return w.b, nil
}

// redactEvent is ev with the provider's words in it redacted: a failure's
// message and code (a request's, a probe's) and a model lookup's code. Every
// consumer downstream (the verdict's original failure, effects, the audit
// records built from them) then sees only the redacted text. taken is the
// failure as redacted when redaction changed it (nil otherwise): the step's
// answer carries it, so the shim records what the module took without asking
// again (one more call per failure cost the shim 17 µs for a short message).
//
// An event redaction leaves as it was (nearly every one) is handed on as it
// came: putting a copy back in an interface, and a failure whose address is
// taken, were two allocations per failure and half of what redaction cost
// in the wasm guest (bench-day's calls replayed in-guest: a decide 33.5 µs,
// 32.1 without them, 30.5 without redaction).
func (m *Module) redactEvent(ev policy.Event) (_ policy.Event, taken *policy.Failure) {
	switch e := ev.(type) {
	case policy.RequestError:
		if taken = m.redactFailure(e.Failure); taken != nil {
			e.Failure = *taken
			return e, taken
		}
	case policy.ProbeResult:
		if taken = m.redactFailure(e.Failure); taken != nil {
			e.Failure = *taken
			return e, taken
		}
	case policy.ModelInfo:
		if code := m.redactor.Text(e.Code); code != e.Code {
			e.Code = code
			return e, nil
		}
	}
	return ev, nil
}

// redactFailure is f redacted, or nil when redaction leaves it as it is.
func (m *Module) redactFailure(f policy.Failure) *policy.Failure {
	message, code := m.redactor.Text(f.Message), m.redactor.Text(f.Code)
	if message == f.Message && code == f.Code {
		return nil
	}
	r := new(policy.Failure)
	*r = f
	r.Message, r.Code = message, code
	return r
}
