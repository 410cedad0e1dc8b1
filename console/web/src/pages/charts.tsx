// Charts: throughput, replication lag, fsync and send latency and consumer lag over the console's
// in-memory window (about ten minutes), refreshed every two seconds with only the new points.
import { useEffect, useState } from "preact/hooks";
import { api, type Series } from "../api";
import { Chart } from "../chart";
import { merge } from "../series";
import { Problem } from "../ui";

// Each chart draws the series of the names it lists; a chart of several names tells the lines
// apart by the short name given. A series the console sends that no chart lists gets a chart of
// its own (below), so a new sample shows up before this list learns its title.
const charts: { title: string; names: Record<string, string>; unit: string }[] = [
  { title: "Throughput (messages/s)", names: { messagesInPerSec: "in", messagesOutPerSec: "out" }, unit: "msg/s" },
  { title: "Replication lag (entries)", names: { replicationLagEntries: "" }, unit: "entries" },
  { title: "Replication lag (bytes)", names: { replicationLagBytes: "" }, unit: "B" },
  {
    title: "Latency: raft log fsync, send p99",
    names: { fsyncLatencyMs: "fsync", putLatencyP99Ms: "send p99" },
    unit: "ms",
  },
  { title: "Consumer lag", names: { consumerLag: "" }, unit: "msgs" },
];
const listed = new Set(charts.flatMap((c) => Object.keys(c.names)));

export function ChartsPage() {
  const [series, setSeries] = useState<Series[]>([]);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    let since: number | undefined = undefined;
    let stopped = false;
    let held: Series[] = [];
    const tick = () =>
      api.series(since).then(
        (r) => {
          if (stopped) return;
          const last = Math.max(0, ...r.series.flatMap((s) => s.points.map((p) => p[0])));
          held = merge(held, r.series, r.windowMs || 600000, last || Date.now());
          if (last) since = last;
          setSeries(held);
          setError(undefined);
        },
        (e) => !stopped && setError(e),
      );
    tick();
    const t = setInterval(tick, 2000);
    return () => {
      stopped = true;
      clearInterval(t);
    };
  }, []);
  return (
    <section>
      <h2>Charts</h2>
      <Problem error={error} title="Samples" />
      <div class="charts">
        {charts.map((c) => (
          <Chart
            title={c.title}
            unit={c.unit}
            series={series
              .filter((s) => s.name in c.names)
              .map((s) => (c.names[s.name] ? { ...s, labels: { ...s.labels, what: c.names[s.name] } } : s))}
          />
        ))}
        {Array.from(new Set(series.map((s) => s.name).filter((n) => !listed.has(n))))
          .sort()
          .map((name) => (
            <Chart title={name} unit="" series={series.filter((s) => s.name === name)} />
          ))}
      </div>
    </section>
  );
}
