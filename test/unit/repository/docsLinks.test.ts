// Every relative link and image of the README and docs/ resolves: the file is in the repository
// and, for a link with #anchor, the heading is in that file (as GitHub makes anchors of headings).
// The README's images are PNG or JPEG (test/integration/packaging.test.ts checks that both
// packages carry them).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

const ROOT = path.resolve(import.meta.dirname, "..", "..", "..");
const PAGES = [
  "README.md",
  "CHANGELOG.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
].filter((p) => existsSync(path.join(ROOT, p)));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchorsIn(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

function prose(text: string): string {
  return text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
}

/** The image targets of a Markdown page: `![alt](src)` and `<img src="...">`, outside code. */
function imagesIn(text: string): string[] {
  const p = prose(text);
  return [
    ...[...p.matchAll(/!\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!),
    ...[...p.matchAll(/<img\s[^>]*?src=["']([^"']+)["']/gi)].map((m) => m[1]!),
  ];
}

/** The link and image targets of a Markdown page, outside code blocks and code spans. */
function targetsIn(text: string): string[] {
  const links = [...prose(text).matchAll(/(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
  return [...links, ...imagesIn(text)];
}

test("every relative link and image of the README and docs resolves, anchors included", () => {
  assert.ok(PAGES.length >= 5, PAGES.join(", "));
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    const file = path.join(ROOT, page);
    for (const target of targetsIn(readFileSync(file, "utf8"))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, vscode: ...
      const [pathPart, anchor] = target.split("#") as [string, string | undefined];
      const resolved = pathPart === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      checked++;
      if (!resolved.startsWith(ROOT) || !existsSync(resolved)) {
        broken.push(`${page}: ${target} (no such file)`);
        continue;
      }
      if (anchor && resolved.endsWith(".md") && !anchorsIn(resolved).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor})`);
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(checked >= 10, `${checked} links checked`);
});

// The README is also the Marketplace page, which shows only the images the .vsix carries; vsce
// refuses SVG images in a README.
test("every image of the README is a PNG or JPEG file of the repository", () => {
  const images = imagesIn(readFileSync(path.join(ROOT, "README.md"), "utf8")).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
  assert.ok(images.length >= 2, `the README shows the product: ${images.join(", ")}`);
  for (const image of images) {
    assert.match(image, /\.(png|jpe?g)$/i, `${image}: vsce accepts PNG or JPEG images in a README`);
    assert.ok(existsSync(path.join(ROOT, image)), `${image} is not in the repository`);
  }
});
