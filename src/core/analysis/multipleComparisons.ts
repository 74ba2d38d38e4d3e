// A profile is a table of claims, each a cell's test against "the ablation changed nothing":
// tested one by one at 5%, a table of a hundred null cells stars about five by chance alone. The
// stars are controlled over the table they stand in instead (docs/method.md, "Which stars to
// trust"): `bh` (Benjamini and Hochberg, 1995) keeps the expected share of false stars among the
// starred at most `fdr`; `holm` (Holm, 1979) the chance of any false star at all; `none` stars on
// each cell's own p-value, as before.
//
//     BH:   q_(i) = min over j >= i of  p_(j) * m / j          (p ascending, m cells)
//     Holm: q_(i) = max over j <= i of  min(1, p_(j) * (m - j + 1))
//
// A cell is starred when its q is below the threshold. BH assumes independent or positively
// dependent tests; the cells of one benchmark share its documents, which makes them positively
// dependent, the case BH still controls.

export type Correction = "bh" | "holm" | "none";

export const CORRECTIONS: readonly Correction[] = ["bh", "holm", "none"];
export const DEFAULT_CORRECTION: Correction = "bh";
/** The threshold a q must be below (the config's `stats.fdr`). */
export const DEFAULT_FDR = 0.05;

/** The adjusted p-values (q) of `p`, in its order; a null p (a cell without a test) stays null and is not counted. */
export function adjustedPValues(p: readonly (number | null)[], correction: Correction): (number | null)[] {
  const tested = p.flatMap((value, i) => (value === null ? [] : [{ value, i }]));
  const q: (number | null)[] = p.map(() => null);
  const m = tested.length;
  if (m === 0) return q;
  if (correction === "none") {
    for (const { value, i } of tested) q[i] = value;
    return q;
  }
  const ascending = [...tested].sort((a, b) => a.value - b.value || a.i - b.i);
  if (correction === "bh") {
    let running = 1;
    for (let rank = m; rank >= 1; rank--) {
      const { value, i } = ascending[rank - 1]!;
      running = Math.min(running, (value * m) / rank);
      q[i] = running;
    }
    return q;
  }
  let running = 0;
  for (let rank = 1; rank <= m; rank++) {
    const { value, i } = ascending[rank - 1]!;
    running = Math.max(running, Math.min(1, value * (m - rank + 1)));
    q[i] = running;
  }
  return q;
}

/** The words a report says a star by: which correction, over what, at which threshold. */
export function correctionWords(correction: Correction, threshold: number): string {
  if (correction === "bh") return `Benjamini-Hochberg q < ${threshold} over each table (false discovery rate ${threshold})`;
  if (correction === "holm") return `Holm-adjusted p < ${threshold} over each table (family-wise error ${threshold})`;
  return `p < ${threshold}, each cell on its own (no correction for the table's many cells)`;
}
