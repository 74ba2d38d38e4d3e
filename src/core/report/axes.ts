// The titles of a heatmap's axes, the same in the results view, the HTML report and the exported
// PNG and SVG: rows are the variants (an ability's parameters zeroed, or the random control),
// columns the benchmarks scored.
export const HEATMAP_AXES = { rows: "ability ablated", columns: "benchmark" } as const;
