// The extension's id: the prefix of its commands, settings and views in package.json.
export const EXTENSION_ID = "benchmarkProfiler";
