// The CLI's streams guarded once: every write of text or bytes reaches the terminal without the
// controls it held; the progress bar's own cursor controls still do.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { guardTerminalOutput, writeControls } from "../../../src/cli/terminal";

/** A stream that keeps what reaches it, standing in for process.stdout. */
function recordingStream(): { stream: NodeJS.WriteStream; written: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  return { stream, written: () => Buffer.concat(chunks).toString("utf8") };
}

test("a guarded stream escapes the controls of every write, text or bytes, and keeps its line breaks", () => {
  const { stream, written } = recordingStream();
  guardTerminalOutput([stream]);
  guardTerminalOutput([stream]);
  stream.write("run \x1b]52;c;SGVsbG8=\x07: ok\n");
  stream.write(Buffer.from("table \x1b[2J\u202e|\n"));
  assert.equal(written(), "run \\u001b]52;c;SGVsbG8=\\u0007: ok\ntable \\u001b[2J\\u202e|\n", "escaped once, though guarded twice");
});

test("writeControls passes the CLI's own cursor controls through a guarded stream", () => {
  const { stream, written } = recordingStream();
  guardTerminalOutput([stream]);
  writeControls(stream, "\r[####] 50%\x1b[K");
  assert.equal(written(), "\r[####] 50%\x1b[K");
});
