// Browser side of the results view: renders the run's per-benchmark scores the host posts.
// Only textContent is used for data, so names from user files cannot inject markup.

interface BenchmarkRow { name: string; items: number; acc: number; acc_norm: number; chance: number }
interface ResultsMessage { type: "results"; runId: string; models: { name: string; benchmarks: BenchmarkRow[] }[] }

function cell(tag: "td" | "th", text: string, className?: string): HTMLElement {
  const element = document.createElement(tag);
  element.textContent = text;
  if (className) element.className = className;
  return element;
}

function row(cells: HTMLElement[]): HTMLTableRowElement {
  const tr = document.createElement("tr");
  tr.append(...cells);
  return tr;
}

function render(message: ResultsMessage): void {
  const root = document.getElementById("root")!;
  root.replaceChildren();
  const title = document.createElement("h2");
  title.textContent = `Run ${message.runId}`;
  root.append(title);
  for (const model of message.models) {
    const heading = document.createElement("h3");
    heading.textContent = model.name;
    const table = document.createElement("table");
    table.append(row(["benchmark", "items", "acc", "acc_norm", "chance"].map((h) => cell("th", h))));
    for (const b of model.benchmarks) {
      const aboveChance = b.acc > b.chance ? "above-chance" : "at-chance";
      table.append(row([cell("td", b.name), cell("td", String(b.items), "num"), cell("td", b.acc.toFixed(4), `num ${aboveChance}`), cell("td", b.acc_norm.toFixed(4), "num"), cell("td", b.chance.toFixed(4), "num")]));
    }
    root.append(heading, table);
  }
}

window.addEventListener("message", (event: MessageEvent<ResultsMessage>) => {
  if (event.data?.type === "results") render(event.data);
});
