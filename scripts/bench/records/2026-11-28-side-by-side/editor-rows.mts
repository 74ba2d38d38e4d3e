// Row 5 of `npm run bench` (the editor side) from the checkout named as the first argument, with
// its own scripts/bench modules, as one JSON line: for comparing two trees side by side (README.md).
import * as path from "node:path";
import { pathToFileURL } from "node:url";
const root = path.resolve(process.argv[2]!);
const load = (m: string) => import(pathToFileURL(path.join(root, "scripts/bench", m)).href);
const { benchDiagnostic, diagnosticBenchData } = await load("diagnostic.ts");
const { benchTasks } = await load("tasks.ts");
const { benchAnalysis } = await load("analysis.ts");
const { benchRecheck } = await load("workspace.ts");
const { benchViews } = await load("views.ts");
const e = { diagnosticItems: 20000, documents: 1000, taskDocuments: 10000, runs: 3, taskRuns: 1, edits: 9, viewBenchmarks: 60, caseDocuments: 10000 };
const t0 = Date.now();
const diagnostic = benchDiagnostic(diagnosticBenchData(e.diagnosticItems, e.documents), e.runs);
const tasks = await benchTasks(e.taskDocuments, e.taskRuns);
const analysis = benchAnalysis(5);
const recheck = await benchRecheck(e.diagnosticItems, e.documents, e.edits);
const views = await benchViews(10, e.viewBenchmarks, e.caseDocuments, e.runs + 2);
console.log(JSON.stringify({ root, seconds: (Date.now() - t0) / 1000, diagnostic: diagnostic.median_ms, tasks, analysis, recheck, views: { view: views.view_median_ms, cases: views.cases_median_ms } }));
