// Command jsdrive runs one workload against a three-process JetStream R3
// cluster, the peer `make bench-compare` measures rocketraft against. It lives
// in its own module so the broker's go.mod does not carry nats-server.
//
// The parent starts three copies of itself in server mode (-serve i) on the
// ports it is given, creates an R3 file stream, runs the workload with nats.go
// and prints one JSON line: throughput, latency percentiles, and the CPU
// seconds the client (this process) and the servers (its children, from
// /proc) spent during the measured part only.
//
//	jsdrive -ports 14222,14223,14224 -routes 16222,16223,16224 -data DIR \
//	        -durable -workload async -n 100000 -size 1024 -window 256
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func main() {
	var (
		serve     = flag.Int("serve", -1, "internal: run server i of the cluster until SIGTERM")
		ports     = flag.String("ports", "", "client ports of the three servers, comma-separated (required)")
		routes    = flag.String("routes", "", "cluster (route) ports of the three servers, comma-separated (required)")
		data      = flag.String("data", "", "store root; each server uses <data>/n<i> (required)")
		durable   = flag.Bool("durable", false, "sync_interval: always (fsync before every ack); default: JetStream's lazy fsync")
		workload  = flag.String("workload", "async", "async (one publisher, -window in flight) or sync (-producers publishers, one at a time each)")
		n         = flag.Int("n", 100000, "messages")
		size      = flag.Int("size", 1024, "body bytes")
		window    = flag.Int("window", 256, "async: publishes in flight")
		producers = flag.Int("producers", 1, "sync: concurrent publishers")
		procs     = flag.Int("server-procs", 0, "GOMAXPROCS of each server process (0: Go's default); the driver keeps Go's default")
	)
	flag.Parse()
	cp, err1 := parsePorts(*ports)
	rp, err2 := parsePorts(*routes)
	if err := errors.Join(err1, err2); err != nil || *data == "" {
		fmt.Fprintln(os.Stderr, "jsdrive: -ports, -routes (three ports each) and -data are required:", err)
		os.Exit(2)
	}
	if *serve >= 0 {
		runServer(*serve, cp, rp, *data, *durable)
		return
	}
	if *procs < 0 {
		fmt.Fprintln(os.Stderr, "jsdrive: -server-procs must be 0 (Go's default) or more, not", *procs)
		os.Exit(2)
	}
	res, err := drive(cp, rp, *data, *durable, *procs, *workload, *n, *size, *window, *producers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsdrive:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

func parsePorts(s string) ([]int, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%q: want three ports", s)
	}
	out := make([]int, 3)
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v <= 0 || v > 65535 {
			return nil, fmt.Errorf("%q: port %q is not 1..65535", s, p)
		}
		out[i] = v
	}
	return out, nil
}

func runServer(i int, cp, rp []int, data string, durable bool) {
	var routeURLs []string
	for _, p := range rp {
		routeURLs = append(routeURLs, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	opts := &server.Options{
		ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: cp[i],
		JetStream: true, StoreDir: filepath.Join(data, fmt.Sprintf("n%d", i)), SyncAlways: durable,
		Cluster: server.ClusterOpts{Name: "bench", Host: "127.0.0.1", Port: rp[i]},
		Routes:  server.RoutesFromStr(strings.Join(routeURLs, ",")),
		NoLog:   true, NoSigs: true,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsdrive server:", err)
		os.Exit(1)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		fmt.Fprintln(os.Stderr, "jsdrive server: not ready after 30s")
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	s.Shutdown()
	s.WaitForShutdown()
}

// Result is one run's JSON line; the compare harness reads these names.
type Result struct {
	System       string  `json:"system"`
	Workload     string  `json:"workload"`
	N            int     `json:"n"`
	Errors       int     `json:"errors"`
	Seconds      float64 `json:"seconds"`
	MsgsPerSec   float64 `json:"msgsPerSec"`
	P50Ms        float64 `json:"p50Ms"`
	P99Ms        float64 `json:"p99Ms"`
	ClientCPUSec float64 `json:"clientCpuSec"`
	ServerCPUSec float64 `json:"serverCpuSec"`
}

func drive(cp, rp []int, data string, durable bool, procs int, workload string, n, size, window, producers int) (Result, error) {
	res := Result{System: "jetstream-lazy", Workload: workload, N: n}
	if durable {
		res.System = "jetstream-durable"
	}
	if err := os.RemoveAll(data); err != nil {
		return res, err
	}
	self, err := os.Executable()
	if err != nil {
		return res, err
	}
	var children []*exec.Cmd
	defer func() {
		for _, c := range children {
			_ = c.Process.Signal(syscall.SIGTERM)
			_ = c.Wait()
		}
	}()
	for i := range 3 {
		args := []string{"-serve", strconv.Itoa(i), "-ports", joinInts(cp), "-routes", joinInts(rp), "-data", data}
		if durable {
			args = append(args, "-durable")
		}
		c := exec.Command(self, args...)
		c.Stderr = os.Stderr
		if procs > 0 {
			c.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
		}
		if err := c.Start(); err != nil {
			return res, err
		}
		children = append(children, c)
	}
	var urls []string
	for _, p := range cp {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var nc *nats.Conn
	deadline := time.Now().Add(30 * time.Second)
	for {
		if nc, err = nats.Connect(strings.Join(urls, ",")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("connect: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(window))
	if err != nil {
		return res, err
	}
	ctx := context.Background()
	if err := createStream(ctx, js, "BENCH"); err != nil {
		return res, err
	}
	body := make([]byte, size)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	// Warm-up outside the measured part (routes, stream leader, page cache):
	// a tenth of the run, at least 2000, as the compare harness does for the
	// RocketMQ-protocol systems.
	warm := max(2000, n/10)
	for range warm {
		if _, err := js.Publish(ctx, "BENCH", body); err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
	}

	pids := make([]int, len(children))
	for i, c := range children {
		pids[i] = c.Process.Pid
	}
	cpu0, srv0 := selfCPU(), childrenCPU(pids)
	start := time.Now()
	var lats []time.Duration
	switch workload {
	case "async":
		lats, res.Errors, err = runAsync(js, body, n)
	case "sync":
		lats, res.Errors, err = runSync(ctx, js, body, n, producers)
	default:
		err = fmt.Errorf("workload %q: want async or sync", workload)
	}
	if err != nil {
		return res, err
	}
	el := time.Since(start)
	res.ClientCPUSec = selfCPU() - cpu0
	res.ServerCPUSec = childrenCPU(pids) - srv0
	res.Seconds = el.Seconds()
	res.MsgsPerSec = float64(n-res.Errors) / el.Seconds()
	slices.Sort(lats)
	res.P50Ms, res.P99Ms = pctMs(lats, 0.50), pctMs(lats, 0.99)
	if si, err := js.Stream(ctx, "BENCH"); err == nil {
		if info, err := si.Info(ctx); err == nil && info.State.Msgs < uint64(n-res.Errors+warm) {
			return res, fmt.Errorf("stream holds %d messages, want at least %d acknowledged", info.State.Msgs, n-res.Errors+warm)
		}
	}
	return res, nil
}

func createStream(ctx context.Context, js jetstream.JetStream, name string) error {
	cfg := jetstream.StreamConfig{Name: name, Subjects: []string{name}, Replicas: 3, Storage: jetstream.FileStorage}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := js.CreateStream(ctx, cfg)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("create stream: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runAsync publishes n messages with at most the context's window in flight;
// latency is publish to ack of each message.
func runAsync(js jetstream.JetStream, body []byte, n int) ([]time.Duration, int, error) {
	type sent struct {
		f  jetstream.PubAckFuture
		t0 time.Time
	}
	q := make(chan sent, 4096)
	lats := make([]time.Duration, 0, n)
	errs := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := range q {
			select {
			case <-s.f.Ok():
				lats = append(lats, time.Since(s.t0))
			case <-s.f.Err():
				errs++
			}
		}
	}()
	for range n {
		t0 := time.Now()
		// A full window waits for acks (closed loop) instead of failing after
		// nats.go's default 200 ms stall.
		f, err := js.PublishAsync("BENCH", body, jetstream.WithStallWait(time.Minute))
		if err != nil {
			close(q)
			<-done
			return nil, errs, err
		}
		q <- sent{f, t0}
	}
	<-js.PublishAsyncComplete()
	close(q)
	<-done
	return lats, errs, nil
}

// runSync has producers publishers, each sending its share one at a time.
func runSync(ctx context.Context, js jetstream.JetStream, body []byte, n, producers int) ([]time.Duration, int, error) {
	var (
		mu   sync.Mutex
		lats = make([]time.Duration, 0, n)
		errs int
		wg   sync.WaitGroup
	)
	for p := range producers {
		share := n / producers
		if p < n%producers {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, share)
			bad := 0
			for range share {
				t0 := time.Now()
				if _, err := js.Publish(ctx, "BENCH", body); err != nil {
					bad++
					continue
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, local...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	return lats, errs, nil
}

func pctMs(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(float64(len(sorted)-1)*p)]) / float64(time.Millisecond)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// selfCPU is this process's user+system CPU seconds so far.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// childrenCPU sums utime+stime of the live processes pids from /proc.
func childrenCPU(pids []int) float64 {
	total := 0.0
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name; utime and stime are
		// fields 14 and 15 of the whole line, in clock ticks (100 per second).
		s := string(b)
		rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(rest) < 13 {
			continue
		}
		u, _ := strconv.ParseFloat(rest[11], 64)
		k, _ := strconv.ParseFloat(rest[12], 64)
		total += (u + k) / 100
	}
	return total
}
