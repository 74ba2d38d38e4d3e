// Browser side of the review mode: one diagnostic item as the model reads it, its choices with the
// marked answer, and one key per decision. The extension decides and writes (reviewProtocol.ts);
// this page only draws what it is sent and says which key was pressed. Text goes in through
// textContent, so an item's words cannot inject markup.
import type { ReviewCard } from "../src/core/language/reviewCard";
import { element } from "./dom";
import type { FromReviewView, ReviewAction, ToReviewView } from "./reviewProtocol";

declare function acquireVsCodeApi(): { postMessage(message: FromReviewView): void };
const host = acquireVsCodeApi();
const root = document.getElementById("root")!;

const KEYS: Record<string, ReviewAction> = {
  a: "accept",
  r: "reject",
  f: "flag",
  u: "undo",
  n: "next",
  j: "next",
  ArrowRight: "next",
  p: "previous",
  k: "previous",
  ArrowLeft: "previous",
  "]": "nextItem",
  "[": "previousItem",
};

const STATE_WORDS: Record<ReviewCard["state"], string> = {
  open: "not reviewed",
  accepted: "accepted",
  rejected: "rejected",
  corrected: "corrected",
  flagged: "flagged",
  changed: "changed since its review: open again",
};

let choiceCount = 0;

window.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const digit = /^[1-9]$/.test(event.key) ? Number(event.key) - 1 : undefined;
  if (digit !== undefined && digit < choiceCount) {
    host.postMessage({ type: "correct", answer: digit });
    event.preventDefault();
    return;
  }
  const action = KEYS[event.key];
  if (action) {
    host.postMessage({ type: "action", action });
    event.preventDefault();
  }
});

window.addEventListener("message", (event: MessageEvent<ToReviewView>) => {
  const message = event.data;
  root.replaceChildren(...(message.type === "card" ? cardElements(message) : [element("p", message.message, "muted")]));
});

function cardElements(message: Extract<ToReviewView, { type: "card" }>): HTMLElement[] {
  const { card } = message;
  choiceCount = card.choices.length;
  const head = element("header", undefined, "review-head");
  head.append(
    element("span", `${card.position + 1} of ${card.total}`, "review-position"),
    element("span", ` · ${card.ability} · ${card.id} · line ${card.line}`, "muted"),
  );
  const state = element("p", undefined, `review-state ${card.state}`);
  state.append(element("strong", STATE_WORDS[card.state]));
  if (card.reviewer || card.time)
    state.append(
      element("span", ` by ${card.reviewer ?? "?"}${card.time ? `, ${card.time.slice(0, 16).replace("T", " ")}` : ""}`, "muted"),
    );
  if (card.note) state.append(element("span", ` · note: ${card.note}`));

  const item = element("section", undefined, "review-item");
  if (card.context.trim() !== "") item.append(element("h4", "Context"), element("p", card.context, "review-context"));
  item.append(element("h4", "Question"), element("p", card.question, "review-question"));
  const choices = element("ol", undefined, "review-choices");
  for (const [i, c] of card.choices.entries()) {
    const li = element("li", undefined, [c.marked ? "marked" : "", c.corrected ? "corrected" : ""].filter(Boolean).join(" "));
    const button = element("button", `${i + 1}  ${c.letter}. ${c.text}`, "choice");
    button.title = c.marked ? "the dataset's answer" : `press ${i + 1}: this is the right answer`;
    button.addEventListener("click", () => host.postMessage({ type: "correct", answer: i }));
    li.append(button);
    if (c.marked) li.append(element("span", " marked answer", "tag"));
    if (c.corrected) li.append(element("span", " corrected to this", "tag"));
    choices.append(li);
  }
  item.append(element("h4", "Choices"), choices);
  const prompt = element("details");
  prompt.open = true;
  prompt.append(element("summary", "The importance loss reads"), element("pre", card.prompt));

  const keys = element("div", undefined, "review-keys");
  for (const [key, label, action] of [
    ["A", "accept", "accept"],
    ["R", "reject", "reject"],
    ["F", "flag with a note", "flag"],
    ["U", "undo", "undo"],
    ["P", "previous open", "previous"],
    ["N", "next open", "next"],
  ] as const) {
    const b = element("button", undefined, "key");
    b.append(element("kbd", key), element("span", ` ${label}`));
    b.addEventListener("click", () => host.postMessage({ type: "action", action }));
    keys.append(b);
  }
  keys.append(element("span", " 1-9 the right answer · [ ] any item", "muted"));

  const p = card.progress;
  const accuracy = p.accuracy
    ? `labels ${p.accuracy.right} of ${p.accuracy.judged} right (${((100 * p.accuracy.right) / p.accuracy.judged).toFixed(1)}%, 95% CI ${(100 * p.accuracy.low!).toFixed(1)}-${(100 * p.accuracy.high!).toFixed(1)}%)`
    : "no label judged yet";
  const progress = element(
    "p",
    `${p.done} of ${p.total} reviewed${p.sample ? ` (random sample, seed ${p.sample.seed})` : ""} · ${p.counts.accepted} accepted, ${p.counts.rejected} rejected, ${p.counts.corrected} corrected, ${p.counts.flagged} flagged · ${accuracy}`,
    "review-progress",
  );
  const done = message.allDone ? [element("p", "Every item is reviewed.", "review-done")] : [];
  const file = element("p", `Decisions go to ${message.reviewFile}; ${message.dataset} is not changed.`, "hint");
  return [head, state, item, prompt, keys, progress, ...done, file];
}

host.postMessage({ type: "ready" });
