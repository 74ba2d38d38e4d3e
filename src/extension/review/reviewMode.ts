// The review mode of a diagnostic dataset: the panel beside the data file shows one item as the
// model reads it and takes one key per decision; each decision goes to the dataset's review file
// (core: diagnostic/review), never into the dataset. The data file's gutter marks each line's state
// and the status bar the progress. Nothing runs: it works in Restricted Mode.
import { randomBytes } from "node:crypto";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { checkDiagnosticDataset } from "../../core/diagnostic/dataset";
import { nextOpen, reviewCard, reviewProgress, reviewQueue } from "../../core/language/reviewCard";
import {
  emptyReview,
  itemHash,
  readWholeReview,
  reviewFileOf,
  withDecision,
  withoutDecision,
  writeReviewFile,
  type ReviewDecisionKind,
  type ReviewFile,
} from "../../core/diagnostic/review/reviewFile";
import { itemReviews, type ItemReview, type ReviewState } from "../../core/diagnostic/review/states";
import { REVIEW_VIEW_TYPE, type FromReviewView, type ReviewAction, type ToReviewView } from "../../../webview/reviewProtocol";

/** The states marked in the gutter, with their icon and overview-ruler colour. */
const MARKS: Partial<Record<ReviewState, { icon: string; ruler: string }>> = {
  accepted: { icon: "review-accepted.svg", ruler: "testing.iconPassed" },
  rejected: { icon: "review-rejected.svg", ruler: "errorForeground" },
  corrected: { icon: "review-corrected.svg", ruler: "charts.blue" },
  flagged: { icon: "review-flagged.svg", ruler: "editorWarning.foreground" },
  changed: { icon: "review-changed.svg", ruler: "editorWarning.foreground" },
};

const REVIEWING_CONTEXT = "benchmarkProfiler.reviewing";

/** The one dataset under review in this window (starting another closes it). */
export class ReviewMode implements vscode.Disposable {
  private session: ReviewSession | undefined;
  private readonly status = vscode.window.createStatusBarItem("benchmarkProfiler.review", vscode.StatusBarAlignment.Left, 10);
  private readonly marks: Map<ReviewState, vscode.TextEditorDecorationType>;
  private readonly current = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("editor.rangeHighlightBackground"),
  });

  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly services: { extension: vscode.ExtensionContext }) {
    this.status.name = "Benchmark Profiler review";
    this.status.command = "benchmarkProfiler.reviewDataset";
    this.marks = new Map(
      Object.entries(MARKS).map(([state, mark]) => [
        state as ReviewState,
        vscode.window.createTextEditorDecorationType({
          gutterIconPath: vscode.Uri.joinPath(services.extension.extensionUri, "media", mark.icon),
          gutterIconSize: "70%",
          overviewRulerColor: new vscode.ThemeColor(mark.ruler),
          overviewRulerLane: vscode.OverviewRulerLane.Left,
        }),
      ]),
    );
    this.disposables.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.session && this.decorate()),
      vscode.workspace.onDidChangeTextDocument((e) => this.session?.documentChanged(e.document)),
    );
  }

  /** Reviews `dataset` (the panel, the marks, the status bar); an open review of it is revealed. */
  async start(dataset: vscode.Uri): Promise<void> {
    if (this.session?.dataset === dataset.fsPath) {
      this.session.panel.reveal(vscode.ViewColumn.Beside);
      return;
    }
    this.session?.dispose();
    const document = await vscode.workspace.openTextDocument(dataset);
    await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.One, preview: false });
    const review = await readReview(reviewFileOf(dataset.fsPath));
    const panel = vscode.window.createWebviewPanel(
      REVIEW_VIEW_TYPE,
      `Review ${path.basename(dataset.fsPath)}`,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false },
      {
        enableScripts: true,
        localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, "dist"), vscode.Uri.joinPath(this.extensionUri, "media")],
      },
    );
    const session = new ReviewSession(document, review, panel, () => this.changed());
    this.session = session;
    panel.onDidDispose(() => {
      if (this.session !== session) return;
      this.session = undefined;
      this.changed();
    });
    panel.webview.html = pageHtml(this.extensionUri, panel.webview);
    this.changed();
  }

  /** The palette's decisions and moves, for the item the panel shows. */
  act(action: ReviewAction): Promise<void> {
    if (!this.session) throw new Error("no dataset is under review: run Benchmark Profiler: Review Dataset on a *.diag.jsonl");
    return this.session.act(action);
  }

  stop(): void {
    this.session?.dispose();
  }

  private get extensionUri(): vscode.Uri {
    return this.services.extension.extensionUri;
  }

  private changed(): void {
    void vscode.commands.executeCommand("setContext", REVIEWING_CONTEXT, this.session !== undefined);
    this.decorate();
    const s = this.session;
    if (!s) {
      this.status.hide();
      return;
    }
    const p = s.progress();
    this.status.text = `$(checklist) ${p.done}/${p.total} reviewed`;
    this.status.tooltip = `${path.basename(s.dataset)}: ${p.counts.accepted} accepted, ${p.counts.rejected} rejected, ${p.counts.corrected} corrected, ${p.counts.flagged} flagged, ${p.counts.changed} changed since their review`;
    this.status.show();
  }

  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const mine = this.session?.dataset === editor.document.uri.fsPath ? this.session : undefined;
      const lines = mine?.linesByState() ?? new Map<ReviewState, number[]>();
      for (const [state, type] of this.marks)
        editor.setDecorations(
          type,
          (lines.get(state) ?? []).map((line) => new vscode.Range(line - 1, 0, line - 1, 0)),
        );
      const at = mine?.currentLine();
      editor.setDecorations(this.current, at !== undefined ? [new vscode.Range(at - 1, 0, at - 1, 0)] : []);
    }
  }

  dispose(): void {
    this.session?.dispose();
    for (const d of this.disposables) d.dispose();
    this.status.dispose();
    this.current.dispose();
    for (const type of this.marks.values()) type.dispose();
  }
}

class ReviewSession implements vscode.Disposable {
  readonly dataset: string;
  readonly reviewFile: string;
  private queue: ItemReview[] = [];
  private position = 0;
  private pending: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private document: vscode.TextDocument,
    private review: ReviewFile,
    readonly panel: vscode.WebviewPanel,
    private readonly onChange: () => void,
  ) {
    this.dataset = document.uri.fsPath;
    this.reviewFile = reviewFileOf(this.dataset);
    this.recompute();
    this.position = nextOpen(this.queue, -1, 1) ?? 0;
    this.disposables.push(panel.webview.onDidReceiveMessage((m: FromReviewView) => void this.received(m)));
  }

  progress() {
    return reviewProgress(this.queue, this.review.sample ? { n: this.review.sample.ids.length, seed: this.review.sample.seed } : undefined);
  }

  linesByState(): Map<ReviewState, number[]> {
    const lines = new Map<ReviewState, number[]>();
    for (const r of this.queue) lines.set(r.state, [...(lines.get(r.state) ?? []), r.item.line]);
    return lines;
  }

  currentLine(): number | undefined {
    return this.queue[this.position]?.item.line;
  }

  /** The dataset was edited: its items are read again (an edited item is open again), the current one kept by id. */
  documentChanged(document: vscode.TextDocument): void {
    if (document.uri.fsPath !== this.dataset) return;
    this.document = document;
    clearTimeout(this.pending);
    this.pending = setTimeout(() => {
      const id = this.queue[this.position]?.item.id;
      this.recompute();
      const kept = this.queue.findIndex((r) => r.item.id === id);
      this.position = kept >= 0 ? kept : Math.min(this.position, Math.max(0, this.queue.length - 1));
      this.show();
    }, 300);
  }

  async act(action: ReviewAction): Promise<void> {
    const r = this.queue[this.position];
    if (!r) return;
    switch (action) {
      case "accept":
      case "reject":
        return this.decide(r, action);
      case "flag": {
        const note = await vscode.window.showInputBox({
          title: `Flag ${r.item.id}`,
          prompt: "A note for whoever reviews it next (what is doubtful)",
          value: r.decision?.note ?? "",
        });
        if (note === undefined) return;
        return this.decide(r, "flag", { note });
      }
      case "undo":
        await this.write(withoutDecision(await this.fresh(), r.item.id));
        return this.show();
      case "next":
      case "previous":
        this.position = nextOpen(this.queue, this.position, action === "next" ? 1 : -1) ?? this.position;
        return this.show();
      case "nextItem":
      case "previousItem":
        this.position = (this.position + (action === "nextItem" ? 1 : this.queue.length - 1)) % this.queue.length;
        return this.show();
    }
  }

  private async received(message: FromReviewView): Promise<void> {
    try {
      if (message.type === "ready") return this.show();
      if (message.type === "action") return await this.act(message.action);
      const r = this.queue[this.position];
      if (!r) return;
      // the marked answer chosen as the right one is an acceptance
      if (message.answer === r.item.answer) return await this.decide(r, "accept");
      return await this.decide(r, "correct", { answer: message.answer });
    } catch (e) {
      void vscode.window.showErrorMessage(`Benchmark Profiler: ${(e as Error).message}`);
    }
  }

  private async decide(r: ItemReview, decision: ReviewDecisionKind, extra: { answer?: number; note?: string } = {}): Promise<void> {
    const reviewer = vscode.workspace.getConfiguration("benchmarkProfiler").get<string>("reviewer") || os.userInfo().username;
    const note = extra.note ?? (decision === "flag" ? undefined : r.decision?.note);
    await this.write(
      withDecision(await this.fresh(), {
        id: r.item.id,
        hash: itemHash(r.item),
        decision,
        ...(extra.answer !== undefined ? { answer: extra.answer } : {}),
        ...(note ? { note } : {}),
        reviewer,
        time: new Date().toISOString(),
      }),
    );
    // on to the next open item; the last one stays in view
    this.position = nextOpen(this.queue, this.position, 1) ?? this.position;
    this.show();
  }

  /** The review file as it is on disk now (another reviewer's tool, `bprof review sample`, may have written it). */
  private async fresh(): Promise<ReviewFile> {
    return readReview(this.reviewFile);
  }

  private async write(review: ReviewFile): Promise<void> {
    await writeReviewFile(this.reviewFile, review);
    this.review = review;
    this.recompute();
  }

  private recompute(): void {
    const { items } = checkDiagnosticDataset(this.dataset, this.document.getText());
    this.queue = reviewQueue(itemReviews(items, this.review));
  }

  private show(): void {
    this.onChange();
    const line = this.currentLine();
    for (const editor of vscode.window.visibleTextEditors)
      if (editor.document.uri.fsPath === this.dataset && line !== undefined)
        editor.revealRange(new vscode.Range(line - 1, 0, line - 1, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    const message: ToReviewView =
      this.queue.length === 0
        ? { type: "empty", message: `${path.basename(this.dataset)} has no item to review (or its sample names none of its items).` }
        : {
            type: "card",
            card: reviewCard(this.queue, this.position, this.progress()),
            dataset: path.basename(this.dataset),
            reviewFile: path.basename(this.reviewFile),
            allDone: nextOpen(this.queue, this.position, 1) === undefined && this.progress().done === this.queue.length,
          };
    void this.panel.webview.postMessage(message);
  }

  dispose(): void {
    clearTimeout(this.pending);
    for (const d of this.disposables) d.dispose();
    this.panel.dispose();
  }
}

/** The review file as it is on disk (none yet: an empty review); one with lines that do not read is refused, and says which. */
async function readReview(file: string): Promise<ReviewFile> {
  return (await readWholeReview(file)) ?? emptyReview();
}

function pageHtml(extensionUri: vscode.Uri, webview: vscode.Webview): string {
  const nonce = randomBytes(16).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", "webview", "review.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "media", "webview.css"));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="${style}"><title>Review</title></head>
<body><div id="root" tabindex="0">Loading…</div>
<script nonce="${nonce}" src="${script}"></script></body></html>`;
}
