import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.mjs";

const f = await load("src/format.ts");

test("bytes reads like Apache's humanReadableByteCount", () => {
  assert.equal(f.bytes(0), "0 B");
  assert.equal(f.bytes(1023), "1023 B");
  assert.equal(f.bytes(1536), "1.5 KiB");
  assert.equal(f.bytes(20 * 1024 ** 3), "20.0 GiB");
  assert.equal(f.bytes(null), "–");
});

test("millis picks the unit", () => {
  assert.equal(f.millis(850), "850 ms");
  assert.equal(f.millis(2300), "2.3 s");
  assert.equal(f.millis(245000), "4 min 5 s");
  assert.equal(f.millis(null), "–");
});

test("msgIdProblem names what is wrong", () => {
  assert.equal(f.msgIdProblem("7F000001000022F9000000000000BC61"), "");
  assert.match(f.msgIdProblem("xyz"), /malformed: only hex digits/);
  assert.match(f.msgIdProblem("ABCDEF"), /has 6 hex digits/);
  assert.equal(f.msgIdProblem("7F000001000022F9000000000000BC6100000000"), "");
  assert.match(f.msgIdProblem("A".repeat(56)), /has 56 hex digits/);
  assert.match(f.msgIdProblem(" "), /required/);
});

test("topicProblem follows RocketMQ's topic rule", () => {
  assert.equal(f.topicProblem("Orders_1-%|x"), "");
  assert.match(f.topicProblem("bad topic"), /may contain only/);
  assert.match(f.topicProblem("x".repeat(128)), /128 characters/);
});

test("intProblem checks whole numbers and bounds", () => {
  assert.equal(f.intProblem("read queues", "8", 1, 1024), "");
  assert.match(f.intProblem("read queues", "8.5", 1, 1024), /whole number, got "8.5"/);
  assert.match(f.intProblem("read queues", "0", 1, 1024), /between 1 and 1024, got 0/);
});

test("changed keeps only the fields that differ (topic update sends only those)", () => {
  assert.deepEqual(
    f.changed({ readQueues: 4, writeQueues: 4, perm: "RW" }, { readQueues: 8, writeQueues: 4, perm: "RW" }),
    {
      readQueues: 8,
    },
  );
  assert.deepEqual(f.changed({ a: 1 }, { a: 1 }), {});
});

test("quorumSentence says what the group tolerates", () => {
  assert.equal(f.quorumSentence(2), "the group will have 2 voters; one more failure loses the quorum");
  assert.equal(f.quorumSentence(3), "the group will have 3 voters; it survives 1 failure");
  assert.equal(f.quorumSentence(5), "the group will have 5 voters; it survives 2 failures");
  assert.equal(f.quorumSentence(1), "the group will have 1 voter; any failure stops it");
});

test("hexDump shows offset, bytes and ASCII", () => {
  const out = f.hexDump(new TextEncoder().encode("hello, world!\n\x00ABC"));
  const lines = out.split("\n");
  assert.equal(lines.length, 2);
  assert.equal(lines[0], "00000000  68 65 6c 6c 6f 2c 20 77 6f 72 6c 64 21 0a 00 41  hello, world!..A");
  assert.ok(lines[1].startsWith("00000010  42 43 "));
  assert.ok(lines[1].endsWith("  BC"));
});

test("prettyJSON indents JSON and explains what is not", () => {
  const ok = f.prettyJSON('{"a":[1,2]}');
  assert.equal(ok.ok, true);
  assert.equal(ok.text, '{\n  "a": [\n    1,\n    2\n  ]\n}');
  const bad = f.prettyJSON("hello");
  assert.equal(bad.ok, false);
  assert.match(bad.error, /not JSON/);
});

test("base64Bytes and utf8Text round-trip a body", () => {
  assert.equal(f.utf8Text(f.base64Bytes("aGVsbG8gd29ybGQh")), "hello world!");
});
