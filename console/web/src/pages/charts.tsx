// Charts: throughput, replication lag, fsync latency and consumer lag over the console's
// in-memory window (about ten minutes), refreshed every two seconds with only the new points.
import { useEffect, useState } from "preact/hooks";
import { api, type Series } from "../api";
import { Chart } from "../chart";
import { merge } from "../series";
import { Problem } from "../ui";

const charts: { title: string; names: string[]; unit: string }[] = [
  { title: "Throughput (messages/s)", names: ["messagesInPerSec", "messagesOutPerSec"], unit: "msg/s" },
  { title: "Replication lag (entries)", names: ["replicationLagEntries"], unit: "entries" },
  { title: "Replication lag (bytes)", names: ["replicationLagBytes"], unit: "B" },
  { title: "Raft log fsync latency", names: ["fsyncLatencyMs"], unit: "ms" },
  { title: "Consumer lag", names: ["consumerLag"], unit: "msgs" },
];

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
              .filter((s) => c.names.includes(s.name))
              .map((s) =>
                c.names.length > 1
                  ? { ...s, labels: { ...s.labels, what: s.name.replace("messages", "").replace("PerSec", "") } }
                  : s,
              )}
          />
        ))}
      </div>
    </section>
  );
}
