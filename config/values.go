package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Value parsers and formatters shared by the broker and namesrv key tables. A
// parser's error text is the rule shown to the operator, so it says what a good
// value looks like, not what went wrong inside strconv.

func parseInt(s string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("must be an integer in %d..%d", lo, hi)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("must be %d..%d", lo, hi)
	}
	return n, nil
}

// parseBool is stricter than Java's Boolean.parseBoolean, which reads any typo
// as false: "ture" must not silently disable a feature.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("must be true or false")
}

// parseDuration takes Go syntax ("1s", "500ms"). With bareMillis, a plain integer
// is milliseconds, as RocketMQ's *Interval keys are; our own keys require a unit so
// "raftElectionTimeout=1000" cannot be misread as seconds.
func parseDuration(s string, bareMillis bool) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if bareMillis {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			if n < 0 || n > int64(maxDuration/time.Millisecond) {
				return 0, errors.New("must be a non-negative number of milliseconds")
			}
			return time.Duration(n) * time.Millisecond, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if bareMillis {
			return 0, errors.New(`must be milliseconds ("500") or a duration ("500ms", "1s")`)
		}
		return 0, errors.New(`must be a duration with a unit ("500ms", "1s", "2m")`)
	}
	return d, nil
}

const maxDuration = time.Duration(1<<63 - 1)

// formatMillis renders a duration the RocketMQ way (plain milliseconds) when exact.
func formatMillis(d time.Duration) string {
	if d%time.Millisecond == 0 {
		return strconv.FormatInt(d.Milliseconds(), 10)
	}
	return d.String()
}

// parseHours reads fileReservedTime: RocketMQ's plain integer hours, or Go syntax ("36h").
func parseHours(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > int64(maxDuration/time.Hour) {
			return 0, errors.New("must be a non-negative number of hours")
		}
		return time.Duration(n) * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New(`must be hours ("72") or a duration ("36h")`)
	}
	return d, nil
}

func formatHours(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10)
	}
	return d.String()
}

// parseDeleteWhen reads RocketMQ's deleteWhen: hours of day separated by ';'
// ("04", "04;16"), as MessageStoreConfig.deleteWhen and UtilAll.isItTimeToDo
// read it. Unlike Java, which skips an item that does not parse, every item
// must be an hour 0..23 and appear once: "04;61" would otherwise quietly mean
// "04" only.
func parseDeleteWhen(s string) ([]int, error) {
	var hours []int
	for _, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		n, err := strconv.Atoi(item)
		if err != nil || n < 0 || n > 23 {
			if strings.Contains(s, ";") {
				return nil, fmt.Errorf("item %q must be an hour of day 00..23 (a list is ';'-separated: 04;16)", item)
			}
			return nil, errors.New("must be an hour of day 00..23, or a ';'-separated list of them (04;16)")
		}
		if slices.Contains(hours, n) {
			return nil, fmt.Errorf("hour %02d is listed twice", n)
		}
		hours = append(hours, n)
	}
	return hours, nil
}

// formatDeleteWhen writes hours the way Apache's samples do: two digits each,
// ';'-separated.
func formatDeleteWhen(hours []int) string {
	items := make([]string, len(hours))
	for i, h := range hours {
		items[i] = fmt.Sprintf("%02d", h)
	}
	return strings.Join(items, ";")
}

// checkHostPort validates "host:port"; an empty host is allowed only when
// allowEmptyHost (listen addresses, where it means every interface).
func checkHostPort(s string, allowEmptyHost bool) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return errors.New("must be host:port")
	}
	if host == "" && !allowEmptyHost {
		return errors.New("must be host:port with a non-empty host")
	}
	if strings.ContainsAny(host, " \t;,") {
		return errors.New("host must not contain blanks, ';' or ','")
	}
	if _, err := parsePort(port); err != nil {
		return errors.New("port " + err.Error())
	}
	return nil
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, errors.New("must be 1..65535")
	}
	return n, nil
}

// portOf returns the port of a valid host:port, or 0.
func portOf(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// splitList splits a ';'-separated list, trimming blanks and dropping empty items
// (a trailing ';' is common in RocketMQ files).
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ";") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// parseAddrList reads namesrvAddr: "host:port;host:port". Empty means no nameserver.
func parseAddrList(s string) ([]string, error) {
	addrs := splitList(s)
	for _, a := range addrs {
		if err := checkHostPort(a, false); err != nil {
			return nil, fmt.Errorf("item %q %w", a, err)
		}
	}
	return addrs, nil
}

// parsePeers reads dLegerPeers: "n0-host:port;n1-host:port". The id ends at the
// first '-', as in DLedger, so ids cannot contain '-'. Duplicates are left to
// Validate, which also sees Peers built in code.
func parsePeers(s string) ([]Peer, error) {
	items := splitList(s)
	if len(items) == 0 {
		return nil, errors.New("must list at least one peer as id-host:port")
	}
	peers := make([]Peer, 0, len(items))
	for _, item := range items {
		id, addr, ok := strings.Cut(item, "-")
		id, addr = strings.TrimSpace(id), strings.TrimSpace(addr)
		if !ok || id == "" {
			return nil, fmt.Errorf("item %q must be id-host:port (e.g. n0-127.0.0.1:40911)", item)
		}
		if err := checkHostPort(addr, false); err != nil {
			return nil, fmt.Errorf("item %q address %w", item, err)
		}
		peers = append(peers, Peer{ID: id, Addr: addr})
	}
	return peers, nil
}

func formatPeers(peers []Peer) string {
	items := make([]string, len(peers))
	for i, p := range peers {
		items[i] = p.ID + "-" + p.Addr
	}
	return strings.Join(items, ";")
}

// parseDelayLevels reads messageDelayLevel: blank-separated levels, each a
// number with RocketMQ's unit s, m, h or d ("1s 5s 10s 30s 1m ... 2h"); Go
// syntax ("500ms", "1h30m") is accepted too.
func parseDelayLevels(s string) ([]time.Duration, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, errors.New("must list at least one delay level (e.g. \"1s 5s 10s\")")
	}
	levels := make([]time.Duration, 0, len(fields))
	for i, f := range fields {
		d, err := parseDelayLevel(f)
		if err != nil {
			return nil, fmt.Errorf("level %d %q must be a positive number with unit s, m, h or d", i+1, f)
		}
		levels = append(levels, d)
	}
	return levels, nil
}

func parseDelayLevel(f string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(f, "d"); ok {
		days, err := strconv.ParseInt(n, 10, 64)
		if err != nil || days <= 0 || days > int64(maxDuration/(24*time.Hour)) {
			return 0, errors.New("bad days")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(f)
	if err != nil || d <= 0 {
		return 0, errors.New("bad level")
	}
	return d, nil
}

func formatDelayLevels(levels []time.Duration) string {
	items := make([]string, len(levels))
	for i, d := range levels {
		switch {
		case d%(24*time.Hour) == 0:
			items[i] = strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
		case d%time.Hour == 0:
			items[i] = strconv.FormatInt(int64(d/time.Hour), 10) + "h"
		case d%time.Minute == 0:
			items[i] = strconv.FormatInt(int64(d/time.Minute), 10) + "m"
		case d%time.Second == 0:
			items[i] = strconv.FormatInt(int64(d/time.Second), 10) + "s"
		default:
			items[i] = d.String()
		}
	}
	return strings.Join(items, " ")
}

// logLevels are the names hclog.LevelFromString accepts that we document.
var logLevels = []string{"trace", "debug", "info", "warn", "error"}

func parseLogLevel(s string) (string, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	for _, ok := range logLevels {
		if l == ok {
			return l, nil
		}
	}
	return "", errors.New("must be one of " + strings.Join(logLevels, "|"))
}

// editDistance is Levenshtein distance, used to suggest a key for a typo.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkName validates brokerClusterName, brokerName and dLegerGroup: they become
// route keys, directory names and raft ids, so only RocketMQ's topic characters.
func checkName(s string) string {
	if s == "" {
		return "must not be empty"
	}
	if len(s) > 127 {
		return "must be at most 127 characters"
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "must contain only letters, digits, '-', '_' and '.'"
		}
	}
	return ""
}

// checkHost validates an IP address or DNS name (no port).
func checkHost(s string) string {
	if s == "" {
		return "must not be empty"
	}
	if net.ParseIP(s) != nil {
		return ""
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return "must be an IP address or host name"
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return "must be an IP address or host name"
			}
		}
	}
	return ""
}

// minSecretLength is nameserver.MinBrokerSecretLength (config imports no project
// package): the shortest namesrvAuthSecret, 16 characters.
const minSecretLength = 16

// redactSecret is how a secret appears in problems and docs: never its text.
func redactSecret(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("(secret, %d characters)", len(s))
}

// secretRule is the rule an optional secret breaks, or "".
func secretRule(s string) string {
	if s != "" && len(s) < minSecretLength {
		return fmt.Sprintf("must have at least %d characters when set", minSecretLength)
	}
	return ""
}

// readableFile is the rule a path breaks when it names no readable file, or "".
func readableFile(path string) string {
	if _, err := os.Stat(path); err != nil {
		return "must name a readable file: " + err.Error()
	}
	return ""
}
