// Browser tests of the console against a real cluster (started by console/browser_test.go,
// which passes CONSOLE_URL, NAMESRV, ROCKETRAFT_BIN, BROKER_PIDS and CHROMIUM). Headless
// Debian Chromium driven by playwright-core; no Playwright browser download.
//
// Each step is a function that throws on failure; the run prints one line per step and a
// closing "N passed, N failed" line, and exits non-zero when any failed. --short runs the
// CI subset (cluster page, leader kill within 5 s, bad input).
import { chromium } from "playwright-core";
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`run.mjs: $${k} is not set; start it through make console-test`);
  return v;
};
const base = env("CONSOLE_URL");
const bin = env("ROCKETRAFT_BIN");
const namesrv = env("NAMESRV");
const pids = JSON.parse(env("BROKER_PIDS"));
const shots = process.env.SCREENSHOT_DIR || "";
const short = process.argv.includes("--short");
const acl = process.argv.includes("--acl");
if (shots) mkdirSync(shots, { recursive: true });

// How long to wait for the cluster to do something (a raft write, a registration). Generous:
// the machine may be shared; the one bound the issue sets (a new leader on the page within 5 s
// of the kill) has its own, tight timeout.
const slow = 20000;
const topic = "ConsoleTopic";
const group = "console_demo";
const sent = 200;
/** Messages the topic holds after the bench run (all of them, unless a send failed). */
let stored = sent;
/** A key the broker indexed, found through the API before the page searches for it. */
let key = "order-17";

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // Root on CI machines: Chromium's sandbox needs a user namespace it does not get there.
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
const page = await context.newPage();
page.setDefaultTimeout(slow);
const outside = [];
page.on("request", (r) => {
  if (!r.url().startsWith(base) && !r.url().startsWith("data:")) outside.push(r.url());
});
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(String(e)));

const shot = async (name) => {
  if (shots) await page.screenshot({ path: join(shots, name + ".png"), fullPage: true });
};
const check = (cond, msg) => {
  if (!cond) throw new Error(msg);
};
const api = async (path, init) => {
  const r = await fetch(base + "/api/v1" + path, init);
  return { status: r.status, body: await r.json().catch(() => null) };
};
const text = async (sel) => (await page.locator(sel).first().innerText()).trim();
const leaderOnPage = async () => {
  const l = (await text('[data-group="broker-a"] [data-testid="group-leader"] b')) || "";
  const term = Number((await text('[data-group="broker-a"] [data-testid="group-term"] b')).replace(/,/g, ""));
  return { leader: l, term };
};
const go = async (path) => {
  await page.goto(base + path);
  await page.waitForSelector("main section", { timeout: slow });
};
/** confirm clicks the dialog's action and waits for it to close; it returns the dialog's text. */
const confirm = async () => {
  const dlg = page.locator('[role="dialog"]');
  await dlg.waitFor({ timeout: slow });
  const said = await dlg.innerText();
  await dlg.locator("[data-confirm]").click();
  await dlg.waitFor({ state: "detached", timeout: 20000 });
  return said;
};
const waitLeader = async (timeout) => {
  const t0 = Date.now();
  for (;;) {
    try {
      await go("/cluster");
      await page.waitForFunction(
        () => {
          const b = document.querySelector('[data-group="broker-a"] [data-testid="group-leader"] b');
          return b && b.textContent && b.textContent !== "none";
        },
        null,
        { timeout: 3000 },
      );
      return await leaderOnPage();
    } catch (e) {
      if (Date.now() - t0 > timeout) throw new Error(`no leader on the cluster page after ${timeout} ms: ${e.message}`);
    }
  }
};

/**
 * waitRow waits for a topic in the list, reloading: the list is the nameserver's routes, which
 * learn a topic at the brokers' next registration (slower on a loaded machine).
 */
const waitRow = async (name) => {
  const deadline = Date.now() + 30000;
  for (;;) {
    try {
      await page.locator(`tr[data-topic="${name}"]`).waitFor({ timeout: 5000 });
      return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`topic ${name} not in the list after 30 s: ${e.message}`);
      await go("/topics");
    }
  }
};
const steps = [];
const step = (name, f, inShort = false, inAcl = false) => steps.push({ name, f, inShort, inAcl });
const killed = new Set();

step(
  "cluster page shows the group, its leader and term, live",
  async () => {
    const { leader, term } = await waitLeader(30000);
    check(leader in pids, `leader "${leader}" on the page is not one of the nodes ${Object.keys(pids)}`);
    check(term > 0, `term on the page is ${term}`);
    await page.locator(".live.on").waitFor({ timeout: slow });
    const rows = await page.locator('[data-group="broker-a"] tr[data-node]').count();
    check(rows === 3, `the group shows ${rows} nodes, want 3`);
    const role = await text(`[data-group="broker-a"] tr[data-node="${leader}"] td.role`);
    check(role === "LEADER", `the leader's row says role ${role}`);
    await shot("cluster");
  },
  true,
);

step(
  "bad input: unknown topic and malformed msgId give clear messages",
  async () => {
    await go("/topics/NoSuchTopic");
    const p = page.locator(".problem");
    await p.waitFor({ timeout: slow });
    const t = await p.innerText();
    check(/NoSuchTopic/.test(t), `unknown topic page says "${t}", not naming the topic`);
    await go("/messages?mode=msgId");
    await page.fill('input[name="msgId"]', "xyz-not-an-id");
    await page.click('button[type="submit"]');
    const m = await page.locator(".problem").innerText();
    check(/malformed/.test(m) && /xyz-not-an-id/.test(m), `malformed msgId says "${m}"`);
    // The server's own check, bypassing the page's: a wrongly sized hex id.
    await go("/messages/ABCDEF");
    const s = await page.locator(".problem").first().innerText();
    check(/msgId/i.test(s) && /ABCDEF/.test(s), `a 6-digit msgId page says "${s}"`);
    console.log(`  the server on msgId ABCDEF: ${s}`);
    await go("/messages?mode=key");
    await page.fill('input[name="topic"]', "NoSuchTopic");
    await page.fill('input[name="key"]', "k1");
    await page.click('button[type="submit"]');
    const k = await page.locator(".problem").first().innerText({ timeout: slow });
    check(/NoSuchTopic/.test(k), `search on an unknown topic says "${k}"`);
    await shot("bad-input");
  },
  true,
);

step("create a topic from the page (cancel first: no change without confirmation)", async () => {
  await go("/topics");
  await page.fill('input[name="topic-name"]', topic);
  await page.click('form.inline button[type="submit"]');
  await page.locator('[role="dialog"]').waitFor();
  await page.click('[role="dialog"] button:not([data-confirm])');
  const before = await api(`/topics/${topic}`);
  check(before.status === 404, `after Cancel the topic exists (GET answered ${before.status})`);
  await page.click('form.inline button[type="submit"]');
  const said = await confirm();
  check(said.includes(topic), `the dialog does not name the topic: ${said}`);
  await page.locator(".ok").waitFor({ timeout: slow });
  await waitRow(topic);
  await shot("topics");
});

step("send with rocketraft bench; the topic page shows the queue offsets", async () => {
  const { stdout } = await run(
    bin,
    [
      "bench",
      "produce",
      "--namesrv",
      namesrv,
      "--topic",
      topic,
      "--count",
      String(sent),
      "--producers",
      "4",
      "--size",
      "64",
      "--key-prefix",
      "order-",
    ],
    { timeout: 60000 },
  );
  await go(`/topics/${topic}`);
  await page.locator("table.queues tbody tr").first().waitFor({ timeout: slow });
  const maxes = await page.locator("table.queues tbody tr td:nth-child(4)").allInnerTexts();
  const total = maxes.reduce((a, s) => a + Number(s.replace(/,/g, "")), 0);
  // On a starved machine the group may re-elect during the run: a send then fails with an unknown
  // outcome (it may or may not be stored). The page must show what is stored; that lies between
  // the sends acknowledged and all sends.
  const m = /summary: (\d+) ok, (\d+) failed/.exec(stdout);
  check(m, `no summary line in the bench output: ${stdout.slice(-300)}`);
  const ok = Number(m[1]);
  const truth = (await api(`/topics/${topic}`)).body.queues.reduce((a, q) => a + q.maxOffset, 0);
  check(total === truth, `the page's max offsets add up to ${total}, the API's to ${truth}`);
  check(ok <= total && total <= sent, `${total} stored, ${ok} of ${sent} sends acknowledged`);
  stored = total;
  if (ok < sent)
    console.log(`  note: ${sent - ok} of ${sent} sends failed (a re-election under load); ${stored} stored`);
  await shot("topic");
});

step("find a message by key and open it: body, properties, replicas", async () => {
  for (let i = 17; i < 60; i++) {
    const r = await api(`/messages?topic=${topic}&key=order-${i}`);
    if (r.body && r.body.messages && r.body.messages.length) {
      key = `order-${i}`;
      break;
    }
  }
  await go(`/messages?mode=key&topic=${topic}&key=${key}`);
  await page.click('button[type="submit"]');
  const row = page.locator("table.found tbody tr").first();
  await row.waitFor({ timeout: 15000 });
  check((await row.innerText()).includes(key), `result row: ${await row.innerText()}`);
  await shot("messages");
  await row.locator("a").click();
  await page.locator("table.props").waitFor({ timeout: slow });
  const props = await page.locator("table.props").innerText();
  check(new RegExp(`KEYS\\s+${key}\\b`).test(props), `properties do not show KEYS ${key}: ${props}`);
  await page.locator("table.replicas tbody tr").first().waitFor();
  const stored = await page.locator("table.replicas tbody tr td:nth-child(3)").allInnerTexts();
  check(stored.filter((s) => s === "yes").length === 3 - killed.size, `replicas stored: ${stored}`);
  await page.click('button.tab:has-text("hex")');
  const hex = await text('[data-testid="body"]');
  check(/^00000000  [0-9a-f]{2} /.test(hex), `hex view: ${hex.slice(0, 80)}`);
  await shot("message");
});

step("find messages by queue offset and by time range", async () => {
  await go("/messages");
  await page.click('button.tab:has-text("by queue offset")');
  await page.fill('input[name="topic"]', topic);
  await page.fill('input[name="brokerName"]', "broker-a");
  await page.fill('input[name="queueId"]', "2");
  await page.fill('input[name="offset"]', "3");
  await page.click('button[type="submit"]');
  const rows = page.locator("table.found tbody tr");
  await rows.first().waitFor({ timeout: slow });
  check((await rows.count()) === 1, `queue offset search found ${await rows.count()} messages`);
  check((await rows.first().innerText()).includes("broker-a/2/3"), `row: ${await rows.first().innerText()}`);
  await page.click('button.tab:has-text("by time range")');
  await page.fill('input[name="topic"]', topic);
  await page.click('button[type="submit"]');
  await rows.first().waitFor({ timeout: slow });
  const n = await rows.count();
  check(n >= 1 && n <= sent, `time range search found ${n} messages`);
});

step("update a topic (only the changed field is sent) and delete it after its preview", async () => {
  const scratch = "ConsoleScratch";
  const made = await api("/topics", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: scratch, readQueues: 4, writeQueues: 4, confirm: true }),
  });
  check(
    made.status === 200,
    `creating ${scratch} through the API answered ${made.status}: ${JSON.stringify(made.body)}`,
  );
  await go(`/topics/${scratch}`);
  await page.locator('input[name="write"]').waitFor();
  await page.fill('input[name="write"]', "2");
  const sentBody = new Promise((resolve) =>
    page.on("request", (r) => r.method() === "PATCH" && resolve(r.postDataJSON())),
  );
  await page.click('form.inline button[type="submit"]');
  const said = await confirm();
  check(/writeQueues: 4 → 2/.test(said), `update dialog: ${said}`);
  const body = await sentBody;
  check(
    JSON.stringify(body) === JSON.stringify({ writeQueues: 2, confirm: true }),
    `PATCH body ${JSON.stringify(body)}`,
  );
  const after = await api(`/topics/${scratch}`);
  const c = after.body.configs[0];
  check(c.writeQueues === 2 && c.readQueues === 4, `after the update: ${JSON.stringify(c)}`);
  await page.click("form.inline button.danger");
  const del = await confirm();
  check(del.includes(scratch), `delete dialog does not carry the preview: ${del}`);
  await page.waitForURL(base + "/topics", { timeout: slow });
  const gone = await api(`/topics/${scratch}`);
  check(gone.status === 404, `after the delete GET /topics/${scratch} answered ${gone.status}`);
});

step("consumer group: lag per queue, reset by time with a preview", async () => {
  await run(
    bin,
    ["bench", "consume", "--namesrv", namesrv, "--topic", topic, "--group", group, "--count", String(stored)],
    { timeout: 120000 },
  );
  await go(`/groups/${group}`);
  await page.locator("table.lag tbody tr").first().waitFor({ timeout: 15000 });
  // The consumer's offsets reach the broker within a commit interval; then lag is 0.
  await page.fill('input[name="reset-topic"]', topic);
  await page.fill('input[name="reset-time"]', "2000-01-01T00:00:00");
  await page.click('form.inline button[type="submit"]');
  const preview = page.locator('[data-testid="reset-preview"]');
  await preview.waitFor({ timeout: slow });
  const pv = await preview.innerText();
  check(pv.includes(String(stored)), `preview does not show the lag of ${stored} the reset creates: ${pv}`);
  await shot("group");
  await page.click("form.inline button.danger");
  await confirm();
  await page.locator(".ok").waitFor({ timeout: slow });
  const deadline = Date.now() + 15000;
  for (;;) {
    const g = await api(`/groups/${group}`);
    if (g.body && g.body.lag === stored) break;
    if (Date.now() > deadline)
      throw new Error(`after the reset the group's lag is ${g.body && g.body.lag}, want ${stored}`);
    await new Promise((r) => setTimeout(r, 500));
  }
});

step("transfer leadership from the page", async () => {
  const { leader, term } = await waitLeader(15000);
  const to = Object.keys(pids).find((id) => id !== leader && !killed.has(id));
  await go("/raft");
  const btn = page.locator(`[data-group="broker-a"] tr[data-server="${to}"] [data-op="transfer-leader"]`);
  await btn.waitFor({ timeout: slow });
  await btn.click();
  const said = await confirm();
  check(said.includes("Transfer leadership"), `dialog: ${said}`);
  await shot("raft");
  const deadline = Date.now() + 15000;
  for (;;) {
    const now = await waitLeader(10000);
    if (now.leader === to && now.term > term) break;
    if (Date.now() > deadline) throw new Error(`leader is ${now.leader} (term ${now.term}) after transfer to ${to}`);
    await new Promise((r) => setTimeout(r, 300));
  }
});

step("snapshot every node from the raft page", async () => {
  await go("/raft");
  await page.locator('[data-op="snapshot"]').click();
  const said = await confirm();
  check(said.length > 20, `snapshot dialog: ${said}`);
  await page.locator(".ok").waitFor({ timeout: 20000 });
});

step("charts page draws throughput, lag, fsync and consumer lag", async () => {
  await go("/charts");
  await page.locator(".chart").first().waitFor();
  const n = await page.locator(".chart").count();
  check(n >= 5, `${n} charts, want the 5 named ones at least`);
  await page.waitForTimeout(2500);
  const canvases = await page.locator(".chart canvas").count();
  check(canvases >= 1, "no chart drew a canvas");
  await shot("charts");
});

step(
  "SIGKILL the leader: the page shows the new leader and term within 5 s",
  async () => {
    const before = await waitLeader(15000);
    await go("/cluster");
    await page.locator(".live.on").waitFor({ timeout: slow });
    const t0 = Date.now();
    process.kill(pids[before.leader], "SIGKILL");
    killed.add(before.leader);
    await page.waitForFunction(
      ({ old, term }) => {
        const b = document.querySelector('[data-group="broker-a"] [data-testid="group-leader"] b');
        const t = document.querySelector('[data-group="broker-a"] [data-testid="group-term"] b');
        if (!b || !t) return false;
        const l = b.textContent;
        return l && l !== "none" && l !== old && Number(t.textContent.replace(/,/g, "")) > term;
      },
      { old: before.leader, term: before.term },
      { timeout: 5000, polling: 100 },
    );
    const ms = Date.now() - t0;
    const after = await leaderOnPage();
    console.log(
      `  measured: leader ${before.leader} (term ${before.term}) killed → page shows ${after.leader} (term ${after.term}) after ${ms} ms`,
    );
    await page.locator(`[data-group="broker-a"] tr.down`).waitFor({ timeout: slow });
    await shot("cluster-after-kill");
  },
  true,
);

step("after the kill: remove the dead node (preview says what is left), add it back as a non-voter", async () => {
  const dead = [...killed][0];
  check(dead, "no node was killed before this step");
  await go("/raft");
  const row = page.locator(`[data-group="broker-a"] tr[data-server="${dead}"]`);
  await row.waitFor({ timeout: slow });
  const addr = (await row.locator("td:nth-child(2)").innerText()).trim();
  await row.locator('[data-op="remove"]').click();
  const said = await confirm();
  check(/2 voters/.test(said) && /one more failure loses the quorum/.test(said), `remove dialog: ${said}`);
  await page.locator('[data-group="broker-a"] .ok').waitFor({ timeout: 20000 });
  const after = await api("/raft/broker-a");
  check(!after.body.servers.some((s) => s.id === dead), `${dead} is still a member: ${JSON.stringify(after.body)}`);
  await page.fill('[data-group="broker-a"] input[name="new-id"]', dead);
  await page.fill('[data-group="broker-a"] input[name="new-addr"]', addr);
  await page.click('[data-group="broker-a"] button:has-text("Add non-voter…")');
  await confirm();
  const deadline = Date.now() + 15000;
  for (;;) {
    const r = await api("/raft/broker-a");
    const s = r.body.servers.find((x) => x.id === dead);
    if (s && s.suffrage === "Nonvoter") break;
    if (Date.now() > deadline) throw new Error(`${dead} is not a non-voter: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 300));
  }
  await go("/raft");
  await shot("raft-after-remove");
});

step("the nameserver dies: the cluster page says so and keeps its last view", async () => {
  await go("/cluster");
  await page.locator(".live.on").waitFor({ timeout: slow });
  const rows = await page.locator('[data-group="broker-a"] tr[data-node]').count();
  process.kill(Number(env("NAMESRV_PID")), "SIGKILL");
  const p = page.locator(".problem");
  await p.waitFor({ timeout: 15000 });
  const said = await p.innerText();
  check(/nameserver|namesrv/i.test(said), `with the nameserver down the page says "${said}"`);
  const left = await page.locator('[data-group="broker-a"] tr[data-node]').count();
  check(rows > 0 && left === rows, `the page showed ${rows} nodes before the nameserver died and ${left} after`);
  await shot("namesrv-down");
});

const account = (k) => {
  const [ak, sk] = env(k).split(":");
  return { ak, sk };
};
const login = async (ak, sk) => {
  await page.goto(base + "/cluster");
  await page.locator("main.login").waitFor({ timeout: slow });
  await page.fill('input[name="accessKey"]', ak);
  await page.fill('input[name="secretKey"]', sk);
  await page.click('main.login button[type="submit"]');
};
const navLabels = async () => (await page.locator("header nav a").allInnerTexts()).map((s) => s.trim());

step(
  "ACL: the API wants a session; the page asks for a log-in and refuses a wrong secret",
  async () => {
    const anon = await api("/cluster");
    check(anon.status === 401, `GET /cluster without a session answered ${anon.status}, want 401`);
    const { ak } = account("ACL_ADMIN");
    await login(ak, "not-the-secret");
    const p = page.locator("main.login .problem");
    await p.waitFor({ timeout: slow });
    const said = (await p.innerText()).trim();
    check(said.length > 10, `wrong secret: the message is "${said}"`);
    check((await page.locator("header nav").count()) === 0, "a wrong secret got past the log-in");
    await shot("login");
  },
  true,
  true,
);

step(
  "ACL: a non-admin account sees no operations, and the server refuses them too",
  async () => {
    const { ak, sk } = account("ACL_READER");
    await login(ak, sk);
    await page.locator("header nav").waitFor({ timeout: slow });
    const { leader } = await waitLeader(30000);
    check(leader in pids, `leader on the page: "${leader}"`);
    const labels = await navLabels();
    check(!labels.includes("Raft operations"), `a non-admin sees the raft page in the menu: ${labels}`);
    check((await page.locator(".who").innerText()).includes("read-only"), "the header does not say read-only");
    await go("/topics");
    check((await page.locator('input[name="topic-name"]').count()) === 0, "a non-admin sees the create-topic form");
    await shot("read-only");
    await go("/raft");
    check(/may not run raft operations/.test(await page.locator(".problem").innerText()), "raft page for a non-admin");
    const refused = await page.evaluate(async () => {
      const r = await fetch("/api/v1/topics", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ name: "ReaderTopic", confirm: true }),
      });
      return r.status;
    });
    check(refused === 403, `a non-admin's POST /topics answered ${refused}, want 403`);
    await page.click('header .who button:has-text("Log out")');
    await page.locator("main.login").waitFor({ timeout: slow });
  },
  true,
  true,
);

step(
  "ACL: an admin account gets the operations and creates a topic",
  async () => {
    const { ak, sk } = account("ACL_ADMIN");
    await login(ak, sk);
    await page.locator("header nav").waitFor({ timeout: slow });
    check((await navLabels()).includes("Raft operations"), "an admin does not see the raft page");
    await go("/topics");
    await page.fill('input[name="topic-name"]', "AclTopic");
    await page.click('form.inline button[type="submit"]');
    await confirm();
    await page.locator(".ok").waitFor({ timeout: slow });
    await waitRow("AclTopic");
  },
  false,
  true,
);

let passed = 0;
let failed = 0;
for (const s of steps) {
  if (short && !s.inShort) continue;
  if (acl !== s.inAcl) continue;
  const t0 = Date.now();
  try {
    await s.f();
    passed++;
    console.log(`ok    ${s.name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL  ${s.name} (${Date.now() - t0} ms): ${e.message}`);
    await page.screenshot({ path: join(tmpdir(), `console-fail-${passed + failed}.png`) }).catch(() => {});
  }
}
if (outside.length) {
  failed++;
  console.log(`FAIL  the page requested outside hosts: ${outside.slice(0, 5).join(", ")}`);
}
if (pageErrors.length) {
  failed++;
  console.log(`FAIL  uncaught errors in the page: ${pageErrors.slice(0, 3).join(" | ")}`);
}
await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
