// The extension's log: its output channel, and for the end-to-end tests a file of the same lines.
import { appendFileSync } from "node:fs";
import type * as vscode from "vscode";

export type Log = (message: string) => void;

/** A log that writes to `output` (and to $BPROF_EXTENSION_LOG, where the e2e tests keep it). */
export function logTo(output: vscode.OutputChannel): Log {
  return (message) => {
    output.appendLine(message);
    const file = process.env.BPROF_EXTENSION_LOG;
    if (file) appendFileSync(file, `${new Date().toISOString()} ${message}\n`);
  };
}
