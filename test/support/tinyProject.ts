export { makeTinyProject, TINY_BENCHMARK_DOCS, type TinyProject } from "../../src/core/demo/tinyProject";
