// A tiny stand-in for the console server, for the front-end's unit tests only: it serves
// ../dist and answers the documented paths of docs/console-api.md with fixed documents shaped
// like the contract's examples. The browser tests (test/browser) run against the real server.
import { createServer } from "node:http";
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const dist = fileURLToPath(new URL("../../../dist", import.meta.url));
const now = Date.now();
const node = (id, role, up = true) =>
  up
    ? {
        node: id,
        addr: `127.0.0.1:1091${id[1]}`,
        brokerId: role === "LEADER" ? 0 : 1,
        up,
        error: "",
        role,
        term: 3,
        leader: "n0",
        commitIndex: 120,
        appliedIndex: role === "LEADER" ? 120 : 118,
        lastIndex: 120,
        lagEntries: role === "LEADER" ? 0 : 2,
        lagBytes: 0,
        lastContact: "0",
        lastContactMs: role === "LEADER" ? null : 40,
        commitLogMaxOffset: 48211,
        commitLogMinOffset: 0,
        diskUsedRatio: 0.41,
        diskTotalBytes: 5e11,
        diskFreeBytes: 2.9e11,
      }
    : {
        node: "",
        addr: `127.0.0.1:1091${id[1]}`,
        brokerId: 2,
        up: false,
        role: "DOWN",
        error: `dial tcp 127.0.0.1:1091${id[1]}: connect: connection refused`,
      };
export const cluster = {
  time: now,
  namesrv: ["127.0.0.1:9876"],
  groups: [
    {
      cluster: "DefaultCluster",
      brokerName: "broker-a",
      term: 3,
      leader: "n0",
      leaderAddr: "127.0.0.1:10910",
      voters: 3,
      nonvoters: 0,
      healthy: 2,
      quorum: 2,
      nodes: [node("n0", "LEADER"), node("n1", "FOLLOWER"), node("n2", "DOWN", false)],
    },
  ],
};
const msg = {
  msgId: "7F000001000022F9000000000000BC61",
  topic: "TopicTest",
  brokerName: "broker-a",
  queueId: 1,
  queueOffset: 17,
  commitLogOffset: 48225,
  bornTimestamp: now,
  storeTimestamp: now,
  bornHost: "127.0.0.1:51000",
  storeHost: "127.0.0.1:10911",
  tags: "TagA",
  keys: "order-17",
  reconsumeTimes: 0,
  properties: { KEYS: "order-17", TAGS: "TagA" },
  bodySize: 11,
  body: Buffer.from('{"id":17}').toString("base64"),
  bodyText: '{"id":17}',
  bodyIsText: true,
  replicas: [
    { node: "n0", addr: "127.0.0.1:10910", up: true, stored: true, commitLogOffset: 48225, error: "" },
    {
      node: "n2",
      addr: "127.0.0.1:10912",
      up: false,
      stored: false,
      commitLogOffset: null,
      error: "connection refused",
    },
  ],
};
const routes = {
  "GET /api/v1/session": () => ({
    aclEnabled: false,
    loggedIn: true,
    accessKey: "",
    admin: true,
    operations: [
      "topic.create",
      "topic.update",
      "topic.delete",
      "group.reset",
      "raft.transfer",
      "raft.addVoter",
      "raft.addNonvoter",
      "raft.remove",
      "raft.snapshot",
    ],
  }),
  "GET /api/v1/cluster": () => cluster,
  "GET /api/v1/timeline": () => ({
    events: [
      {
        time: now,
        brokerName: "broker-a",
        node: "n0",
        term: 3,
        leader: "n0",
        previousLeader: "n2",
        cause: "election_timeout",
        detail: "no heartbeat from n2 for 1.2s",
      },
    ],
  }),
  "GET /api/v1/topics": () => ({
    topics: [
      {
        name: "TopicTest",
        system: false,
        brokerNames: ["broker-a"],
        readQueues: 4,
        writeQueues: 4,
        perm: "RW",
        order: false,
        inPerSec: 120.5,
        outPerSec: null,
      },
    ],
  }),
  "GET /api/v1/topics/TopicTest": () => ({
    name: "TopicTest",
    system: false,
    inPerSec: 1,
    outPerSec: 2,
    configs: [{ brokerName: "broker-a", readQueues: 4, writeQueues: 4, perm: "RW", order: false }],
    queues: [
      { brokerName: "broker-a", queueId: 0, minOffset: 0, maxOffset: 250 },
      { brokerName: "broker-a", queueId: 1, minOffset: 0, maxOffset: 0, error: "GET_MAX_OFFSET(30) timed out" },
    ],
    groups: ["demo"],
  }),
  // A document missing its lists: the page must say it failed, not go blank.
  "GET /api/v1/topics/Broken": () => ({ name: "Broken" }),
  "GET /api/v1/groups": () => ({
    groups: [
      {
        name: "demo",
        system: false,
        brokerNames: ["broker-a"],
        topics: ["TopicTest"],
        lag: 200,
        clients: 2,
        consumePerSec: null,
        consumeEnable: true,
        retryMaxTimes: 16,
      },
    ],
  }),
  "GET /api/v1/groups/demo": () => ({
    name: "demo",
    lag: 50,
    consumePerSec: 1,
    queues: [
      {
        topic: "TopicTest",
        brokerName: "broker-a",
        queueId: 0,
        brokerOffset: 250,
        consumerOffset: 200,
        lag: 50,
        lastTimestamp: now,
      },
    ],
    clients: [],
    retry: { topic: "%RETRY%demo", messages: 3 },
    dlq: { topic: "%DLQ%demo", messages: 0 },
  }),
  "POST /api/v1/groups/demo/reset-preview": () => ({
    topic: "TopicTest",
    timestamp: 0,
    lagBefore: 50,
    lagAfter: 250,
    queues: [
      {
        brokerName: "broker-a",
        queueId: 0,
        brokerOffset: 250,
        currentOffset: 200,
        newOffset: 0,
        lagBefore: 50,
        lagAfter: 250,
      },
    ],
    summary: "demo will re-consume 200 messages of TopicTest (lag 50 → 250)",
  }),
  "GET /api/v1/messages": (u) =>
    u.searchParams.get("topic") === "NoSuchTopic"
      ? [404, { error: 'topic "NoSuchTopic" does not exist', code: "not_found", field: "topic" }]
      : { messages: [{ ...msg, body: undefined }] },
  ["GET /api/v1/messages/" + msg.msgId]: () => msg,
  "GET /api/v1/raft/broker-a": () => ({
    brokerName: "broker-a",
    servers: [
      { id: "n0", address: "127.0.0.1:10920", suffrage: "Voter", leader: true },
      { id: "n1", address: "127.0.0.1:10921", suffrage: "Voter", leader: false },
    ],
  }),
  "POST /api/v1/raft/broker-a/preview": () => ({
    op: "remove",
    brokerName: "broker-a",
    votersBefore: 3,
    votersAfter: 2,
    quorumAfter: 2,
    failuresTolerated: 0,
    summary: "removes n1; the group will have 2 voters; one more failure loses the quorum",
    warnings: [],
  }),
  "GET /api/v1/series": () => ({
    intervalMs: 1000,
    windowMs: 600000,
    series: [
      {
        name: "messagesInPerSec",
        labels: { brokerName: "broker-a" },
        points: [
          [now - 2000, 10],
          [now - 1000, 12],
        ],
      },
      { name: "consumerLag", labels: { group: "demo" }, points: [[now - 1000, 5]] },
      { name: "someNewSeries", labels: { node: "n0" }, points: [[now - 1000, 1]] },
    ],
  }),
};

/** start serves the fake on a free port; calls records every request (method, path, body). */
export function start() {
  const calls = [];
  const server = createServer((req, res) => {
    const u = new URL(req.url, "http://fake");
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      calls.push({ method: req.method, path: u.pathname, body: body ? JSON.parse(body) : undefined });
      if (u.pathname === "/api/v1/events") {
        res.writeHead(200, { "Content-Type": "text/event-stream" });
        res.write(`event: cluster\ndata: ${JSON.stringify(cluster)}\n\n`);
        return;
      }
      if (u.pathname.startsWith("/api/")) {
        const h = routes[`${req.method} ${u.pathname}`];
        let status = 200;
        let doc = h ? h(u) : { error: `no fake for ${req.method} ${u.pathname}`, code: "not_found" };
        if (!h) status = 404;
        if (Array.isArray(doc)) [status, doc] = doc;
        if (req.method !== "GET" && !u.pathname.endsWith("preview") && !(body && JSON.parse(body).confirm))
          [status, doc] = [400, { error: "confirm is required", code: "confirmation_required", field: "confirm" }];
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(doc));
        return;
      }
      const file = join(dist, u.pathname.slice(1));
      const isFile = u.pathname !== "/" && existsSync(file);
      res.writeHead(200, {
        "Content-Type":
          isFile && file.endsWith(".js")
            ? "text/javascript"
            : isFile && file.endsWith(".css")
              ? "text/css"
              : "text/html",
      });
      res.end(readFileSync(isFile ? file : join(dist, "index.html")));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${server.address().port}`, calls, close: () => server.close() }),
    ),
  );
}
