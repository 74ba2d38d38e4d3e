// Small DOM helpers for the webviews: every text goes in through textContent.

export function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

export function row(cells: HTMLElement[]): HTMLTableRowElement {
  const tr = document.createElement("tr");
  tr.append(...cells);
  return tr;
}

/** A table with a header row; a first column of row labels is a header cell (th scope=row). */
export function table(header: string[], rows: string[][], className?: string): HTMLTableElement {
  const t = element("table", undefined, className);
  const head = element("thead");
  head.append(
    row(
      header.map((h) => {
        const th = element("th", h);
        th.scope = "col";
        return th;
      }),
    ),
  );
  const body = element("tbody");
  for (const cells of rows) {
    body.append(
      row(
        cells.map((text, i) => {
          if (i === 0) {
            const th = element("th", text);
            th.scope = "row";
            return th;
          }
          return element("td", text, /^[-−\d.n]/.test(text) ? "num" : undefined);
        }),
      ),
    );
  }
  t.append(head, body);
  return t;
}
