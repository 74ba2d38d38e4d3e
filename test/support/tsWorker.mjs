// Starts a TypeScript worker thread under tsx (Node's --import hooks do not reach worker threads):
// new Worker(this file, { workerData: { script: <file URL of the .ts entry> } }).
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.script);
