// Compiles one TypeScript module of src/ to a temporary ES module, so node's test runner can
// import the page logic that touches no DOM (format.ts, the chart helpers). Modules that
// import uPlot need a DOM at import time, so tests import only helpers that do not.
import * as esbuild from "esbuild";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const web = fileURLToPath(new URL("../..", import.meta.url));

export async function load(entry) {
  const r = await esbuild.build({
    absWorkingDir: web,
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    jsx: "automatic",
    jsxImportSource: "preact",
    // The chart module imports uPlot and its CSS; the helpers under test use neither.
    external: ["uplot", "preact", "preact/*"],
    loader: { ".css": "empty" },
    logLevel: "error",
  });
  // Inside node_modules, so the external imports resolve to the installed packages.
  mkdirSync(join(web, "node_modules", ".cache"), { recursive: true });
  const dir = mkdtempSync(join(web, "node_modules", ".cache", "console-unit-"));
  const file = join(dir, "mod.mjs");
  writeFileSync(file, r.outputFiles[0].contents);
  return import(pathToFileURL(file).href);
}
