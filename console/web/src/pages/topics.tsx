// Topics: list, create, update only the fields changed, delete with confirmation; queue ranges.
import { useState } from "preact/hooks";
import { api, type Operation, type Perm, type TopicDetail } from "../api";
import { changed, intProblem, num, rate, topicProblem } from "../format";
import { Confirm, Field, Note, Problem, Select, useLoad, type ConfirmRequest } from "../ui";

interface Form {
  readQueues: string;
  writeQueues: string;
  perm: string;
}
const perms: Perm[] = ["RW", "R", "W", "-"];

function formProblem(f: Form): string {
  return (
    intProblem("read queues", f.readQueues, 1, 1024) ||
    intProblem("write queues", f.writeQueues, 1, 1024) ||
    ((perms as string[]).includes(f.perm.trim()) ? "" : `perm must be one of RW, R, W or -, got "${f.perm}"`)
  );
}

const toConfig = (f: Form) => ({
  readQueues: Number(f.readQueues),
  writeQueues: Number(f.writeQueues),
  perm: f.perm.trim() as Perm,
});

export function TopicsPage({ can, go }: { can: (op: Operation) => boolean; go: (path: string) => void }) {
  const list = useLoad(() => api.topics(), []);
  const [showSystem, setShowSystem] = useState(false);
  const [name, setName] = useState("");
  const [form, setForm] = useState<Form>({ readQueues: "4", writeQueues: "4", perm: "RW" });
  const [problem, setProblem] = useState("");
  const [confirm, setConfirm] = useState<ConfirmRequest | null>(null);
  const [done, setDone] = useState("");

  const create = () => {
    const p = topicProblem(name) || formProblem(form);
    setProblem(p);
    if (p) return;
    const t = { name: name.trim(), ...toConfig(form), order: false };
    setConfirm({
      title: `Create topic ${t.name}`,
      consequences: [
        `Topic ${t.name} will be created on every broker group with ${t.writeQueues} write and ${t.readQueues} read queues, perm ${t.perm}.`,
        "The change goes through raft: every node of each group stores it.",
      ],
      action: "Create topic",
      run: () => api.createTopic(t),
      done: (r) => {
        const failed =
          (r as { results?: { brokerName: string; ok: boolean; error: string }[] }).results?.filter((x) => !x.ok) ?? [];
        setDone(
          failed.length
            ? `Topic ${t.name} created, but not on ${failed.map((f) => `${f.brokerName} (${f.error})`).join(", ")}.`
            : `Topic ${t.name} created.`,
        );
        setName("");
        // The list comes from the nameserver's routes, which learn a new topic when the brokers
        // next register (a few seconds): look again until then.
        list.reload();
        for (const ms of [1500, 4000, 8000]) setTimeout(list.reload, ms);
      },
    });
  };

  const topics = (list.data?.topics ?? []).filter((t) => showSystem || !t.system);
  return (
    <section>
      <h2>Topics</h2>
      <Problem error={list.error} title="Topics" />
      {done ? <div class="ok">{done}</div> : null}
      {can("topic.create") ? (
        <form
          noValidate
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            create();
          }}
        >
          <Field label="new topic" name="topic-name" value={name} onInput={setName} placeholder="TopicName" />
          <Field
            label="write queues"
            name="write"
            value={form.writeQueues}
            onInput={(v) => setForm({ ...form, writeQueues: v })}
          />
          <Field
            label="read queues"
            name="read"
            value={form.readQueues}
            onInput={(v) => setForm({ ...form, readQueues: v })}
          />
          <Select
            label="perm"
            name="perm"
            value={form.perm}
            options={perms}
            onChange={(v) => setForm({ ...form, perm: v })}
          />
          <button type="submit" class="primary">
            Create…
          </button>
        </form>
      ) : null}
      {problem ? (
        <div class="problem" role="alert">
          {problem}
        </div>
      ) : null}
      <label class="check">
        <input
          type="checkbox"
          checked={showSystem}
          onChange={(e) => setShowSystem((e.target as HTMLInputElement).checked)}
        />{" "}
        show system topics
      </label>
      {list.busy && !list.data ? <p>Loading…</p> : null}
      <table>
        <thead>
          <tr>
            <th>topic</th>
            <th>write</th>
            <th>read</th>
            <th>perm</th>
            <th>in</th>
            <th>out</th>
          </tr>
        </thead>
        <tbody>
          {topics.map((t) => (
            <tr data-topic={t.name}>
              <td>
                <a
                  href={`/topics/${encodeURIComponent(t.name)}`}
                  onClick={(e) => (e.preventDefault(), go(`/topics/${encodeURIComponent(t.name)}`))}
                >
                  {t.name}
                </a>
              </td>
              <td>{t.writeQueues}</td>
              <td>{t.readQueues}</td>
              <td>{t.perm}</td>
              <td>{rate(t.inPerSec)}</td>
              <td>{rate(t.outPerSec)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Confirm req={confirm} close={() => setConfirm(null)} />
    </section>
  );
}

export function TopicPage({
  name,
  can,
  go,
}: {
  name: string;
  can: (op: Operation) => boolean;
  go: (path: string) => void;
}) {
  const t = useLoad(() => api.topic(name), [name]);
  return (
    <section>
      <h2>
        Topic <code>{name}</code>
      </h2>
      <p>
        <a href="/topics" onClick={(e) => (e.preventDefault(), go("/topics"))}>
          ← all topics
        </a>
      </p>
      <Problem error={t.error} title={`Topic ${name}`} />
      {t.busy && !t.data ? <p>Loading…</p> : null}
      {t.data ? <TopicBody t={t.data} can={can} reload={t.reload} go={go} /> : null}
    </section>
  );
}

function TopicBody({
  t,
  can,
  reload,
  go,
}: {
  t: TopicDetail;
  can: (op: Operation) => boolean;
  reload: () => void;
  go: (h: string) => void;
}) {
  const c0 = t.configs[0];
  const orig: Form = c0
    ? { readQueues: String(c0.readQueues), writeQueues: String(c0.writeQueues), perm: c0.perm }
    : { readQueues: "4", writeQueues: "4", perm: "RW" };
  const [form, setForm] = useState<Form>(orig);
  const [problem, setProblem] = useState("");
  const [confirm, setConfirm] = useState<ConfirmRequest | null>(null);
  const [done, setDone] = useState("");

  const update = () => {
    const p = formProblem(form);
    setProblem(p);
    if (p) return;
    const patch = changed(toConfig(orig), toConfig(form));
    const keys = Object.keys(patch);
    if (keys.length === 0) {
      setProblem("nothing changed: edit a field first");
      return;
    }
    setConfirm({
      title: `Update topic ${t.name}`,
      consequences: [
        ...keys.map(
          (k) => `${k}: ${(toConfig(orig) as Record<string, unknown>)[k]} → ${(patch as Record<string, unknown>)[k]}`,
        ),
        "Only these fields are sent; the others keep their current values.",
        ...(c0 && Number(form.writeQueues) < c0.writeQueues
          ? ["Fewer write queues: producers stop writing to the queues above the new count."]
          : []),
      ],
      action: "Update topic",
      run: () => api.updateTopic(t.name, patch),
      done: () => {
        setDone(`Topic ${t.name} updated (${keys.join(", ")}).`);
        reload();
      },
    });
  };
  const del = () =>
    api.deletePreview(t.name).then(
      (p) =>
        setConfirm({
          title: `Delete topic ${t.name}`,
          consequences: [
            `The console ${p.summary}.`,
            "Producers sending to it get an error; its consume progress is lost. This cannot be undone.",
          ],
          action: `Delete ${t.name}`,
          danger: true,
          run: () => api.deleteTopic(t.name),
          done: () => go("/topics"),
        }),
      (e) => setProblem(`cannot prepare the delete: ${(e as Error).message}`),
    );

  return (
    <div>
      {done ? <div class="ok">{done}</div> : null}
      <p>
        in {rate(t.inPerSec)} · out {rate(t.outPerSec)} · consumer groups{" "}
        {t.groups.length
          ? t.groups.map((g) => (
              <a
                href={`/groups/${encodeURIComponent(g)}`}
                onClick={(e) => (e.preventDefault(), go(`/groups/${encodeURIComponent(g)}`))}
              >
                {g}{" "}
              </a>
            ))
          : "none"}
      </p>
      {t.configs.length > 1 ? (
        <p>{t.configs.map((c) => `${c.brokerName}: ${c.writeQueues}w/${c.readQueues}r ${c.perm}`).join(" · ")}</p>
      ) : null}
      {can("topic.update") || can("topic.delete") ? (
        <form
          noValidate
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            update();
          }}
        >
          <Field
            label="write queues"
            name="write"
            value={form.writeQueues}
            onInput={(v) => setForm({ ...form, writeQueues: v })}
          />
          <Field
            label="read queues"
            name="read"
            value={form.readQueues}
            onInput={(v) => setForm({ ...form, readQueues: v })}
          />
          <Select
            label="perm"
            name="perm"
            value={form.perm}
            options={perms}
            onChange={(v) => setForm({ ...form, perm: v })}
          />
          {can("topic.update") ? (
            <button type="submit" class="primary">
              Update…
            </button>
          ) : null}
          {can("topic.delete") ? (
            <button type="button" class="danger" onClick={del}>
              Delete…
            </button>
          ) : null}
        </form>
      ) : null}
      {problem ? (
        <div class="problem" role="alert">
          {problem}
        </div>
      ) : null}
      <h3>Queues</h3>
      {t.queues.length === 0 ? <Note>No queue holds messages yet.</Note> : null}
      <table class="queues">
        <thead>
          <tr>
            <th>group</th>
            <th>queue</th>
            <th>min offset</th>
            <th>max offset</th>
            <th>note</th>
          </tr>
        </thead>
        <tbody>
          {t.queues.map((q) => (
            <tr>
              <td>{q.brokerName}</td>
              <td>{q.queueId}</td>
              <td>{num(q.minOffset)}</td>
              <td>{num(q.maxOffset)}</td>
              <td class={q.error ? "warn" : ""}>{q.error || ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Confirm req={confirm} close={() => setConfirm(null)} />
    </div>
  );
}
