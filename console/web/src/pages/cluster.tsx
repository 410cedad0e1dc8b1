// Cluster: every group and node, live from the event stream, and the leadership timeline.
import { useEffect, useState } from "preact/hooks";
import { api, subscribe, type ClusterView, type LeadershipEvent } from "../api";
import { bytes, millis, num, time } from "../format";
import { fold } from "../timeline";
import { Note, Problem } from "../ui";

const sameObservation = (a: LeadershipEvent, b: LeadershipEvent) =>
  a.brokerName === b.brokerName &&
  a.node === b.node &&
  a.term === b.term &&
  a.leader === b.leader &&
  a.cause === b.cause;

export function ClusterPage() {
  const [view, setView] = useState<ClusterView | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [live, setLive] = useState<{ live: boolean; why?: string }>({ live: false });
  const [events, setEvents] = useState<LeadershipEvent[]>([]);
  const [timelineError, setTimelineError] = useState<unknown>(undefined);
  const [raw, setRaw] = useState(false);

  useEffect(() => {
    api.cluster().then(setView, setError);
    api.timeline().then((t) => setEvents(t.events ?? []), setTimelineError);
    return subscribe({
      onCluster: (v) => {
        setView(v);
        setError(undefined);
      },
      // The stream may repeat what the timeline already returned; the server's own key decides.
      onLeadership: (e) =>
        setEvents((old) => (old.some((o) => sameObservation(o, e)) ? old : [e, ...old].slice(0, 500))),
      onClusterError: (msg) => setError(new Error(msg)),
      onState: (l, why) => setLive({ live: l, why }),
    });
  }, []);

  return (
    <section>
      <h2>
        Cluster <span class={live.live ? "live on" : "live off"}>{live.live ? "live" : "not live"}</span>
      </h2>
      {!live.live && live.why ? <Note>{live.why}</Note> : null}
      <Problem error={error} title="Cluster" />
      {!view && !error ? <p>Loading…</p> : null}
      {view && view.groups.length === 0 ? <Note>The nameserver knows no broker group yet.</Note> : null}
      {view?.groups.map((g) => (
        <div class="group" data-group={g.brokerName}>
          <h3>
            {g.brokerName} <small>{g.cluster}</small>{" "}
            <span class="leader" data-testid="group-leader">
              leader <b>{g.leader || "none"}</b>
            </span>{" "}
            <span class="term" data-testid="group-term">
              term <b>{num(g.term)}</b>
            </span>{" "}
            <span class="health">
              {g.voters == null
                ? `${g.healthy} nodes up; raft configuration unknown (no node answered for it)`
                : `${g.healthy}/${g.voters} voters up${g.nonvoters ? `, ${g.nonvoters} non-voters` : ""}, quorum ${g.quorum}`}
            </span>
          </h3>
          {!g.leader ? <Note>This group has no leader now: sends to it fail until one is elected.</Note> : null}
          {g.quorum != null && g.voters != null && g.quorum > 0 && g.healthy < g.quorum ? (
            <Note>
              {g.healthy} of {g.voters} voters answer, fewer than the quorum of {g.quorum}: the group cannot commit
              until {g.quorum - g.healthy} more {g.quorum - g.healthy === 1 ? "is" : "are"} back.
            </Note>
          ) : g.quorum != null && g.voters != null && g.quorum > 0 && g.healthy === g.quorum && g.voters > g.quorum ? (
            <Note>Only a quorum of voters answers: one more failure stops the group.</Note>
          ) : null}
          <table class="nodes">
            <thead>
              <tr>
                <th>node</th>
                <th>address</th>
                <th>role</th>
                <th>term</th>
                <th>commit</th>
                <th>applied</th>
                <th>last</th>
                <th>lag (entries)</th>
                <th>lag (bytes)</th>
                <th>last contact</th>
                <th>disk</th>
                <th>CommitLog max</th>
              </tr>
            </thead>
            <tbody>
              {g.nodes.map((n) =>
                n.up ? (
                  <tr data-node={n.node} class={n.role.toLowerCase()}>
                    <td>{n.node}</td>
                    <td>{n.addr}</td>
                    <td class="role">{n.role}</td>
                    <td>{num(n.term)}</td>
                    <td>{num(n.commitIndex)}</td>
                    <td>{num(n.appliedIndex)}</td>
                    <td>{num(n.lastIndex)}</td>
                    <td class={n.lagEntries > 0 ? "warn" : ""}>{num(n.lagEntries)}</td>
                    <td>{bytes(n.lagBytes)}</td>
                    <td>{n.role === "LEADER" ? "–" : millis(n.lastContactMs)}</td>
                    <td
                      title={
                        n.diskFreeBytes != null ? `${bytes(n.diskFreeBytes)} free of ${bytes(n.diskTotalBytes)}` : ""
                      }
                    >
                      {n.diskUsedRatio != null ? `${(n.diskUsedRatio * 100).toFixed(1)} %` : "–"}
                    </td>
                    <td>{num(n.commitLogMaxOffset)}</td>
                  </tr>
                ) : (
                  <tr data-node={n.node || n.addr} class="down">
                    <td>{n.node || `id ${n.brokerId}`}</td>
                    <td>{n.addr}</td>
                    <td class="role">down</td>
                    <td colSpan={9}>{n.error || "the node does not answer"}</td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
        </div>
      ))}
      <h3>Leadership timeline</h3>
      <Problem error={timelineError} title="Timeline" />
      {events.length === 0 && !timelineError ? <Note>No leadership change recorded yet.</Note> : null}
      {events.length > 0 ? (
        <label class="check">
          <input type="checkbox" checked={raw} onChange={(e) => setRaw((e.target as HTMLInputElement).checked)} /> every
          node's own observation ({events.length})
        </label>
      ) : null}
      {events.length > 0 && !raw ? (
        <table class="timeline">
          <thead>
            <tr>
              <th>time</th>
              <th>group</th>
              <th>term</th>
              <th>leader</th>
              <th>previous</th>
              <th>cause</th>
              <th>seen by</th>
            </tr>
          </thead>
          <tbody>
            {fold(events).map((c) => (
              <tr class={c.leader ? "" : "gap"}>
                <td>{time(c.time)}</td>
                <td>{c.brokerName}</td>
                <td>{num(c.term)}</td>
                <td>{c.leader || "none"}</td>
                <td>{c.previousLeader || "–"}</td>
                <td title={c.detail}>
                  {c.cause}
                  {c.detail ? <small> — {c.detail}</small> : null}
                </td>
                <td>{c.observers.join(", ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {events.length > 0 && raw ? (
        <table class="timeline raw">
          <thead>
            <tr>
              <th>time</th>
              <th>group</th>
              <th>node</th>
              <th>term</th>
              <th>leader</th>
              <th>previous</th>
              <th>cause</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr>
                <td>{time(e.time)}</td>
                <td>{e.brokerName}</td>
                <td>{e.node}</td>
                <td>{num(e.term)}</td>
                <td>{e.leader || "none"}</td>
                <td>{e.previousLeader || "–"}</td>
                <td title={e.detail}>
                  {e.cause}
                  {e.detail ? <small> — {e.detail}</small> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
