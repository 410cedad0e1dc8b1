// The one place that knows the console's HTTP contract (docs/console-api.md). Pages call
// these functions and render ApiError.message as it is: the server words its errors for
// people (naming the field and the rule), so the front-end adds only what failed.

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** onUnauthenticated is set by the app: a 401 anywhere sends the user to the login form. */
export let onUnauthenticated: () => void = () => {};
export function setUnauthenticatedHandler(f: () => void) {
  onUnauthenticated = f;
}

/** call does one request and returns the decoded JSON, or throws ApiError with a readable message. */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch("/api/v1" + path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(`the console server did not answer (${method} ${path}): ${(e as Error).message}`, 0, "network");
  }
  const text = await res.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      throw new ApiError(
        `${method} ${path}: HTTP ${res.status}, and the answer is not JSON: ${text.slice(0, 200)}`,
        res.status,
        "internal",
      );
    }
  }
  if (!res.ok) {
    const e = (data ?? {}) as { error?: string; code?: string; field?: string };
    const err = new ApiError(e.error || `${method} ${path}: HTTP ${res.status}`, res.status, e.code ?? "", e.field);
    if (res.status === 401 && path !== "/login") onUnauthenticated();
    throw err;
  }
  return data as T;
}

const q = (params: Record<string, string | number | undefined>) => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") u.set(k, String(v));
  const s = u.toString();
  return s ? "?" + s : "";
};
const seg = encodeURIComponent;

// ---- types (mirroring docs/console-api.md; null = the console could not learn it) ----

export interface Node {
  node: string;
  addr: string;
  brokerId: number;
  up: boolean;
  error: string;
  role: string; // LEADER, FOLLOWER, CANDIDATE, DOWN…
  term: number;
  leader: string;
  commitIndex: number;
  appliedIndex: number;
  lastIndex: number;
  lagEntries: number;
  lagBytes: number;
  lastContact: string;
  lastContactMs: number | null;
  commitLogMaxOffset: number;
  commitLogMinOffset: number;
  diskUsedRatio: number | null;
  diskTotalBytes: number | null;
  diskFreeBytes: number | null;
}
export interface Group {
  cluster: string;
  brokerName: string;
  term: number;
  leader: string;
  leaderAddr: string;
  /** null when no node of the group answered for its raft configuration. */
  voters: number | null;
  nonvoters: number | null;
  healthy: number;
  quorum: number | null;
  nodes: Node[];
}
export interface ClusterView {
  time: number;
  namesrv: string[];
  groups: Group[];
}
export interface LeadershipEvent {
  time: number;
  brokerName: string;
  node: string;
  term: number;
  leader: string;
  previousLeader?: string;
  cause: string;
  detail?: string;
}
export type Operation =
  | "topic.create"
  | "topic.update"
  | "topic.delete"
  | "group.reset"
  | "raft.transfer"
  | "raft.addVoter"
  | "raft.addNonvoter"
  | "raft.remove"
  | "raft.snapshot";
export interface Session {
  aclEnabled: boolean;
  loggedIn: boolean;
  accessKey: string;
  admin: boolean;
  operations: Operation[];
  version?: string;
}
export type Perm = "R" | "W" | "RW" | "-";
export interface TopicConfig {
  readQueues: number;
  writeQueues: number;
  perm: Perm;
  order: boolean;
}
export interface TopicSummary extends TopicConfig {
  name: string;
  system: boolean;
  brokerNames: string[];
  inPerSec: number | null;
  outPerSec: number | null;
}
export interface TopicDetail {
  name: string;
  system: boolean;
  inPerSec: number | null;
  outPerSec: number | null;
  configs: (TopicConfig & { brokerName: string })[];
  /** error: the queue could not be read (its numbers are then not meaningful). */
  queues: { brokerName: string; queueId: number; minOffset: number; maxOffset: number; error?: string }[];
  groups: string[];
}
export interface BrokerResult {
  brokerName: string;
  ok: boolean;
  error: string;
}
export interface GroupSummary {
  name: string;
  system: boolean;
  brokerNames: string[];
  topics: string[];
  lag: number | null;
  clients: number | null;
  consumePerSec: number | null;
  consumeEnable: boolean;
  retryMaxTimes: number;
}
export interface GroupDetail {
  name: string;
  lag: number | null;
  consumePerSec: number | null;
  queues: {
    topic: string;
    brokerName: string;
    queueId: number;
    brokerOffset: number;
    consumerOffset: number;
    lag: number;
    lastTimestamp: number | null;
  }[];
  clients: { clientId: string; addr: string; language: string; version: number | string; brokerName?: string }[];
  retry: { topic: string; messages: number };
  dlq: { topic: string; messages: number };
}
export interface ResetPreview {
  topic: string;
  timestamp: number;
  lagBefore: number;
  lagAfter: number;
  queues: {
    brokerName: string;
    queueId: number;
    brokerOffset: number;
    currentOffset: number;
    newOffset: number;
    lagBefore: number;
    lagAfter: number;
  }[];
  summary: string;
}
export interface Replica {
  node: string;
  addr: string;
  up: boolean;
  stored: boolean;
  commitLogOffset: number | null;
  error: string;
}
export interface Message {
  msgId: string;
  uniqKey?: string;
  topic: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  bornTimestamp: number;
  storeTimestamp: number;
  bornHost: string;
  storeHost: string;
  tags: string;
  keys: string;
  reconsumeTimes: number;
  properties: Record<string, string>;
  bodySize: number;
  body?: string;
  bodyText?: string;
  bodyIsText?: boolean;
  replicas?: Replica[];
}
export type RaftOp = "transfer-leader" | "add-voter" | "add-nonvoter" | "remove" | "snapshot";
export interface RaftServers {
  brokerName: string;
  servers: { id: string; address: string; suffrage: string; leader: boolean }[];
}
export interface RaftPreview {
  op: RaftOp;
  brokerName: string;
  votersBefore: number;
  votersAfter: number;
  quorumAfter: number;
  failuresTolerated: number;
  summary: string;
  warnings?: string[];
}
export interface Series {
  name: string;
  labels: Record<string, string>;
  points: [number, number][];
}
export interface SeriesSet {
  intervalMs: number;
  windowMs: number;
  series: Series[];
}

// ---- calls ----

const confirmed = (b: object = {}) => ({ ...b, confirm: true });

export const api = {
  session: () => call<Session>("GET", "/session"),
  login: (accessKey: string, secretKey: string) => call<Session>("POST", "/login", { accessKey, secretKey }),
  logout: () => call<{ loggedIn: boolean }>("POST", "/logout"),

  cluster: () => call<ClusterView>("GET", "/cluster"),
  timeline: (brokerName?: string) => call<{ events: LeadershipEvent[] }>("GET", `/timeline${q({ brokerName })}`),

  topics: () => call<{ topics: TopicSummary[] }>("GET", "/topics"),
  topic: (name: string) => call<TopicDetail>("GET", `/topics/${seg(name)}`),
  createTopic: (t: { name: string } & TopicConfig) =>
    call<{ results: BrokerResult[] }>("POST", "/topics", confirmed(t)),
  updateTopic: (name: string, patch: Partial<TopicConfig>) =>
    call<{ changes: (BrokerResult & { changed: boolean })[] }>("PATCH", `/topics/${seg(name)}`, confirmed(patch)),
  deletePreview: (name: string) =>
    call<{ summary: string; groups: string[]; messages: number }>("GET", `/topics/${seg(name)}/delete-preview`),
  deleteTopic: (name: string) => call<{ results: BrokerResult[] }>("DELETE", `/topics/${seg(name)}`, confirmed()),

  groups: () => call<{ groups: GroupSummary[] }>("GET", "/groups"),
  group: (name: string) => call<GroupDetail>("GET", `/groups/${seg(name)}`),
  resetPreview: (group: string, topic: string, timestamp: number) =>
    call<ResetPreview>("POST", `/groups/${seg(group)}/reset-preview`, { topic, timestamp }),
  reset: (group: string, topic: string, timestamp: number) =>
    call<{ queues: { brokerName: string; queueId: number; offset: number }[] }>(
      "POST",
      `/groups/${seg(group)}/reset`,
      confirmed({ topic, timestamp }),
    ),

  searchMessages: (p: {
    topic?: string;
    key?: string;
    msgId?: string;
    brokerName?: string;
    queueId?: number;
    offset?: number;
    begin?: number;
    end?: number;
  }) => call<{ messages: Message[] }>("GET", `/messages${q(p)}`),
  message: (msgId: string, topic?: string) => call<Message>("GET", `/messages/${seg(msgId)}${q({ topic })}`),

  raft: (brokerName: string) => call<RaftServers>("GET", `/raft/${seg(brokerName)}`),
  raftPreview: (brokerName: string, op: RaftOp, id?: string, address?: string) =>
    call<RaftPreview>("POST", `/raft/${seg(brokerName)}/preview`, { op, id, address }),
  raftDo: (brokerName: string, op: RaftOp, id?: string, address?: string) =>
    call<{ ok: boolean; summary?: string }>("POST", `/raft/${seg(brokerName)}/${op}`, confirmed({ id, address })),

  series: (since?: number) => call<SeriesSet>("GET", `/series${q({ since })}`),
};

/**
 * subscribe opens the server-sent event stream. EventSource reconnects by itself; onState tells
 * the page whether the stream is live, so a dead console server shows as such instead of as
 * stale numbers, and clusterError carries the server's words when no nameserver answers.
 */
export function subscribe(h: {
  onCluster: (v: ClusterView) => void;
  onLeadership?: (e: LeadershipEvent) => void;
  onClusterError?: (msg: string) => void;
  onState: (live: boolean, why?: string) => void;
}): () => void {
  const es = new EventSource("/api/v1/events");
  es.onopen = () => h.onState(true);
  es.onerror = () => h.onState(false, "the live stream from the console server is interrupted; reconnecting…");
  es.addEventListener("cluster", (ev) => h.onCluster(JSON.parse((ev as MessageEvent).data)));
  es.addEventListener("leadership", (ev) => h.onLeadership?.(JSON.parse((ev as MessageEvent).data)));
  es.addEventListener("clusterError", (ev) => h.onClusterError?.(JSON.parse((ev as MessageEvent).data).error));
  return () => es.close();
}
