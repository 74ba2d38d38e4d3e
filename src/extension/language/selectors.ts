// Which documents the language features serve.
import type * as vscode from "vscode";

export const CONFIGS: vscode.DocumentSelector = [{ scheme: "file", pattern: "**/*.bprof.yaml" }];
/** Diagnostic datasets: `*.diag.jsonl`, and any JSON Lines file a config names (the model knows which). */
export const DATASETS: vscode.DocumentSelector = [{ scheme: "file", pattern: "**/*.jsonl" }];
/** Every file the model reports problems in: configs, tasks, datasets and data. */
export const CHECKED: vscode.DocumentSelector = [{ scheme: "file", pattern: "**/*.{yaml,yml,jsonl,json,csv}" }];
