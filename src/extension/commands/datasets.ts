// Diagnostic datasets written from the editor with the built-in generators: Create Dataset (the
// quick fix on a config's missing dataset) and Generate Items (the CodeLens above an ability). Both
// are one workspace edit, so Undo takes them back; so is Draft Items, which asks a model for them.
import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { PAPER_ABILITIES } from "../../core/diagnostic/paperAbilities";
import { findGenerator, generateItems, itemKey, toJsonl } from "../../core/diagnostic/generators/index";
import { PAPER_ITEMS_PER_ABILITY } from "../../core/diagnostic/health";
import { jsonlLines } from "../../core/diagnostic/jsonl";
import { draftDatasetItems, draftExamples, draftItems, withoutLine } from "../../core/run/draftItems";
import type { CommandFactory } from "../ctx";

/**
 * Creates `file` with the paper's number of items of `ability`'s generator, saves it and opens it.
 * From the palette (no arguments) it asks for the ability and the file, and never writes over one.
 */
export const createDataset: CommandFactory = () => async (givenFile?: string, givenAbility?: string) => {
  const ability =
    givenAbility ?? (await vscode.window.showQuickPick([...PAPER_ABILITIES], { title: "Create Diagnostic Dataset: which ability?" }));
  if (ability === undefined) return;
  const found = findGenerator(ability);
  if ("error" in found) throw new Error(found.error);
  let file = givenFile;
  if (file === undefined) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const name = `${found.generator.slug}.diag.jsonl`;
    const picked = await vscode.window.showSaveDialog({
      title: `Create Diagnostic Dataset: ${PAPER_ITEMS_PER_ABILITY} items of ${ability}`,
      filters: { "Diagnostic datasets": ["jsonl"] },
      ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, name) } : {}),
    });
    if (!picked) return;
    if (existsSync(picked.fsPath))
      throw new Error(`${path.basename(picked.fsPath)} exists already: pick a new file name (its items stay as they are)`);
    file = picked.fsPath;
  }
  const text = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Generating ${PAPER_ITEMS_PER_ABILITY} items of ${ability}` },
    async () => toJsonl(generateItems(found.generator, { n: PAPER_ITEMS_PER_ABILITY, seed: 1 })),
  );
  const uri = vscode.Uri.file(file);
  const edit = new vscode.WorkspaceEdit();
  edit.createFile(uri, { ignoreIfExists: true });
  edit.insert(uri, new vscode.Position(0, 0), text);
  if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`could not create ${file}`);
  const document = await vscode.workspace.openTextDocument(uri);
  await document.save();
  await vscode.window.showTextDocument(document);
};

/**
 * Appends items of an ability's generator to its first dataset: new questions only (none the file
 * has), from a seed the file's ids have not used, so ids stay unique.
 */
export const generateMoreItems: CommandFactory = (ctx) => async (config: vscode.Uri, abilityIndex: number) => {
  const outline = (await ctx.workspace.outlines()).find((o) => o.file === config.fsPath);
  const entry = outline?.abilities.find((a) => a.index === abilityIndex);
  const file = entry?.files[0];
  if (!entry || !file) throw new Error("this ability names no dataset to add items to");
  const found = findGenerator(entry.label);
  if ("error" in found) throw new Error(found.error);
  const answer = await vscode.window.showInputBox({
    title: `Generate ${entry.label} items into ${path.basename(file)}`,
    prompt: "How many items? (the paper used about 2,000 per ability)",
    value: String(Math.max(100, PAPER_ITEMS_PER_ABILITY - (entry.count ?? 0))),
    validateInput: (v) =>
      /^\d+$/.test(v.trim()) && Number(v) > 0 && Number(v) <= 100_000 ? undefined : "a whole number from 1 to 100,000",
  });
  if (answer === undefined) return;
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file)).then(
    (d) => d,
    () => undefined,
  );
  const existing = document?.getText() ?? "";
  const lines = jsonlLines(existing).filter((l) => l.trim() !== "");
  const taken = new Set<string>();
  let seed = 1;
  for (const line of lines) {
    try {
      const item = JSON.parse(line) as { context?: unknown; question?: unknown; id?: unknown };
      taken.add(itemKey({ context: String(item.context ?? ""), question: String(item.question ?? "") }));
      const used = new RegExp(`^${found.generator.slug}-(\\d+)-`).exec(String(item.id ?? ""));
      if (used) seed = Math.max(seed, Number(used[1]) + 1);
    } catch {
      // a broken line is the dataset check's to report
    }
  }
  const items = generateItems(found.generator, { n: Number(answer), seed, exclude: taken });
  const uri = vscode.Uri.file(file);
  const edit = new vscode.WorkspaceEdit();
  if (!document) edit.createFile(uri, { ignoreIfExists: true });
  const end = document ? document.lineAt(document.lineCount - 1).range.end : new vscode.Position(0, 0);
  const separator = existing === "" || existing.endsWith("\n") ? "" : "\n";
  edit.insert(uri, end, separator + toJsonl(items));
  if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`could not add items to ${file}`);
  void vscode.window.showInformationMessage(
    `Added ${items.length} ${entry.label} items to ${path.basename(file)} (seed ${seed}); save the file to keep them.`,
  );
};

/**
 * Drafts items of an ability with a local instruction model (core: diagnostic/draft) into the
 * open dataset, with progress: the drafts that pass the checks are appended as one undoable edit,
 * unreviewed; each rejected draft is listed with its reason in the output channel. It runs the
 * runner, so it needs a trusted workspace.
 */
export const draftItemsWithModel: CommandFactory = (ctx) => async (given?: vscode.Uri) => {
  const target = given instanceof vscode.Uri ? given : vscode.window.activeTextEditor?.document.uri;
  if (!target || !target.fsPath.endsWith(".jsonl"))
    throw new Error("open the diagnostic dataset (*.diag.jsonl) the drafts should join, then run Draft Items again");
  if (!(await ctx.trusted("Drafting items with a model", "it runs the runner on the model you pick"))) return;
  const picked = await vscode.window.showOpenDialog({
    title: "Draft Items: the instruction model (a Hugging Face folder with tokenizer.json)",
    canSelectFiles: false,
    canSelectFolders: true,
  });
  const modelDir = picked?.[0]?.fsPath;
  if (!modelDir) return;
  const ability = await vscode.window.showQuickPick([...PAPER_ABILITIES], { title: "Draft Items: which ability?" });
  if (!ability) return;
  const answer = await vscode.window.showInputBox({
    title: `Draft ${ability} items with ${path.basename(modelDir)}`,
    prompt: "How many drafts? (each is checked; those that fail are not added)",
    value: "20",
    validateInput: (v) => (/^\d+$/.test(v.trim()) && Number(v) > 0 && Number(v) <= 10_000 ? undefined : "a whole number from 1 to 10,000"),
  });
  if (answer === undefined) return;
  const runnerPath = await ctx.runner.local();
  if (!runnerPath) return;
  const document = await vscode.workspace.openTextDocument(target);
  const file = target.fsPath;
  const n = Number(answer);
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), "bprof-draft-"));
  try {
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Drafting ${n} ${ability} items`, cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        const found = findGenerator(ability);
        let reported = 0;
        return draftItems({
          modelDir,
          ability,
          n,
          seed: 1,
          shots: 3,
          examples: await draftExamples(file, ability),
          existing: (await draftDatasetItems(file)).map(withoutLine),
          idPrefix: `${"error" in found ? "draft" : found.generator.slug}-draft-${Date.now().toString(36)}`,
          maxTokens: 256,
          runnerPath,
          workDir,
          signal: abort.signal,
          onEvent: (event) => {
            if (event.type !== "progress" || event.total === 0) return;
            progress.report({ message: `${event.done} of ${event.total}`, increment: ((event.done - reported) * 100) / event.total });
            reported = event.done;
          },
        });
      },
    );
    for (const r of outcome.rejected)
      ctx.output.appendLine(`draft ${r.index + 1} not added: ${r.reason} (it wrote: ${JSON.stringify(r.output.slice(0, 200))})`);
    if (outcome.drafts.length === 0) throw new Error(`none of the ${n} drafts passed the checks (the reasons are in the output channel)`);
    const edit = new vscode.WorkspaceEdit();
    const end = document.lineAt(document.lineCount - 1).range.end;
    const existing = document.getText();
    edit.insert(target, end, (existing === "" || existing.endsWith("\n") ? "" : "\n") + toJsonl(outcome.drafts));
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`could not add the drafts to ${file}`);
    void vscode.window.showInformationMessage(
      `Added ${outcome.drafts.length} of ${n} drafts to ${path.basename(file)}, unreviewed (${outcome.rejected.length} did not pass: see the output); save the file to keep them, and review them (Review Dataset).`,
    );
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
};
