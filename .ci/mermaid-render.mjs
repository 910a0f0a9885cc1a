// mermaid-render.mjs PUPPETEER_CONFIG OUTDIR MMD...
//
// Renders each MMD file with the real Mermaid library (the one mermaid-cli
// installs, loaded once per page) in Debian's chromium, writing OUTDIR/NAME.svg
// for NAME.mmd. mermaid-cli opens a new page and imports Mermaid for every
// diagram (about two seconds each, eleven minutes for the corpus); here
// Mermaid is loaded once into one page per CPU and each page renders its
// share of the diagrams in turn. The definition, Mermaid's default
// configuration (maxTextSize included) and mermaid.render are the same as
// mermaid-cli's, so what fails to parse or renders an empty note here does
// so in mmdc too (the check's self-test shows the second).
//
// Every diagram is rendered; each one Mermaid refuses is printed with its
// error, and the exit status is 1 if any was refused. MMDC_NODE_MODULES names
// the node_modules directory holding puppeteer-core and mermaid.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const modules = path.resolve(process.env.MMDC_NODE_MODULES || "node_modules");
const require = createRequire(modules + "/");
const puppeteer = require("puppeteer-core");
const mermaidJS = path.join(modules, "mermaid/dist/mermaid.min.js");
const mermaidVersion = JSON.parse(fs.readFileSync(path.join(modules, "mermaid/package.json"), "utf8")).version;
const [cfgPath, outDir, ...files] = process.argv.slice(2);
if (!cfgPath || !outDir) {
  console.error("usage: mermaid-render.mjs PUPPETEER_CONFIG OUTDIR MMD...");
  process.exit(2);
}
const cfg = JSON.parse(fs.readFileSync(cfgPath, "utf8"));
const browser = await puppeteer.launch({ headless: true, ...cfg });
let failed = 0;
let next = 0;
async function worker() {
  const page = await browser.newPage();
  await page.setContent("<!doctype html><html><body><div id=c></div></body></html>");
  await page.addScriptTag({ path: mermaidJS });
  await page.evaluate(() => mermaid.initialize({ startOnLoad: false }));
  for (let i = next++; i < files.length; i = next++) {
    const f = files[i];
    const def = fs.readFileSync(f, "utf8");
    const r = await page.evaluate(async (def, id) => {
      try {
        const { svg } = await mermaid.render(id, def, document.getElementById("c"));
        return { svg };
      } catch (e) {
        return { err: String((e && e.message) || e) };
      } finally {
        document.getElementById("c").innerHTML = "";
      }
    }, def, "d" + i);
    if (r.err !== undefined) {
      console.log(`mermaid-check: ${path.basename(f, ".mmd")}: Mermaid could not render it:\n  ${r.err.replace(/\n/g, "\n  ")}`);
      failed = 1;
      continue;
    }
    fs.writeFileSync(path.join(outDir, path.basename(f, ".mmd") + ".svg"), r.svg);
  }
  await page.close();
}
try {
  const n = Math.max(1, Math.min(os.availableParallelism(), files.length));
  await Promise.all(Array.from({ length: n }, worker));
} finally {
  await browser.close();
}
console.log(`mermaid-check: ${files.length} diagrams rendered with Mermaid ${mermaidVersion}`);
process.exit(failed);

