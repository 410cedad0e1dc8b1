# rocketraft — every target a newcomer or CI needs. `make help` lists them.
GO        ?= go
BIN       := bin/rocketraft
PKGS      := ./...
# Unit tests stay fast; integration and chaos suites have their own targets.
TEST_FLAGS ?= -count=1 -timeout 12m
FUZZTIME  ?= 20s
MVN       ?= mvn

.PHONY: help build test race lint fuzz bench integration integration-java integration-java-4.9 integration-java-5 \
	integration-java-spring integration-java-short integration-java-pending chaos chaos-short chaos-wal integration-wal soak run clean bench-compare bench-consume

help:
	@grep -E '^[a-z0-9.-]+:' Makefile | sed 's/:.*//' | sort | tr '\n' ' '; echo

build:
	$(GO) build -o $(BIN) ./cmd/rocketraft

# test: unit tests of every package plus the short integration subset (real processes,
# real rocketmq-client-go), then the Kubernetes manifests' test (a nested module).
# This is the command README.md and .ci/run use.
test: build
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) $(GO) test $(TEST_FLAGS) $(PKGS)
	cd deploy/k8s && $(GO) test $(TEST_FLAGS) ./...

race:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# lint: gofmt, go vet, then staticcheck with its default checks. staticcheck is a tool
# dependency in go.mod, so `go tool` fetches and builds the pinned version itself.
# deploy/k8s is a module of its own (k8s.io/api stays out of ours; ./... skips it):
# vet it there, and run the same staticcheck binary (`go tool -n` prints its path).
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo 'gofmt: files above need formatting'; exit 1)
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)
	sc=$$($(GO) tool -n staticcheck) && cd deploy/k8s && $(GO) vet ./... && $$sc ./...
	$(GO) vet -tags perf ./integration/perf/
	sc=$$($(GO) tool -n staticcheck) && cd integration/perf/jetstream && $(GO) vet ./... && $$sc ./...

# fuzz: each target for FUZZTIME (go test allows one -fuzz target per run).
fuzz:
	$(GO) test ./store -run '^$$' -fuzz '^FuzzDecodeMessage$$' -fuzztime $(FUZZTIME)
	$(GO) test ./store -run '^$$' -fuzz '^FuzzRecoveryScan$$' -fuzztime $(FUZZTIME)
	$(GO) test ./fsm -run '^$$' -fuzz '^FuzzDecodeCommand$$' -fuzztime $(FUZZTIME)
	$(GO) test ./transport/sign -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(FUZZTIME)
	@if grep -q 'func FuzzDecodeFrame' transport/*_test.go 2>/dev/null; then \
		$(GO) test ./transport -run '^$$' -fuzz '^FuzzDecodeFrame$$' -fuzztime $(FUZZTIME); fi
	@if grep -q 'func FuzzDecodeHeader' transport/*_test.go 2>/dev/null; then \
		$(GO) test ./transport -run '^$$' -fuzz '^FuzzDecodeHeader$$' -fuzztime $(FUZZTIME); fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./store ./fsm ./raftlog ./transport

# bench-compare: rocketraft side by side with JetStream R3 (durable and lazy fsync; nats-server
# in its own module, integration/perf/jetstream) and Apache RocketMQ 5.5.0 DLedger (its defaults
# and SYNC_FLUSH; jars from Maven Central via integration/perf/rocketmq), three server processes
# each, interleaved rounds (integration/perf/doc.go). Slow: about an hour at the defaults
# PERF_N=100000 PERF_ROUNDS=3; PERF_SYSTEMS and PERF_WORKLOADS select; PERF_ORDER=workload keeps
# every group up for the round and runs each workload on every system in turn. Report:
# integration/perf/results.md (+ .jsonl with every run).
bench-compare: build
	cd integration/perf/jetstream && $(GO) build -o $(CURDIR)/bin/jsdrive .
	cd integration/perf/rocketmq && $(MVN) -q -B package
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) PERF_JSDRIVE=$(CURDIR)/bin/jsdrive $(if $(PERF_N),PERF_N=$(PERF_N)) $(if $(PERF_ROUNDS),PERF_ROUNDS=$(PERF_ROUNDS)) $(if $(PERF_ORDER),PERF_ORDER=$(PERF_ORDER)) \
	PERF_ROCKETMQ_LIB=$(CURDIR)/integration/perf/rocketmq/target/lib PERF_OUT=$(CURDIR)/integration/perf/results.md \
	$(GO) test -tags perf -count=1 -timeout 4h -v -run TestBenchCompare ./integration/perf/

# bench-consume: issue 11's consumer targets on a fresh group per round (integration/perf/consume_test.go):
# a PERF_BACKLOG_MIB (default 1024) MiB backlog produced async and drained by the official Go push
# consumer (target: drain >= 2x produce), then born -> consumed at half the produce rate for PERF_LIVE
# (default 60s; target: p99 <= 10 ms; PERF_LIVE_RATE fixes the live msgs/s for a fair A/B of two builds).
# PERF_CONSUME_BATCH (default 32) is the consumers' listener batch (ConsumeMessageBatchMaxSize).
# PERF_ROUNDS (default 3). Report: integration/perf/consume-results.md.
bench-consume: build
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) $(if $(PERF_ROUNDS),PERF_ROUNDS=$(PERF_ROUNDS)) $(if $(PERF_BACKLOG_MIB),PERF_BACKLOG_MIB=$(PERF_BACKLOG_MIB)) \
	$(if $(PERF_LIVE),PERF_LIVE=$(PERF_LIVE)) $(if $(PERF_LIVE_RATE),PERF_LIVE_RATE=$(PERF_LIVE_RATE)) $(if $(PERF_CONSUME_BATCH),PERF_CONSUME_BATCH=$(PERF_CONSUME_BATCH)) PERF_SYSTEMS=$(or $(PERF_SYSTEMS),rocketraft) PERF_CONSUME_OUT=$(CURDIR)/integration/perf/consume-results.md \
	$(GO) test -tags perf -count=1 -timeout 3h -v -run TestConsumeTargets ./integration/perf/

integration: build
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) ROCKETRAFT_INTEGRATION=1 $(GO) test -count=1 -timeout 30m ./integration/...

# integration-wal: the integration suite on raft-wal (raftLogStore=wal); the default,
# auto, gives new nodes the commitlog kind (decision 0016).
integration-wal: build
	ROCKETRAFT_RAFTLOGSTORE=wal ROCKETRAFT_BIN=$(CURDIR)/$(BIN) ROCKETRAFT_INTEGRATION=1 $(GO) test -count=1 -timeout 30m ./integration/...

# integration-java: the Apache RocketMQ Java clients against real rocketraft processes
# (integration/java/README.md, results in docs/compatibility.md): the client matrix with
# rocketmq-client 4.9.8, the same matrix with 5.5.0 (each with the ACL, mqadmin and TLS
# suites, mqadmin at the client's version), then rocketmq-spring-boot-starter. Needs Java 17
# and Maven; the first run downloads the dependencies from Maven Central. integration-java-short is the CI subset (tag ci, 4.9.8);
# integration-java-pending runs the cases that wait for broker work (tags pending-broker*).
JAVA_IT    := integration/java
MVN_JAVA    = ROCKETRAFT_BIN=$(CURDIR)/$(BIN) $(MVN) -q -f $(JAVA_IT)/pom.xml
JAVA_ONLY   = -Dtls.skip=true -Dheader.skip=true

integration-java: integration-java-4.9 integration-java-5 integration-java-spring

integration-java-4.9: build
	$(MVN_JAVA) test

integration-java-5: build
	$(MVN_JAVA) -P client-5 test

integration-java-spring: build
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) $(MVN) -q -f $(JAVA_IT)/spring/pom.xml test

# Not quiet: CI's log keeps surefire's "Tests run:" lines (-B -ntp: no colours, no download noise).
integration-java-short: build
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) $(MVN) -B -ntp -f $(JAVA_IT)/pom.xml test -Dgroups=ci $(JAVA_ONLY)

integration-java-pending: build
	$(MVN_JAVA) test -Dgroups='pending-broker | pending-broker-5x' -DexcludedGroups= -Dheader.skip=true -Dtls.skip=true; a=$$?; \
	$(MVN_JAVA) -P client-5 test -Dgroups='pending-broker | pending-broker-5x' -DexcludedGroups= -Dheader.skip=true; b=$$?; \
	test $$a -eq 0 -a $$b -eq 0

# integration-dashboard: apache/rocketmq-exporter and apache/rocketmq-dashboard built from source
# (neither is on Maven Central or npm) and run against real processes; the dashboard in headless
# Chromium (integration/ecosystem/README.md). Needs ROCKETMQ_EXPORTER_SRC and ROCKETMQ_DASHBOARD_SRC
# (a checkout or a git dir each); without them it says so and succeeds, or fails with
# ECOSYSTEM_REQUIRE=1. make integration-java covers their requests with DefaultMQAdminExt anyway.
.PHONY: integration-dashboard
integration-dashboard: build
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) MVN=$(MVN) integration/ecosystem/run.sh

# chaos: the whole fault matrix of docs/reliability.md (about 45 minutes here; report in
# integration/chaos/report.txt), every process-based scenario beside a background load of Go and
# Java producers. chaos-short: the CI subset (K1 with 3 kills, N1, D1, D4, B2 and B2 with ACL on, R2; 3 minutes).
# Both first run .ci/deps.sh (idempotent): without nft the network-namespace scenarios (R1-R5) skip.
chaos: build chaos-java chaos-deps
	rm -f integration/chaos/report.txt
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) ROCKETRAFT_CHAOS_JAVA=$(CURDIR)/$(CHAOS_JAVA) ROCKETRAFT_CHAOS=full ROCKETRAFT_CHAOS_REPORT=report.txt $(GO) test -count=1 -timeout 90m -v ./integration/chaos/

# chaos-wal: make chaos on raft-wal (raftLogStore=wal); make chaos runs the default.
chaos-wal: build chaos-java chaos-deps
	rm -f integration/chaos/report.txt
	ROCKETRAFT_RAFTLOGSTORE=wal ROCKETRAFT_BIN=$(CURDIR)/$(BIN) ROCKETRAFT_CHAOS_JAVA=$(CURDIR)/$(CHAOS_JAVA) ROCKETRAFT_CHAOS=full ROCKETRAFT_CHAOS_REPORT=report.txt $(GO) test -count=1 -timeout 90m -v ./integration/chaos/

.PHONY: chaos-deps
chaos-deps:
	@./.ci/deps.sh

# chaos-java: the Java producers of every scenario's background load (integration/java/chaosload,
# rocketmq-client 4.9.8 from Maven Central; offline once ~/.m2 holds it) into $(CHAOS_JAVA).
# Without Maven it says so and the scenarios run their load with the Go clients only.
CHAOS_JAVA := $(JAVA_IT)/target/chaosload
.PHONY: chaos-java
chaos-java:
	@if command -v $(MVN) >/dev/null 2>&1; then $(MVN) -q -B -f $(JAVA_IT)/chaosload/pom.xml package; \
	else echo "chaos-java: no $(MVN) on PATH: the chaos load runs without Java producers"; fi

# soak: SOAK (default 1h) of mixed load with a fault every minute drawn by a seed
# (ROCKETRAFT_CHAOS_SOAK_SEED repeats one); anonymous RSS, goroutines, open files and disk sampled
# every 10 s and judged for growth; report in integration/chaos/soak-report.txt.
SOAK ?= 1h
soak: build chaos-java chaos-deps
	rm -f integration/chaos/soak-report.txt
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) ROCKETRAFT_CHAOS_JAVA=$(CURDIR)/$(CHAOS_JAVA) ROCKETRAFT_CHAOS=soak ROCKETRAFT_CHAOS_SOAK=$(SOAK) ROCKETRAFT_CHAOS_REPORT=soak-report.txt \
	$(GO) test -count=1 -timeout 3h -v -run '^TestSoak$$' ./integration/chaos/

chaos-short: build chaos-java chaos-deps
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) ROCKETRAFT_CHAOS_JAVA=$(CURDIR)/$(CHAOS_JAVA) ROCKETRAFT_CHAOS=short $(GO) test -count=1 -timeout 10m -v ./integration/chaos/

run: build
	./$(BIN) dev --data-dir ./data/dev

clean:
	rm -rf bin data

# The web console's front-end (console/web, TypeScript; docs/console.md). The bundle in
# console/dist is committed, so `go build` needs no npm; `go test ./console` checks it against
# the sources' hashes. console-build: npm ci && build into console/dist (commit the result);
# console-check: rebuild in memory and compare byte for byte with what is committed;
# console-test: headless Debian Chromium (playwright-core) against a real nameserver, three
# brokers and `rocketraft console`, screenshots into docs/console; console-test-short: the CI subset.
CONSOLE_WEB := console/web
.PHONY: console-deps console-build console-check console-test console-test-short
# npm ci wipes node_modules; run it only when the lockfile is newer than the last install.
console-deps: $(CONSOLE_WEB)/node_modules/.package-lock.json
$(CONSOLE_WEB)/node_modules/.package-lock.json: $(CONSOLE_WEB)/package-lock.json
	cd $(CONSOLE_WEB) && npm ci --no-audit --no-fund --loglevel=error

console-build: console-deps
	cd $(CONSOLE_WEB) && npx tsc --noEmit -p . && node build.mjs

console-check: console-deps
	cd $(CONSOLE_WEB) && node build.mjs --check && npx tsc --noEmit -p . && npx prettier --check src test build.mjs && node --test test/unit/
	$(GO) test -count=1 -run 'TestDist' ./console/

console-test: build console-deps
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -tags consolebrowser -count=1 -timeout 10m -v -run TestBrowser ./console/

console-test-short: build console-deps
	ROCKETRAFT_BIN=$(CURDIR)/$(BIN) CONSOLE_BROWSER=short $(GO) test -tags consolebrowser -count=1 -timeout 5m -v -run TestBrowser ./console/
