// Every page renders against the contract's documents (a fake server) in headless Chromium:
// no uncaught error, the data shows, bad input and down nodes show words, and no state change
// is sent without the confirmation. Skipped when Chromium is absent (the browser tests are not).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import { start } from "./fake-api.mjs";

const exe = process.env.CHROMIUM || "/usr/bin/chromium";
const skip = !existsSync(exe) && `no Chromium at ${exe}`;
let fake, browser, page;
const errors = [];

before(async () => {
  if (skip) return;
  fake = await start();
  browser = await chromium.launch({ executablePath: exe, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  page = await browser.newPage();
  page.on("pageerror", (e) => errors.push(String(e)));
});
after(async () => {
  await browser?.close();
  fake?.close();
});
const open = async (path) => {
  await page.goto(fake.url + path);
  await page.waitForSelector("main section");
};

test("cluster page: nodes, a down node in words, the timeline", { skip }, async () => {
  await open("/cluster");
  await page.locator('tr[data-node="n0"] td.role').waitFor();
  assert.equal(await page.locator('tr[data-node="n0"] td.role').innerText(), "LEADER");
  assert.match(await page.locator("tr.down").innerText(), /connection refused/);
  assert.match(await page.locator("table.timeline").innerText(), /election_timeout/);
  assert.equal(await page.locator('[data-testid="group-term"] b').innerText(), "3");
});

test("topics: cancel sends nothing; update sends only the changed field with confirm", { skip }, async () => {
  await open("/topics/TopicTest");
  await page.locator("table.queues").waitFor();
  assert.match(await page.locator("table.queues").innerText(), /GET_MAX_OFFSET\(30\) timed out/);
  await page.fill('input[name="read"]', "8");
  await page.click('form.inline button[type="submit"]');
  const dlg = page.locator('[role="dialog"]');
  assert.match(await dlg.innerText(), /readQueues: 4 → 8/);
  const n = fake.calls.length;
  await dlg.locator("button:not([data-confirm])").click();
  assert.equal(fake.calls.filter((c) => c.method !== "GET").length, 0);
  await page.click('form.inline button[type="submit"]');
  await page.locator("[data-confirm]").click();
  await page.waitForTimeout(300);
  const patch = fake.calls.slice(n).find((c) => c.method === "PATCH");
  assert.deepEqual(patch.body, { readQueues: 8, confirm: true });
});

test("topic form refuses bad input before sending", { skip }, async () => {
  await open("/topics");
  await page.fill('input[name="topic-name"]', "bad topic!");
  await page.click('form.inline button[type="submit"]');
  assert.match(await page.locator(".problem").innerText(), /may contain only letters/);
  assert.equal(await page.locator('[role="dialog"]').count(), 0);
});

test("messages: malformed msgId and unknown topic show clear messages; a message opens", { skip }, async () => {
  await open("/messages?mode=msgId");
  await page.fill('input[name="msgId"]', "nothex");
  await page.click('button[type="submit"]');
  assert.match(await page.locator(".problem").innerText(), /msgId "nothex" is malformed/);
  await open("/messages?mode=key");
  await page.fill('input[name="topic"]', "NoSuchTopic");
  await page.fill('input[name="key"]', "k");
  await page.click('button[type="submit"]');
  await page.locator(".problem").waitFor();
  assert.match(await page.locator(".problem").innerText(), /topic "NoSuchTopic" does not exist/);
  await open("/messages/7F000001000022F9000000000000BC61?topic=TopicTest");
  await page.locator("table.props").waitFor();
  await page.click('button.tab:has-text("JSON")');
  assert.match(await page.locator('[data-testid="body"]').innerText(), /"id": 17/);
  assert.match(await page.locator("table.replicas").innerText(), /down/);
});

test("group reset shows the preview's lag before the confirmation", { skip }, async () => {
  await open("/groups/demo");
  await page.fill('input[name="reset-topic"]', "TopicTest");
  await page.click('form.inline button[type="submit"]');
  await page.locator('[data-testid="reset-preview"]').waitFor();
  assert.match(await page.locator('[data-testid="reset-preview"]').innerText(), /250/);
  await page.click("form.inline button.danger");
  assert.match(await page.locator('[role="dialog"]').innerText(), /re-consume 200 messages/);
  await page.keyboard.press("Escape");
  assert.equal(await page.locator('[role="dialog"]').count(), 0, "Escape did not cancel");
  await page.selectOption('select[name="reset-to"]', "beginning");
  const n = fake.calls.length;
  await page.click('form.inline button[type="submit"]');
  await page.locator('[data-testid="reset-preview"]').waitFor();
  const asked = fake.calls.slice(n).find((c) => c.path.endsWith("/reset-preview"));
  assert.deepEqual(asked.body, { topic: "TopicTest", timestamp: 0 });
});

test("raft remove: the dialog carries the server's summary", { skip }, async () => {
  await open("/raft");
  await page.locator('tr[data-server="n1"] [data-op="remove"]').click();
  assert.match(await page.locator('[role="dialog"]').innerText(), /one more failure loses the quorum/);
});

test("charts render and no page threw", { skip }, async () => {
  await open("/charts");
  await page.locator(".chart canvas").first().waitFor();
  // Five named charts, and one for the series no chart lists.
  assert.equal(await page.locator(".chart").count(), 6);
  assert.equal(await page.locator('.chart[data-chart="someNewSeries"] canvas').count(), 1);
  assert.deepEqual(errors, []);
});

test("every change the pages sent carried confirm: true (previews and log-in excepted)", { skip }, async () => {
  const changes = fake.calls.filter(
    (c) => c.method !== "GET" && !c.path.endsWith("preview") && !["/api/v1/login", "/api/v1/logout"].includes(c.path),
  );
  assert.ok(changes.length >= 1, "the tests above sent no change at all");
  for (const c of changes) assert.equal(c.body?.confirm, true, `${c.method} ${c.path} without confirm`);
});

test("a page that cannot render its document says so; the menu stays", { skip }, async () => {
  await open("/topics/Broken");
  const p = page.locator(".problem");
  await p.waitFor();
  assert.match(await p.innerText(), /failed to render/);
  assert.ok((await page.locator("header nav a").count()) >= 5);
  await page.click('header nav a:has-text("Cluster")');
  await page.locator('tr[data-node="n0"]').waitFor();
});
