// The extension's command table (src/extension/commands/index.ts) and package.json's
// contributes.commands must name the same commands: a command registered but not contributed has
// no title in the palette, and one contributed but not registered fails when a user picks it.
// The table is read from its source (it imports vscode, which only the extension host has).
import assert from "node:assert/strict";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import ts from "typescript";

const ROOT = path.join(import.meta.dirname, "..", "..", "..");
const PREFIX = "benchmarkProfiler.";

/** The property names of the object literal that `createCommands` returns. */
function commandTableNames(source: string): string[] {
  const file = ts.createSourceFile("index.ts", source, ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionDeclaration(node) && node.name?.text === "createCommands") {
      node.forEachChild(function inBody(child: ts.Node): void {
        if (ts.isReturnStatement(child) && child.expression && ts.isObjectLiteralExpression(child.expression)) {
          for (const property of child.expression.properties) if (property.name) names.push(property.name.getText(file));
          return;
        }
        child.forEachChild(inBody);
      });
      return;
    }
    node.forEachChild(visit);
  };
  visit(file);
  return names;
}

interface Manifest {
  contributes: {
    commands: { command: string }[];
    menus: Record<string, { command?: string }[]>;
  };
}

test("the command table and package.json's contributes.commands name the same commands", async () => {
  const table = commandTableNames(await fs.readFile(path.join(ROOT, "src", "extension", "commands", "index.ts"), "utf8"));
  const manifest = JSON.parse(await fs.readFile(path.join(ROOT, "package.json"), "utf8")) as Manifest;
  const contributed = manifest.contributes.commands.map((c) => c.command);
  assert.ok(table.length > 10, `read ${table.length} commands from the table`);
  assert.deepEqual(
    contributed.filter((c) => !c.startsWith(PREFIX)),
    [],
    "every contributed command is the extension's",
  );
  assert.deepEqual(contributed.map((c) => c.slice(PREFIX.length)).sort(), [...table].sort());
});

test("every menu entry of package.json names a contributed command", async () => {
  const manifest = JSON.parse(await fs.readFile(path.join(ROOT, "package.json"), "utf8")) as Manifest;
  const contributed = new Set(manifest.contributes.commands.map((c) => c.command));
  const unknown = Object.entries(manifest.contributes.menus).flatMap(([menu, entries]) =>
    entries.filter((e) => e.command !== undefined && !contributed.has(e.command)).map((e) => `${menu}: ${e.command}`),
  );
  assert.deepEqual(unknown, []);
});

test("the table reader finds shorthand and renamed entries, and only createCommands'", () => {
  const source =
    "const other = () => ({ notACommand });\n" +
    "export function createCommands() {\n  if (x) { y(); }\n  return { profile, generateItems: generateMoreItems };\n}\n";
  assert.deepEqual(commandTableNames(source), ["profile", "generateItems"]);
});
