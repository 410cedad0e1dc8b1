import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.mjs";

const { fold } = await load("src/timeline.ts");
const ev = (node, term, leader, cause, time, previousLeader = "", detail = "") => ({
  brokerName: "broker-a",
  node,
  term,
  leader,
  cause,
  time,
  previousLeader,
  detail,
});

test("one election seen by three nodes is one change, with the new leader's own cause", () => {
  const out = fold([
    ev("n2", 4, "n1", "lost_contact", 1010, "n0"),
    ev("n1", 4, "n1", "election_timeout", 1005, "n0", "elected after the previous leader was lost"),
    ev("n1", 3, "", "lost_contact", 1000, "n0"),
    ev("n2", 3, "", "lost_contact", 1001, "n0"),
  ]);
  assert.equal(out.length, 2);
  assert.deepEqual(
    { term: out[0].term, leader: out[0].leader, cause: out[0].cause, time: out[0].time, obs: out[0].observers },
    { term: 4, leader: "n1", cause: "election_timeout", time: 1005, obs: ["n1", "n2"] },
  );
  assert.equal(out[0].detail, "elected after the previous leader was lost");
  assert.deepEqual({ leader: out[1].leader, obs: out[1].observers }, { leader: "", obs: ["n1", "n2"] });
});

test("changes of different groups and terms stay apart, newest first", () => {
  const out = fold([
    ev("n0", 2, "n0", "restart", 100),
    { ...ev("m0", 2, "m0", "restart", 300), brokerName: "broker-b" },
    ev("n0", 3, "n1", "leadership_transfer", 200),
  ]);
  assert.deepEqual(
    out.map((c) => `${c.brokerName}/${c.term}/${c.leader}`),
    ["broker-b/2/m0", "broker-a/3/n1", "broker-a/2/n0"],
  );
});
