// The CLI's stdout and stderr, guarded once at start: every write goes through terminalText, so no
// name, message, table or report that came from a file (a config, a run folder, a model folder)
// reaches the terminal with its control characters, whichever line of the CLI prints it, now or
// later. A report piped to a file gets the same bytes: `\uXXXX` keeps JSON and a report's script
// meaning the same, and what a terminal would act on is not a report's to hold.
import { terminalText } from "../core/base/terminalText";

type Write = NodeJS.WriteStream["write"];

/** Each guarded stream's own write, for the progress bar's cursor controls (writeControls). */
const unguarded = new WeakMap<NodeJS.WriteStream, Write>();

/** Makes every later write of text or bytes to `streams` pass through terminalText. */
export function guardTerminalOutput(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    if (unguarded.has(stream)) continue;
    const write = stream.write.bind(stream) as Write;
    unguarded.set(stream, write);
    stream.write = ((chunk: unknown, ...rest: unknown[]) =>
      (write as (chunk: unknown, ...rest: unknown[]) => boolean)(safeChunk(chunk), ...rest)) as Write;
  }
}

/** Text and bytes as terminalText makes them (bytes read as UTF-8); anything else as it is. */
function safeChunk(chunk: unknown): unknown {
  if (typeof chunk === "string") return terminalText(chunk);
  if (chunk instanceof Uint8Array) return terminalText(Buffer.from(chunk).toString("utf8"));
  return chunk;
}

/**
 * Writes `text` unguarded: for the CLI's own cursor controls (the progress bar's `\r` and erase
 * to end of line). Whatever of `text` came from a file must have been through terminalText.
 */
export function writeControls(stream: NodeJS.WriteStream, text: string): void {
  (unguarded.get(stream) ?? stream.write.bind(stream))(text);
}
