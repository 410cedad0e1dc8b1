// Messages: find by key, msgId, queue offset or time range; open one to see body, properties
// and on which replicas it is stored.
import { useEffect, useState } from "preact/hooks";
import { api, type Message } from "../api";
import {
  base64Bytes,
  hexDump,
  intProblem,
  msgIdProblem,
  num,
  prettyJSON,
  time,
  topicProblem,
  utf8Text,
} from "../format";
import { Field, Note, Problem } from "../ui";

type Mode = "key" | "msgId" | "offset" | "time";
const modes: { mode: Mode; label: string }[] = [
  { mode: "key", label: "by key" },
  { mode: "msgId", label: "by msgId" },
  { mode: "offset", label: "by queue offset" },
  { mode: "time", label: "by time range" },
];

function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 19);
}

/** query turns the form into the search's parameters, or throws an Error saying what is wrong. */
function query(mode: Mode, f: Record<string, string>) {
  const need = (p: string) => {
    if (p) throw new Error(p);
  };
  const topic = f.topic.trim();
  switch (mode) {
    case "key":
      need(topicProblem(topic));
      if (!f.key.trim()) throw new Error("a key is required");
      return { topic, key: f.key.trim() };
    case "msgId":
      need(msgIdProblem(f.msgId));
      if (topic) need(topicProblem(topic));
      return { msgId: f.msgId.trim(), topic: topic || undefined };
    case "offset":
      need(topicProblem(topic));
      if (!f.brokerName.trim()) throw new Error("a broker group (brokerName) is required");
      need(intProblem("queue id", f.queueId, 0, 65535));
      need(intProblem("queue offset", f.offset, 0, Number.MAX_SAFE_INTEGER));
      return { topic, brokerName: f.brokerName.trim(), queueId: Number(f.queueId), offset: Number(f.offset) };
    case "time": {
      need(topicProblem(topic));
      const begin = new Date(f.begin).getTime();
      const end = new Date(f.end).getTime();
      if (Number.isNaN(begin)) throw new Error(`begin "${f.begin}" is not a date and time`);
      if (Number.isNaN(end)) throw new Error(`end "${f.end}" is not a date and time`);
      if (end <= begin) throw new Error("end must be after begin");
      return { topic, begin, end };
    }
  }
}

export function MessagesPage({ go, initial }: { go: (path: string) => void; initial: URLSearchParams }) {
  const [mode, setMode] = useState<Mode>((initial.get("mode") as Mode) || "key");
  const now = Date.now();
  const [f, setF] = useState<Record<string, string>>({
    topic: initial.get("topic") ?? "",
    key: initial.get("key") ?? "",
    msgId: initial.get("msgId") ?? "",
    brokerName: initial.get("brokerName") ?? "broker-a",
    queueId: "0",
    offset: "0",
    begin: localInput(now - 15 * 60 * 1000),
    end: localInput(now + 60 * 1000),
  });
  const [found, setFound] = useState<Message[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const set = (k: string) => (v: string) => setF({ ...f, [k]: v });

  const search = () => {
    setFound(undefined);
    try {
      const p = query(mode, f);
      setError(undefined);
      setBusy(true);
      api.searchMessages(p).then(
        (r) => {
          setBusy(false);
          setFound(r.messages ?? []);
        },
        (e) => {
          setBusy(false);
          setError(e);
        },
      );
    } catch (e) {
      setError(e);
    }
  };

  return (
    <section>
      <h2>Messages</h2>
      <div class="tabs">
        {modes.map((m) => (
          <button
            type="button"
            class={m.mode === mode ? "tab on" : "tab"}
            onClick={() => (setMode(m.mode), setFound(undefined), setError(undefined))}
          >
            {m.label}
          </button>
        ))}
      </div>
      <form
        noValidate
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          search();
        }}
      >
        <Field
          label={mode === "msgId" ? "topic (optional)" : "topic"}
          name="topic"
          value={f.topic}
          onInput={set("topic")}
        />
        {mode === "key" ? <Field label="key" name="key" value={f.key} onInput={set("key")} /> : null}
        {mode === "msgId" ? (
          <Field label="msgId" name="msgId" value={f.msgId} onInput={set("msgId")} placeholder="32 hex digits" />
        ) : null}
        {mode === "offset" ? (
          <>
            <Field label="broker group" name="brokerName" value={f.brokerName} onInput={set("brokerName")} />
            <Field label="queue id" name="queueId" value={f.queueId} onInput={set("queueId")} />
            <Field label="queue offset" name="offset" value={f.offset} onInput={set("offset")} />
          </>
        ) : null}
        {mode === "time" ? (
          <>
            <Field label="begin" name="begin" type="datetime-local" value={f.begin} onInput={set("begin")} />
            <Field label="end" name="end" type="datetime-local" value={f.end} onInput={set("end")} />
          </>
        ) : null}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Searching…" : "Search"}
        </button>
      </form>
      <Problem error={error} title="Search" />
      {found && found.length === 0 ? <Note>No message matches.</Note> : null}
      {found && found.length > 0 ? (
        <table class="found">
          <thead>
            <tr>
              <th>msgId</th>
              <th>topic</th>
              <th>keys</th>
              <th>tags</th>
              <th>group/queue/offset</th>
              <th>stored</th>
              <th>size</th>
            </tr>
          </thead>
          <tbody>
            {found.map((m) => {
              const href = `/messages/${encodeURIComponent(m.msgId)}?topic=${encodeURIComponent(m.topic)}`;
              return (
                <tr data-msgid={m.msgId}>
                  <td>
                    <a href={href} onClick={(e) => (e.preventDefault(), go(href))}>
                      <code>{m.msgId}</code>
                    </a>
                  </td>
                  <td>{m.topic}</td>
                  <td>{m.keys || "–"}</td>
                  <td>{m.tags || "–"}</td>
                  <td>
                    {m.brokerName}/{m.queueId}/{num(m.queueOffset)}
                  </td>
                  <td>{time(m.storeTimestamp)}</td>
                  <td>{num(m.bodySize)} B</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

type View = "text" | "hex" | "json";

export function MessagePage({ msgId, topic, go }: { msgId: string; topic?: string; go: (path: string) => void }) {
  const [m, setM] = useState<Message | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [view, setView] = useState<View>("text");
  useEffect(() => {
    setM(undefined);
    setError(undefined);
    // A link or a typed URL: the server checks the id and says what is wrong with it.
    api.message(msgId, topic).then(setM, setError);
  }, [msgId, topic]);
  return (
    <section>
      <h2>
        Message <code>{msgId}</code>
      </h2>
      <p>
        <a href="/messages" onClick={(e) => (e.preventDefault(), go("/messages"))}>
          ← search
        </a>
      </p>
      <Problem error={error} title="Message" />
      {!m && !error ? <p>Loading…</p> : null}
      {m ? <MessageBody m={m} view={view} setView={setView} /> : null}
    </section>
  );
}

function MessageBody({ m, view, setView }: { m: Message; view: View; setView: (v: View) => void }) {
  const raw = m.body ? base64Bytes(m.body) : new Uint8Array();
  const text = m.bodyText ?? utf8Text(raw);
  const json = prettyJSON(text);
  const rows: [string, string][] = [
    ["topic", m.topic],
    ["broker group", m.brokerName],
    ["queue", `${m.queueId} at offset ${num(m.queueOffset)}`],
    ["CommitLog offset", num(m.commitLogOffset)],
    ["keys", m.keys || "–"],
    ["tags", m.tags || "–"],
    ["born", `${time(m.bornTimestamp)} on ${m.bornHost}`],
    ["stored", `${time(m.storeTimestamp)} on ${m.storeHost}`],
    ["reconsume times", String(m.reconsumeTimes)],
    ["body size", `${num(m.bodySize)} B`],
  ];
  if (m.uniqKey) rows.splice(1, 0, ["unique key", m.uniqKey]);
  return (
    <div class="message">
      <table class="kv">
        <tbody>
          {rows.map(([k, v]) => (
            <tr>
              <th>{k}</th>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Body</h3>
      <div class="tabs">
        {(["text", "hex", "json"] as View[]).map((v) => (
          <button type="button" class={v === view ? "tab on" : "tab"} onClick={() => setView(v)}>
            {v === "json" ? "JSON (pretty)" : v}
          </button>
        ))}
      </div>
      {view === "text" ? (
        <>
          {m.bodyIsText === false ? <Note>The body is not valid UTF-8; the hex view shows its bytes.</Note> : null}
          <pre class="body" data-testid="body">
            {text}
          </pre>
        </>
      ) : null}
      {view === "hex" ? (
        <pre class="body" data-testid="body">
          {hexDump(raw)}
        </pre>
      ) : null}
      {view === "json" ? (
        json.ok ? (
          <pre class="body" data-testid="body">
            {json.text}
          </pre>
        ) : (
          <Note>{json.error}</Note>
        )
      ) : null}
      <h3>Properties</h3>
      <table class="kv props">
        <tbody>
          {Object.keys(m.properties ?? {})
            .sort()
            .map((k) => (
              <tr>
                <th>{k}</th>
                <td>{m.properties[k]}</td>
              </tr>
            ))}
        </tbody>
      </table>
      <h3>Replicas</h3>
      {!m.replicas || m.replicas.length === 0 ? <Note>The console could not ask the group's nodes.</Note> : null}
      <table class="replicas">
        <thead>
          <tr>
            <th>node</th>
            <th>address</th>
            <th>stored</th>
            <th>CommitLog offset</th>
            <th>note</th>
          </tr>
        </thead>
        <tbody>
          {(m.replicas ?? []).map((r) => (
            <tr class={r.up ? (r.stored ? "" : "warn") : "down"} data-replica={r.node}>
              <td>{r.node}</td>
              <td>{r.addr}</td>
              <td>{!r.up ? "down" : r.stored ? "yes" : "no"}</td>
              <td>{r.commitLogOffset == null ? "–" : num(r.commitLogOffset)}</td>
              <td>{r.error || ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
