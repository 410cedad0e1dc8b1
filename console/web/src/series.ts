// Time-series helpers of the charts page, free of the DOM so test/unit runs them under node.
import type { Series } from "./api";

/** align merges series with their own timestamps into uPlot's columns (x, y1, y2…), gaps as null. */
export function align(series: Series[]): (number | null)[][] {
  const xs = Array.from(new Set(series.flatMap((s) => s.points.map((p) => p[0])))).sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const cols: (number | null)[][] = [xs.map((x) => x / 1000)];
  for (const s of series) {
    const col: (number | null)[] = new Array(xs.length).fill(null);
    for (const [t, v] of s.points) col[index.get(t)!] = v;
    cols.push(col);
  }
  return cols;
}

export const seriesLabel = (s: Series) =>
  Object.keys(s.labels)
    .sort()
    .map((k) => s.labels[k])
    .join(" / ") || s.name;

const keyOf = (s: Series) =>
  s.name +
  "{" +
  Object.keys(s.labels)
    .sort()
    .map((k) => `${k}=${s.labels[k]}`)
    .join(",") +
  "}";

/** merge appends newly sampled points to the series already held and drops those outside the window. */
export function merge(old: Series[], fresh: Series[], windowMs: number, now: number): Series[] {
  const byKey = new Map(old.map((s) => [keyOf(s), { ...s, points: [...s.points] }]));
  for (const s of fresh) {
    const k = keyOf(s);
    const have = byKey.get(k);
    if (!have) byKey.set(k, { ...s, points: [...s.points] });
    else {
      const last = have.points.length ? have.points[have.points.length - 1][0] : -Infinity;
      for (const p of s.points) if (p[0] > last) have.points.push(p);
    }
  }
  const from = now - windowMs;
  return Array.from(byKey.values()).map((s) => ({ ...s, points: s.points.filter((p) => p[0] >= from) }));
}
