// Raft operations: transfer leadership, add a voter or non-voter, remove a node, snapshot.
// Every operation first asks the server for a preview and shows its summary (what the group
// will look like afterwards) in the confirmation dialog; nothing runs without it.
import { useState } from "preact/hooks";
import { api, type Node, type Operation, type RaftOp } from "../api";
import { quorumSentence } from "../format";
import { Confirm, Field, Note, Problem, useLoad, type ConfirmRequest } from "../ui";

const opNames: Record<RaftOp, string> = {
  "transfer-leader": "Transfer leadership",
  "add-voter": "Add voter",
  "add-nonvoter": "Add non-voter",
  remove: "Remove node",
  snapshot: "Take snapshot",
};
const opPerm: Record<RaftOp, Operation> = {
  "transfer-leader": "raft.transfer",
  "add-voter": "raft.addVoter",
  "add-nonvoter": "raft.addNonvoter",
  remove: "raft.remove",
  snapshot: "raft.snapshot",
};

export function RaftPage({ can }: { can: (op: Operation) => boolean }) {
  const cluster = useLoad(() => api.cluster(), []);
  const groups = cluster.data?.groups ?? [];
  return (
    <section>
      <h2>Raft operations</h2>
      <Problem error={cluster.error} title="Cluster" />
      {cluster.busy && !cluster.data ? <p>Loading…</p> : null}
      {cluster.data && groups.length === 0 ? <Note>The nameserver knows no broker group yet.</Note> : null}
      {groups.map((g) => (
        <RaftGroup brokerName={g.brokerName} nodes={g.nodes} can={can} />
      ))}
    </section>
  );
}

function RaftGroup({ brokerName, nodes, can }: { brokerName: string; nodes: Node[]; can: (op: Operation) => boolean }) {
  // The raft configuration names members; the cluster view says which of them answer now.
  const state = (id: string) => {
    const n = nodes.find((x) => x.node === id);
    return n ? (n.up ? n.role : "DOWN") : "not seen";
  };
  const peers = useLoad(() => api.raft(brokerName), [brokerName]);
  const [confirm, setConfirm] = useState<ConfirmRequest | null>(null);
  const [problem, setProblem] = useState<unknown>(undefined);
  const [done, setDone] = useState("");
  const [newId, setNewId] = useState("");
  const [newAddr, setNewAddr] = useState("");

  const ask = (op: RaftOp, id?: string, address?: string) => {
    setProblem(undefined);
    setDone("");
    if ((op === "add-voter" || op === "add-nonvoter") && (!id || !address)) {
      setProblem(new Error("a node id and its raft address (host:port) are required to add a node"));
      return;
    }
    if (address && !/^[^:\s]+:\d{1,5}$/.test(address)) {
      setProblem(new Error(`raft address "${address}" must be host:port`));
      return;
    }
    api.raftPreview(brokerName, op, id, address).then(
      (p) =>
        setConfirm({
          title: `${opNames[op]} — ${brokerName}${id ? ` / ${id}` : ""}`,
          consequences: [
            p.summary,
            // The server's summary usually says it already; the page adds its own reading only when not.
            ...(op === "snapshot" || /voter/.test(p.summary)
              ? []
              : [
                  p.votersAfter !== p.votersBefore
                    ? `${p.votersBefore} → ${p.votersAfter} voters: ${quorumSentence(p.votersAfter)}.`
                    : `${quorumSentence(p.votersAfter)}.`,
                ]),
            ...(p.warnings ?? []),
          ],
          action: opNames[op],
          danger: op === "remove",
          run: () => api.raftDo(brokerName, op, id, address),
          done: (r) => {
            setDone((r as { summary?: string }).summary || `${opNames[op]} done.`);
            peers.reload();
          },
        }),
      setProblem,
    );
  };

  const servers = peers.data?.servers ?? [];
  return (
    <div class="group" data-group={brokerName}>
      <h3>{brokerName}</h3>
      <Problem error={peers.error} title={`Raft configuration of ${brokerName}`} />
      {done ? <div class="ok">{done}</div> : null}
      <table class="servers">
        <thead>
          <tr>
            <th>id</th>
            <th>raft address</th>
            <th>suffrage</th>
            <th>leader</th>
            <th>state</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {servers.map((s) => (
            <tr data-server={s.id}>
              <td>{s.id}</td>
              <td>{s.address}</td>
              <td>{s.suffrage}</td>
              <td>{s.leader ? "leader" : ""}</td>
              <td class={state(s.id) === "DOWN" ? "warn" : ""}>{state(s.id)}</td>
              <td class="actions">
                {!s.leader && s.suffrage === "Voter" && can("raft.transfer") ? (
                  <button type="button" data-op="transfer-leader" onClick={() => ask("transfer-leader", s.id)}>
                    Make leader…
                  </button>
                ) : null}
                {can("raft.remove") ? (
                  <button type="button" class="danger" data-op="remove" onClick={() => ask("remove", s.id)}>
                    Remove…
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="ops">
        {can(opPerm["transfer-leader"]) ? (
          <button type="button" data-op="transfer-any" onClick={() => ask("transfer-leader")}>
            Transfer leadership to any follower…
          </button>
        ) : null}
        {can(opPerm.snapshot) ? (
          <button type="button" data-op="snapshot" onClick={() => ask("snapshot")}>
            Snapshot every node…
          </button>
        ) : null}
      </div>
      {can("raft.addVoter") || can("raft.addNonvoter") ? (
        <form noValidate class="inline" onSubmit={(e) => e.preventDefault()}>
          <Field label="new node id" name="new-id" value={newId} onInput={setNewId} placeholder="n3" />
          <Field
            label="raft address"
            name="new-addr"
            value={newAddr}
            onInput={setNewAddr}
            placeholder="127.0.0.1:10942"
          />
          {can("raft.addVoter") ? (
            <button type="button" onClick={() => ask("add-voter", newId.trim(), newAddr.trim())}>
              Add voter…
            </button>
          ) : null}
          {can("raft.addNonvoter") ? (
            <button type="button" onClick={() => ask("add-nonvoter", newId.trim(), newAddr.trim())}>
              Add non-voter…
            </button>
          ) : null}
        </form>
      ) : null}
      <Problem error={problem} title="Refused" />
      <Confirm req={confirm} close={() => setConfirm(null)} />
    </div>
  );
}
