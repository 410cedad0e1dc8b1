// Pure formatting helpers: no DOM, no fetch, so test/unit runs them under node.

/** bytes renders a byte count the way operators read disk use: 512 B, 1.5 KiB, 20.0 GiB. */
export function bytes(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return "–";
  if (n < 0) return "-" + bytes(-n);
  if (n < 1024) return `${Math.round(n)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** num renders an integer with thin grouping, or – when absent. */
export function num(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return "–";
  return Math.round(n).toLocaleString("en-US");
}

/** rate renders a per-second rate with one decimal below 100. */
export function rate(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return "–";
  return n < 100 ? `${n.toFixed(1)}/s` : `${Math.round(n).toLocaleString("en-US")}/s`;
}

/** millis renders a duration given in milliseconds: 0 ms, 850 ms, 2.3 s, 4 min 5 s. */
export function millis(ms: number | undefined | null): string {
  if (ms === undefined || ms === null || !Number.isFinite(ms) || ms < 0) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

/** time renders a Unix-millisecond timestamp as an ISO-like local time, seconds precision. */
export function time(ms: number | string | undefined | null): string {
  if (ms === undefined || ms === null || ms === "") return "–";
  const d = typeof ms === "number" ? new Date(ms) : new Date(ms);
  if (Number.isNaN(d.getTime())) return String(ms);
  const p = (x: number) => String(x).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** hexDump renders bytes as offset, 16 hex bytes and their printable ASCII, one line each. */
export function hexDump(b: Uint8Array): string {
  const lines: string[] = [];
  for (let off = 0; off < b.length; off += 16) {
    const row = b.subarray(off, off + 16);
    const hex = Array.from(row, (x) => x.toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(row, (x) => (x >= 0x20 && x < 0x7f ? String.fromCharCode(x) : ".")).join("");
    lines.push(`${off.toString(16).padStart(8, "0")}  ${hex.padEnd(47, " ")}  ${ascii}`);
  }
  return lines.join("\n");
}

/** base64Bytes decodes standard base64 (what encoding/json makes of a []byte). */
export function base64Bytes(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** utf8Text decodes bytes as UTF-8, replacing what is not. */
export function utf8Text(b: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: false }).decode(b);
}

/** prettyJSON indents text that parses as JSON; otherwise it says why it does not. */
export function prettyJSON(text: string): { ok: true; text: string } | { ok: false; error: string } {
  try {
    return { ok: true, text: JSON.stringify(JSON.parse(text), null, 2) };
  } catch (e) {
    return { ok: false, error: `the body is not JSON: ${(e as Error).message}` };
  }
}

/**
 * msgIdProblem says what is wrong with a message id typed by a user, or returns "" when it has
 * the shape of one: an offsetMsgId (32 hex digits: IPv4, port and CommitLog offset; longer for an
 * IPv6 store host) or a client's unique id (32 hex digits). The server has the last word.
 */
export function msgIdProblem(id: string): string {
  const s = id.trim();
  if (s === "") return "a msgId is required";
  if (!/^[0-9A-Fa-f]+$/.test(s)) return `msgId "${s}" is malformed: only hex digits 0-9 and A-F are allowed`;
  if (s.length !== 32 && s.length !== 40)
    return `msgId "${s}" is malformed: it has ${s.length} hex digits, a msgId has 32 (40 for an IPv6 store host)`;
  return "";
}

/** topicProblem checks a topic name with RocketMQ's rule: 1–127 of [A-Za-z0-9_-%|]. */
export function topicProblem(name: string): string {
  const s = name.trim();
  if (s === "") return "a topic name is required";
  if (s.length > 127) return `topic name is ${s.length} characters long; at most 127 are allowed`;
  if (!/^[%|a-zA-Z0-9_-]+$/.test(s)) return `topic name "${s}" may contain only letters, digits, %, |, _ and -`;
  return "";
}

/** intProblem checks a form field holding a whole number between lo and hi. */
export function intProblem(field: string, v: string, lo: number, hi: number): string {
  if (!/^-?\d+$/.test(v.trim())) return `${field} must be a whole number, got "${v}"`;
  const n = Number(v);
  if (n < lo || n > hi) return `${field} must be between ${lo} and ${hi}, got ${n}`;
  return "";
}

/** changed returns the keys of next whose values differ from prev: an update sends only those. */
export function changed<T extends Record<string, unknown>>(prev: T, next: T): Partial<T> {
  const out: Partial<T> = {};
  for (const k of Object.keys(next) as (keyof T)[]) {
    if (next[k] !== prev[k]) out[k] = next[k];
  }
  return out;
}

/** quorumSentence says what a group of voters tolerates, for the confirmation of a membership change. */
export function quorumSentence(voters: number): string {
  if (voters <= 0) return "the group will have no voters and cannot elect a leader";
  const tolerate = Math.floor((voters - 1) / 2);
  const v = `${voters} voter${voters === 1 ? "" : "s"}`;
  if (tolerate === 0)
    return voters === 1
      ? `the group will have ${v}; any failure stops it`
      : `the group will have ${v}; one more failure loses the quorum`;
  return `the group will have ${v}; it survives ${tolerate} failure${tolerate === 1 ? "" : "s"}`;
}
