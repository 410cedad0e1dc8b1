// Consumer groups: lag per queue, clients, consume rate, retry/DLQ; reset by time with a preview.
import { useState } from "preact/hooks";
import { api, type GroupDetail, type Operation, type ResetPreview } from "../api";
import { num, rate, time, topicProblem } from "../format";
import { Confirm, Field, Note, Problem, Select, useLoad, type ConfirmRequest } from "../ui";

export function GroupsPage({ go }: { go: (path: string) => void }) {
  const [showSystem, setShowSystem] = useState(false);
  const list = useLoad(() => api.groups(), []);
  return (
    <section>
      <h2>Consumer groups</h2>
      <Problem error={list.error} title="Consumer groups" />
      {list.busy && !list.data ? <p>Loading…</p> : null}
      {list.data && list.data.groups.length === 0 ? <Note>No consumer group is known yet.</Note> : null}
      <label class="check">
        <input
          type="checkbox"
          checked={showSystem}
          onChange={(e) => setShowSystem((e.target as HTMLInputElement).checked)}
        />{" "}
        show system groups
      </label>
      <table>
        <thead>
          <tr>
            <th>group</th>
            <th>topics</th>
            <th>clients</th>
            <th>lag</th>
            <th>consume rate</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.groups ?? [])
            .filter((g) => showSystem || !g.system)
            .map((g) => (
              <tr data-cgroup={g.name}>
                <td>
                  <a
                    href={`/groups/${encodeURIComponent(g.name)}`}
                    onClick={(e) => (e.preventDefault(), go(`/groups/${encodeURIComponent(g.name)}`))}
                  >
                    {g.name}
                  </a>
                </td>
                <td>{g.topics.join(", ") || "–"}</td>
                <td>{num(g.clients)}</td>
                <td class={(g.lag ?? 0) > 0 ? "warn" : ""}>{num(g.lag)}</td>
                <td>{rate(g.consumePerSec)}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </section>
  );
}

export function GroupPage({
  name,
  can,
  go,
}: {
  name: string;
  can: (op: Operation) => boolean;
  go: (path: string) => void;
}) {
  const g = useLoad(() => api.group(name), [name]);
  return (
    <section>
      <h2>
        Consumer group <code>{name}</code>
      </h2>
      <p>
        <a href="/groups" onClick={(e) => (e.preventDefault(), go("/groups"))}>
          ← all groups
        </a>
      </p>
      <Problem error={g.error} title={`Group ${name}`} />
      {g.busy && !g.data ? <p>Loading…</p> : null}
      {g.data ? <GroupBody g={g.data} admin={can("group.reset")} reload={g.reload} /> : null}
    </section>
  );
}

/** localInput renders a Unix-ms time for <input type=datetime-local>, in the browser's zone. */
function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 19);
}

function GroupBody({ g, admin, reload }: { g: GroupDetail; admin: boolean; reload: () => void }) {
  const topics = Array.from(new Set(g.queues.map((q) => q.topic).filter((t) => !t.startsWith("%RETRY%"))));
  const [topic, setTopic] = useState(topics[0] ?? "");
  const [when, setWhen] = useState(localInput(Date.now() - 10 * 60 * 1000));
  // The contract's two special timestamps besides a time: 0 = each queue's first message, -1 = its end.
  const [to, setTo] = useState<"time" | "beginning" | "end">("time");
  const [preview, setPreview] = useState<ResetPreview | undefined>(undefined);
  const [problem, setProblem] = useState<unknown>(undefined);
  const [confirm, setConfirm] = useState<ConfirmRequest | null>(null);
  const [done, setDone] = useState("");

  const stamp = () => {
    if (to === "beginning") return 0;
    if (to === "end") return -1;
    const ms = new Date(when).getTime();
    if (!when || Number.isNaN(ms)) throw new Error(`"${when}" is not a date and time`);
    return ms;
  };
  const doPreview = () => {
    setPreview(undefined);
    setDone("");
    try {
      const p = topicProblem(topic);
      if (p) throw new Error(p);
      const ms = stamp();
      api.resetPreview(g.name, topic.trim(), ms).then((r) => {
        setPreview(r);
        setProblem(undefined);
      }, setProblem);
    } catch (e) {
      setProblem(e);
    }
  };
  const doReset = () => {
    if (!preview) return;
    const ms = stamp();
    setConfirm({
      title: `Reset ${g.name} on ${topic}`,
      consequences: [
        to === "time"
          ? `The offsets of ${g.name} on ${topic} move to the first message stored at or after ${new Date(ms).toLocaleString()}.`
          : `The offsets of ${g.name} on ${topic} move to the ${to} of every queue.`,
        `${preview.summary}.`,
        `The group will then have ${num(preview.lagAfter)} messages to consume (now ${num(preview.lagBefore)}).`,
        "Connected consumers pick up the new offsets at once; messages after them are consumed again.",
      ],
      action: "Reset offsets",
      danger: true,
      run: () => api.reset(g.name, topic.trim(), ms),
      done: () => {
        setDone(`Offsets of ${g.name} on ${topic} reset.`);
        setPreview(undefined);
        reload();
      },
    });
  };

  return (
    <div>
      <p>
        clients <b>{g.clients.length}</b> · lag <b>{num(g.lag)}</b> · consume rate <b>{rate(g.consumePerSec)}</b> ·
        retry <b>{num(g.retry.messages)}</b> · DLQ <b>{num(g.dlq.messages)}</b>
      </p>
      {done ? <div class="ok">{done}</div> : null}
      <h3>Lag per queue</h3>
      {g.queues.length === 0 ? <Note>The group has no offsets yet: it has not consumed.</Note> : null}
      <table class="lag">
        <thead>
          <tr>
            <th>topic</th>
            <th>group</th>
            <th>queue</th>
            <th>broker offset</th>
            <th>consumer offset</th>
            <th>lag</th>
            <th>last stored</th>
          </tr>
        </thead>
        <tbody>
          {g.queues.map((q) => (
            <tr>
              <td>{q.topic}</td>
              <td>{q.brokerName}</td>
              <td>{q.queueId}</td>
              <td>{num(q.brokerOffset)}</td>
              <td>{num(q.consumerOffset)}</td>
              <td class={q.lag > 0 ? "warn" : ""}>{num(q.lag)}</td>
              <td>{q.lastTimestamp ? time(q.lastTimestamp) : "–"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Clients</h3>
      {g.clients.length === 0 ? <Note>No consumer of this group is connected.</Note> : null}
      <ul>
        {g.clients.map((c) => (
          <li>
            {c.clientId} {c.addr ? `(${c.addr})` : ""} {c.language} {c.version}
            {c.brokerName ? ` via ${c.brokerName}` : ""}
          </li>
        ))}
      </ul>
      {admin ? (
        <div>
          <h3>Reset offsets by time</h3>
          <form
            noValidate
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              doPreview();
            }}
          >
            <Field
              label="topic"
              name="reset-topic"
              value={topic}
              onInput={(v) => (setTopic(v), setPreview(undefined))}
            />
            <Select
              label="reset to"
              name="reset-to"
              value={to}
              options={["time", "beginning", "end"]}
              onChange={(v) => (setTo(v as typeof to), setPreview(undefined))}
            />
            {to === "time" ? (
              <Field
                label="time"
                name="reset-time"
                type="datetime-local"
                value={when}
                onInput={(v) => (setWhen(v), setPreview(undefined))}
              />
            ) : null}
            <button type="submit">Preview</button>
            <button type="button" class="danger" disabled={!preview} onClick={doReset}>
              Reset…
            </button>
          </form>
          <Problem error={problem} title="Reset" />
          {preview ? (
            <div class="preview" data-testid="reset-preview">
              <p>
                {preview.summary}. After the reset the group will have <b>{num(preview.lagAfter)}</b> messages to
                consume on {topic} (now {num(preview.lagBefore)}).
              </p>
              <table>
                <thead>
                  <tr>
                    <th>group</th>
                    <th>queue</th>
                    <th>broker offset</th>
                    <th>offset now</th>
                    <th>offset after</th>
                    <th>lag now</th>
                    <th>lag after</th>
                  </tr>
                </thead>
                <tbody>
                  {preview.queues.map((q) => (
                    <tr>
                      <td>{q.brokerName}</td>
                      <td>{q.queueId}</td>
                      <td>{num(q.brokerOffset)}</td>
                      <td>{num(q.currentOffset)}</td>
                      <td>{num(q.newOffset)}</td>
                      <td>{num(q.lagBefore)}</td>
                      <td>{num(q.lagAfter)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </div>
      ) : null}
      <Confirm req={confirm} close={() => setConfirm(null)} />
    </div>
  );
}
