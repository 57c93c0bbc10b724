package policy

import "strings"

// maxResetHintMs bounds what a message may ask for: a week, like the cooldowns.
const maxResetHintMs = week

// maxStatedWaitMs caps every wait a provider states, by header or by wording:
// a week, like the cooldowns. A Retry-After of 2^50 ms would otherwise open a
// channel for thirteen million days, and push times past what a JS Date holds.
const maxStatedWaitMs = week

// statedWaitMs is the one place a provider's stated wait is read: the longer
// of its Retry-After and a reset time in its wording, capped at
// maxStatedWaitMs.
func statedWaitMs(f Failure, now int64) int64 {
	return min(maxStatedWaitMs, max(f.RetryAfterMs, resetHint(f.Message, now)))
}

// resetHint reads, from a failure's wording, how long until the provider
// takes requests again: an absolute reset time ("resets at 2030-01-01
// 00:00:00 UTC", ISO 8601 with Z), or a relative one ("try again in 20
// minutes", "in 1h30m", "请在5分钟后重试", "3小时后"). Many providers say it
// only there: a Retry-After header is missing on most spent-cap answers, and
// pi-ai routes report no headers at all. It returns 0 when nothing is said,
// or what is said is in the past or beyond a week.
//
// Dates are computed with integer calendar arithmetic rather than package
// time, so the policy stays free of clock-capable imports.
func resetHint(message string, now int64) int64 {
	msg := strings.ToLower(message)
	if at, ok := absoluteReset(msg); ok {
		return bounded(at - now)
	}
	return bounded(relativeReset(msg))
}

func bounded(ms int64) int64 {
	if ms <= 0 || ms > maxResetHintMs {
		return 0
	}
	return ms
}

// absoluteReset finds "reset(s) at|on <date>" and parses the date after it as UTC.
func absoluteReset(msg string) (int64, bool) {
	for _, marker := range []string{"resets at ", "reset at ", "resets on ", "reset on ", "reset time: ", "重置时间", "将于"} {
		if i := strings.Index(msg, marker); i >= 0 {
			if at, ok := parseDateTime(strings.TrimLeft(msg[i+len(marker):], " :：")); ok {
				return at, true
			}
		}
	}
	return 0, false
}

// parseDateTime reads "YYYY-MM-DD[ T]HH:MM[:SS]" (UTC; a trailing "z" or
// "utc" changes nothing, another zone is not trusted) as ms since the epoch.
func parseDateTime(s string) (int64, bool) {
	num := func(from, n int) (int64, bool) {
		if len(s) < from+n {
			return 0, false
		}
		var v int64
		for _, c := range s[from : from+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 't') || s[13] != ':' {
		return 0, false
	}
	sec, rest := int64(0), s[16:]
	if len(rest) >= 3 && rest[0] == ':' {
		if v, ok := num(17, 2); ok {
			sec, rest = v, s[19:]
		}
	}
	offset, ok := zoneOffsetMs(strings.TrimLeft(rest, " "))
	if !ok {
		return 0, false // a local time we cannot place
	}
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 {
		return 0, false
	}
	return ((daysFromCivil(y, mo, d)*24+h)*60+mi)*60_000 + sec*1000 - offset, true
}

// localZones are abbreviations of zones whose offset a message does not
// give; a time in one of them is not trusted.
var localZones = []string{"pst", "pdt", "mst", "mdt", "cst", "cdt", "est", "edt", "bst", "cet", "cest", "ist", "jst", "kst", "hkt", "sgt", "aest"}

// zoneOffsetMs reads what follows a time: nothing, Z, UTC or GMT is UTC; a
// numeric offset (+08:00, -0500) is applied; a named local zone is refused.
func zoneOffsetMs(z string) (int64, bool) {
	if z == "" || strings.HasPrefix(z, "z") || strings.HasPrefix(z, "utc") || strings.HasPrefix(z, "gmt") {
		return 0, true
	}
	if z[0] == '+' || z[0] == '-' {
		digits := strings.ReplaceAll(z[1:min(len(z), 6)], ":", "")
		if len(digits) < 2 {
			return 0, false
		}
		var hh, mm int64
		for i, c := range digits[:min(len(digits), 4)] {
			if c < '0' || c > '9' {
				return 0, false
			}
			if i < 2 {
				hh = hh*10 + int64(c-'0')
			} else {
				mm = mm*10 + int64(c-'0')
			}
		}
		off := (hh*60 + mm) * 60_000
		if z[0] == '-' {
			off = -off
		}
		return off, hh <= 14 && mm < 60
	}
	for _, zone := range localZones {
		if strings.HasPrefix(z, zone) && (len(z) == len(zone) || z[len(zone)] < 'a' || z[len(zone)] > 'z') {
			return 0, false
		}
	}
	return 0, true // words or punctuation follow: no zone given, UTC
}

// daysFromCivil is the days since 1970-01-01 of a proleptic Gregorian date
// (H. Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// relativeUnits maps a unit word to milliseconds; longer words first, so
// "minutes" is not read as "m" + "inutes".
var relativeUnits = []struct {
	word string
	ms   int64
}{
	{"hours", 3_600_000}, {"hour", 3_600_000}, {"hrs", 3_600_000}, {"hr", 3_600_000}, {"小时", 3_600_000}, {"h", 3_600_000},
	{"minutes", 60_000}, {"minute", 60_000}, {"mins", 60_000}, {"min", 60_000}, {"分钟", 60_000}, {"m", 60_000},
	{"seconds", 1000}, {"second", 1000}, {"secs", 1000}, {"sec", 1000}, {"秒", 1000}, {"s", 1000},
}

// relativeReset finds "try again in <n unit>[<n unit>…]", "retry in …",
// "wait …", or a Chinese "<n unit>后".
func relativeReset(msg string) int64 {
	for _, marker := range []string{"try again in ", "retry in ", "retry after ", "available in ", "wait ", "请在", "请于"} {
		if i := strings.Index(msg, marker); i >= 0 {
			if ms := durationAt(msg[i+len(marker):]); ms > 0 {
				return ms
			}
		}
	}
	if i := strings.Index(msg, "后"); i > 0 { // "3小时后重试": read back to the digits
		j := i
		for j > 0 && !(msg[j-1] >= '0' && msg[j-1] <= '9') {
			j--
		}
		for j > 0 && msg[j-1] >= '0' && msg[j-1] <= '9' {
			j--
		}
		return durationAt(msg[j:i])
	}
	return 0
}

// durationAt reads a run of "<number><unit>" parts ("1h30m", "20 minutes",
// "2 hours 5 minutes") from the start of s.
func durationAt(s string) int64 {
	var total int64
	for {
		s = strings.TrimLeft(s, " ")
		n, digits := int64(0), 0
		for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' && digits < 9 {
			n = n*10 + int64(s[digits]-'0')
			digits++
		}
		if digits == 0 {
			return total
		}
		s = strings.TrimLeft(s[digits:], " ")
		unit := int64(0)
		for _, u := range relativeUnits {
			if strings.HasPrefix(s, u.word) {
				unit, s = u.ms, s[len(u.word):]
				break
			}
		}
		if unit == 0 {
			return total
		}
		total += n * unit
		s = strings.TrimLeft(s, " ,and")
	}
}
