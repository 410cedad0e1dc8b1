package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// parseCSV reads a --csv output: the header, then rows keyed by column name.
func parseCSV(t *testing.T, data []byte) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v\n%s", err, data)
	}
	if len(recs) < 2 {
		t.Fatalf("csv has %d records:\n%s", len(recs), data)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = r[i]
		}
		rows = append(rows, row)
	}
	return rows
}

// parseJSON reads a --json output, one record per line.
func parseJSON(t *testing.T, data []byte) []JSONRecord {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var out []JSONRecord
	for {
		var r JSONRecord
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("json line %d: %v\n%s", len(out)+1, err, data)
		}
		out = append(out, r)
	}
	if n := bytes.Count(data, []byte("\n")); n != len(out) {
		t.Fatalf("%d lines for %d JSON records: not JSON Lines", n, len(out))
	}
	return out
}

func num(t *testing.T, row map[string]string, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[col], 64)
	if err != nil {
		t.Fatalf("column %s = %q: %v (row %v)", col, row[col], err, row)
	}
	return v
}

// checkOutputs checks that the CSV and JSON outputs of a run agree with its
// summary: intervals add up to the totals, the total row and summary line
// carry them, and every series has its columns.
func checkOutputs(t *testing.T, csvOut, jsonOut []byte, s Summary) {
	t.Helper()
	rows := parseCSV(t, csvOut)
	last := rows[len(rows)-1]
	if last["type"] != "total" {
		t.Fatalf("last CSV row is %q, want total", last["type"])
	}
	var msgs, failed, bytes float64
	for _, r := range rows[:len(rows)-1] {
		if r["type"] != "interval" {
			t.Fatalf("CSV row type %q", r["type"])
		}
		msgs += num(t, r, "msgs")
		failed += num(t, r, "failed")
		bytes += num(t, r, "bytes")
	}
	if msgs != float64(s.Msgs) || failed != float64(s.Failed) || bytes != float64(s.Bytes) {
		t.Fatalf("CSV intervals add up to msgs=%v failed=%v bytes=%v, summary %d %d %d", msgs, failed, bytes, s.Msgs, s.Failed, s.Bytes)
	}
	if num(t, last, "msgs") != float64(s.Msgs) || num(t, last, "bytes") != float64(s.Bytes) {
		t.Fatalf("CSV total row %v, summary msgs=%d bytes=%d", last, s.Msgs, s.Bytes)
	}
	for i, se := range s.Series {
		if c := num(t, last, se.Name+"_count"); c != float64(s.Latency[i].Count) {
			t.Fatalf("CSV %s_count = %v, want %d", se.Name, c, s.Latency[i].Count)
		}
		if p := num(t, last, se.Name+"_p99_ms"); p != roundMs(s.Latency[i].P99) {
			t.Fatalf("CSV %s_p99_ms = %v, want %v", se.Name, p, roundMs(s.Latency[i].P99))
		}
	}

	recs := parseJSON(t, jsonOut)
	sum := recs[len(recs)-1]
	if sum.Type != "summary" || sum.Run == nil {
		t.Fatalf("last JSON record %+v, want the summary with run options", sum)
	}
	var jmsgs int64
	for _, r := range recs[:len(recs)-1] {
		if r.Type != "interval" {
			t.Fatalf("JSON record type %q", r.Type)
		}
		jmsgs += r.Msgs
	}
	if len(recs)-1 != len(rows)-1 || jmsgs != s.Msgs || sum.Msgs != s.Msgs || sum.Failed != s.Failed || sum.Bytes != s.Bytes {
		t.Fatalf("JSON: %d intervals (CSV %d), msgs %d, summary %+v; want msgs %d", len(recs)-1, len(rows)-1, jmsgs, sum, s.Msgs)
	}
	for i, se := range s.Series {
		if sum.Latency[se.Name].Count != s.Latency[i].Count {
			t.Fatalf("JSON %s count %d, want %d", se.Name, sum.Latency[se.Name].Count, s.Latency[i].Count)
		}
		pts := sum.Percentiles[se.Name]
		if s.Latency[i].Count > 0 && (len(pts) != len(tablePercents) || pts[len(pts)-1].Count != s.Latency[i].Count) {
			t.Fatalf("JSON %s percentiles %+v", se.Name, pts)
		}
	}
}

func roundMs(d time.Duration) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(ms(d), 'f', 3, 64), 64)
	return v
}

// A report driven by hand: two intervals and a summary, in both formats.
func TestReportWritesParseableCSVAndJSON(t *testing.T) {
	start := time.Unix(0, 0)
	m := newMeter(produceSeries(true, "per send call"), 2, start)
	var live, csvOut, jsonOut bytes.Buffer
	rep, err := newReport(m, &live, &csvOut, &jsonOut, RunInfo{Command: "produce", Client: "native", Topic: "T", Rate: 100})
	if err != nil {
		t.Fatal(err)
	}
	m.recs[0].ok(1, 100, 2*time.Millisecond, time.Millisecond)
	m.recs[1].ok(1, 100, 4*time.Millisecond, time.Millisecond)
	rep.tick(start.Add(time.Second))
	m.recs[1].fail(1, errors.New("send to 127.0.0.1:10911 queue 2: SYSTEM_ERROR disk full"))
	m.recs[1].ok(1, 100, 8*time.Millisecond, 3*time.Millisecond)
	s, err := rep.finish(start.Add(1500*time.Millisecond), func(s Summary) string { return rateNote(100, s) })
	if err != nil {
		t.Fatal(err)
	}
	if s.Msgs != 3 || s.Failed != 1 || s.Elapsed != 1500*time.Millisecond {
		t.Fatalf("summary %+v", s)
	}
	checkOutputs(t, csvOut.Bytes(), jsonOut.Bytes(), s)
	rows := parseCSV(t, csvOut.Bytes())
	if len(rows) != 3 || num(t, rows[0], "msgs_per_s") != 2 || num(t, rows[1], "interval_s") != 0.5 || num(t, rows[1], "msgs_per_s") != 2 {
		t.Fatalf("CSV rows %v", rows)
	}
	// HdrHistogram reports a bucket's highest equivalent value: 4 ms is 4.001.
	if mx := num(t, rows[0], "latency_max_ms"); mx < 4 || mx > 4.004 || num(t, rows[0], "service_max_ms") != 1 {
		t.Fatalf("first interval latency %v", rows[0])
	}
	if !strings.Contains(jsonOut.String(), `"errors":[{"error":"send to 127.0.0.1:10911 queue 2: SYSTEM_ERROR disk full","msgs":1}]`) {
		t.Errorf("JSON summary lacks the failure's error:\n%s", jsonOut.String())
	}
	text := live.String()
	for _, want := range []string{"summary: 3 ok, 1 failed in 1.5s", "open loop: target 100 msgs/s, achieved 3 msgs/s (the senders fell behind",
		"latency: per send call, from its scheduled start", "service: per send call, from when it was sent", "p50 4ms", "99.9%",
		"failed: 1 msgs: send to 127.0.0.1:10911 queue 2: SYSTEM_ERROR disk full"} {
		if !strings.Contains(text, want) {
			t.Errorf("live output lacks %q:\n%s", want, text)
		}
	}
}

func TestOpenOutputs(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if _, err := OpenOutputs("-", "-", &stdout, &stderr); !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "--csv=- and --json=-") {
		t.Fatalf("both on stdout: %v", err)
	}
	dir := t.TempDir()
	same := filepath.Join(dir, "x")
	if _, err := OpenOutputs(same, same, &stdout, &stderr); !errors.Is(err, ErrBadOption) {
		t.Fatalf("one file for both: %v", err)
	}
	if _, err := OpenOutputs(filepath.Join(dir, "no", "such", "dir.csv"), "", &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "--csv=") {
		t.Fatalf("bad path: %v", err)
	}
	o, err := OpenOutputs("", "", &stdout, &stderr)
	if err != nil || o.Live != &stdout || o.CSV != nil || o.JSON != nil {
		t.Fatalf("no outputs: %+v %v", o, err)
	}
	jsonPath := filepath.Join(dir, "run.json")
	o, err = OpenOutputs("-", jsonPath, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if o.Live != &stderr || o.CSV != &stdout || o.JSON == nil {
		t.Fatalf("--csv -: live text must move to stderr: %+v", o)
	}
	if _, err := io.WriteString(o.JSON, "{}\n"); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(jsonPath); err != nil || string(b) != "{}\n" {
		t.Fatalf("json file %q %v", b, err)
	}
}
