import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.mjs";

const charts = await load("src/series.ts");
const chart = charts;

test("merge appends only newer points and drops those out of the window", () => {
  const old = [
    {
      name: "consumerLag",
      labels: { group: "g" },
      points: [
        [1000, 1],
        [2000, 2],
      ],
    },
  ];
  const fresh = [
    {
      name: "consumerLag",
      labels: { group: "g" },
      points: [
        [2000, 2],
        [3000, 3],
      ],
    },
    { name: "consumerLag", labels: { group: "h" }, points: [[3000, 9]] },
  ];
  const m = charts.merge(old, fresh, 1500, 3000);
  assert.deepEqual(m.find((s) => s.labels.group === "g").points, [
    [2000, 2],
    [3000, 3],
  ]);
  assert.deepEqual(m.find((s) => s.labels.group === "h").points, [[3000, 9]]);
  assert.deepEqual(
    old[0].points,
    [
      [1000, 1],
      [2000, 2],
    ],
    "merge must not change its input",
  );
});

test("align puts series with their own timestamps on one x axis, gaps as null", () => {
  const cols = chart.align([
    {
      name: "a",
      labels: {},
      points: [
        [1000, 1],
        [3000, 3],
      ],
    },
    { name: "b", labels: {}, points: [[2000, 20]] },
  ]);
  assert.deepEqual(cols, [
    [1, 2, 3],
    [1, null, 3],
    [null, 20, null],
  ]);
});
