// Folding the leadership timeline: every node logs its own observation of a change, so one
// election shows up once per node. The page shows one row per (group, term, leader) with the
// nodes that saw it; the raw rows stay available for the details.
import type { LeadershipEvent } from "./api";

export interface Change {
  brokerName: string;
  term: number;
  leader: string;
  previousLeader: string;
  /** The cause as the new leader logged it when it did (it knows best why it leads), else the first seen. */
  cause: string;
  detail: string;
  /** Earliest observation, Unix ms. */
  time: number;
  observers: string[];
}

/** fold groups events by group, term and leader, newest change first. */
export function fold(events: LeadershipEvent[]): Change[] {
  const by = new Map<string, { change: Change; own: boolean }>();
  for (const e of events) {
    const k = `${e.brokerName}\u0000${e.term}\u0000${e.leader}`;
    const own = e.leader !== "" && e.node === e.leader;
    const have = by.get(k);
    if (!have) {
      by.set(k, {
        own,
        change: {
          brokerName: e.brokerName,
          term: e.term,
          leader: e.leader,
          previousLeader: e.previousLeader ?? "",
          cause: e.cause,
          detail: e.detail ?? "",
          time: e.time,
          observers: [e.node],
        },
      });
      continue;
    }
    const c = have.change;
    if (!c.observers.includes(e.node)) c.observers.push(e.node);
    c.time = Math.min(c.time, e.time);
    if (!c.previousLeader && e.previousLeader) c.previousLeader = e.previousLeader;
    if (own && !have.own) {
      have.own = true;
      c.cause = e.cause;
      c.detail = e.detail ?? "";
    }
  }
  const out = Array.from(by.values(), (v) => ({ ...v.change, observers: [...v.change.observers].sort() }));
  // Newest first; within one term the leaderless interval comes before (below) its election.
  return out.sort(
    (a, b) => b.time - a.time || b.term - a.term || (a.leader === "" ? 1 : 0) - (b.leader === "" ? 1 : 0),
  );
}
