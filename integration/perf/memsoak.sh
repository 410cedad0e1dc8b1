#!/usr/bin/env bash
# memsoak.sh: issue 11's memory target. A fresh `rocketraft dev` group takes paced async
# sends for DURATION (default 600s) at RATE msgs/s (default 7500, the rate of the earlier
# passes in docs/performance.md); the anonymous RSS (RssAnon, so page cache and the mapped
# CommitLog are excluded) of every broker is sampled every 10 s. It prints, per broker,
# the mean of minutes 1-3 (after a minute of warm-up) against the mean of the last two
# minutes, and their ratio (target: within 0.90-1.10).
#
# usage: integration/perf/memsoak.sh [RATE] [DURATION]   (from the repository root, after make build)
set -euo pipefail
rate=${1:-7500}
duration=${2:-600s}
bin=${ROCKETRAFT_BIN:-./bin/rocketraft}
dir=$(mktemp -d)
trap 'kill $dev 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"' EXIT

"$bin" dev --data-dir "$dir/dev" --console "" --broker-port 12911 --namesrv-port 12876 --raft-port 42911 >"$dir/dev.log" 2>&1 &
dev=$!
sleep 8
ns=127.0.0.1:12876
pids=$(pgrep -f "broker -c $dir/dev/conf/" || true)
[ -n "$pids" ] || { echo "memsoak: no broker processes; see $dir/dev.log" >&2; exit 1; }

"$bin" bench produce --namesrv $ns --mode async --producers 4 --window 64 --rate "$rate" --duration "$duration" \
	--key-prefix "" >"$dir/bench.log" 2>&1 &
bench=$!
samples="$dir/samples"
while kill -0 $bench 2>/dev/null; do
	t=$(date +%s)
	for p in $pids; do
		node=$(tr '\0' ' ' </proc/$p/cmdline | grep -o 'broker-[a-z]-n[0-9]*' || echo "$p")
		kb=$(awk '/^RssAnon:/ {print $2}' /proc/$p/status 2>/dev/null || echo 0)
		echo "$t $node $kb" >>"$samples"
	done
	sleep 10
done
wait $bench || { echo "memsoak: bench failed:" >&2; tail -5 "$dir/bench.log" >&2; exit 1; }
grep -E '^(summary|failed)' "$dir/bench.log" || tail -3 "$dir/bench.log"

# Per broker: drop the first minute, then compare minutes 1-3 with the last two.
awk '
{ t[NR]=$1; p[NR]=$2; kb[NR]=$3; if (NR==1) t0=$1; if ($1>tmax) tmax=$1 }
END {
	for (i=1; i<=NR; i++) {
		rel=t[i]-t0
		if (rel < 60) continue
		if (rel < 180) { a[p[i]]+=kb[i]; na[p[i]]++ }
		if (t[i] > tmax-120) { b[p[i]]+=kb[i]; nb[p[i]]++ }
		if (!(p[i] in mn) || kb[i]<mn[p[i]]) mn[p[i]]=kb[i]
		if (kb[i]>mx[p[i]]) mx[p[i]]=kb[i]
	}
	printf "| broker | RssAnon range after 1 min | mean of min 1-3 | mean of the last 2 min | ratio |\n|---|---|---|---|---|\n"
	for (q in a) printf "| %s | %.1f-%.1f MiB | %.1f MiB | %.1f MiB | %.2f |\n", q, mn[q]/1024, mx[q]/1024, a[q]/na[q]/1024, b[q]/nb[q]/1024, (b[q]/nb[q])/(a[q]/na[q])
}' "$samples"
