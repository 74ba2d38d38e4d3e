import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { bf16BitsToFloat32, f16BitsToFloat32, readSafetensorsHeader, readTensorF32 } from "../../../src/core/model/safetensors";
import { float32ToBf16Bits, float32ToF16Bits, writeSafetensors } from "../../support/safetensorsWriter";

function withTmpDir(fn: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bprof-safetensors-"));
  try {
    fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A safetensors file from a raw header object and data, exactly as given (no checks). */
function writeRawFile(file: string, header: unknown, dataBytes: number, headerText?: string): void {
  const json = Buffer.from(headerText ?? JSON.stringify(header), "utf8");
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  fs.writeFileSync(file, Buffer.concat([length, json, Buffer.alloc(dataBytes)]));
}

const SAMPLE = new Float32Array([0, -0, 1, -1.5, 3.14159, 1e-3, -65504, 1e-6, 12345.678, 0.1]);

test("F32 round trip is exact and the header is padded to 8 bytes", () => {
  withTmpDir((dir) => {
    const file = path.join(dir, "a.safetensors");
    writeSafetensors(
      file,
      [
        { name: "w", dtype: "F32", shape: [2, 5], data: SAMPLE },
        { name: "scalar", dtype: "F32", shape: [], data: new Float32Array([7]) },
        { name: "empty", dtype: "F32", shape: [0, 3], data: new Float32Array(0) },
      ],
      { format: "pt" },
    );
    assert.equal(fs.existsSync(`${file}.tmp`), false);
    const header = readSafetensorsHeader(file);
    assert.equal(header.dataStart % 8, 0);
    assert.deepEqual(header.metadata, { format: "pt" });
    assert.deepEqual(
      header.tensors.map((t) => t.name),
      ["w", "scalar", "empty"],
    );
    assert.equal(fs.statSync(file).size, header.dataStart + 44);
    const w = readTensorF32(file, "w");
    assert.deepEqual(w.shape, [2, 5]);
    assert.deepEqual(Array.from(w.data), Array.from(SAMPLE));
    assert.deepEqual(Array.from(readTensorF32(file, "scalar").data), [7]);
    assert.equal(readTensorF32(file, "empty").data.length, 0);
    assert.throws(() => readTensorF32(file, "nope"), /nope/);
  });
});

test("BF16 and F16 round trips are within half an ulp and tensors stay aligned", () => {
  withTmpDir((dir) => {
    const file = path.join(dir, "b.safetensors");
    writeSafetensors(file, [
      { name: "half", dtype: "F16", shape: [1, 10], data: SAMPLE.slice(0, 10) },
      { name: "odd", dtype: "BF16", shape: [3], data: new Float32Array([1, 2, 3]) },
      { name: "full", dtype: "F32", shape: [10], data: SAMPLE },
      { name: "brain", dtype: "BF16", shape: [10], data: SAMPLE },
    ]);
    const header = readSafetensorsHeader(file);
    // F32 first, so no odd-sized half tensor can misalign it.
    assert.equal(header.tensors[0]!.name, "full");
    for (const t of header.tensors) assert.equal(t.dataOffsets[0] % (t.dtype === "F32" ? 4 : 2), 0);
    const brain = readTensorF32(file, "brain").data;
    const half = readTensorF32(file, "half").data;
    SAMPLE.forEach((x, i) => {
      assert.ok(Math.abs(brain[i]! - x) <= Math.abs(x) * 2 ** -8, `bf16 ${x} -> ${brain[i]}`);
      // f16: relative 2^-11 for normals, absolute 2^-25 for subnormals.
      assert.ok(Math.abs(half[i]! - x) <= Math.max(Math.abs(x) * 2 ** -11, 2 ** -25), `f16 ${x} -> ${half[i]}`);
    });
    assert.deepEqual(Array.from(readTensorF32(file, "odd").data), [1, 2, 3]);
  });
});

test("float conversions round to nearest even and keep specials", () => {
  const f32 = (bits: number): number => new Float32Array(new Uint32Array([bits]).buffer)[0]!;
  // bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 -> even (1); 1 + 3*2^-8 -> 1 + 2^-6.
  assert.deepEqual(
    Array.from(float32ToBf16Bits(new Float32Array([1 + 2 ** -8, 1 + 3 * 2 ** -8, f32(0x3f808001)]))),
    [0x3f80, 0x3f82, 0x3f81],
  );
  const bfSpecials = float32ToBf16Bits(new Float32Array([Infinity, -Infinity, NaN, 3.4e38]));
  assert.deepEqual(Array.from(bfSpecials.slice(0, 2)), [0x7f80, 0xff80]);
  assert.ok(Number.isNaN(bf16BitsToFloat32(bfSpecials)[2]));
  assert.equal(bf16BitsToFloat32(bfSpecials)[3], Infinity);
  // f16: ties to even, overflow to infinity, subnormals, underflow to zero.
  const f16 = float32ToF16Bits(
    new Float32Array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504, 65520, 2 ** -24, 2 ** -25, 3 * 2 ** -25, -0, NaN, -Infinity]),
  );
  assert.deepEqual(Array.from(f16.slice(0, 8)), [0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x0002, 0x8000]);
  assert.equal(f16[8]! & 0x7c00, 0x7c00);
  assert.notEqual(f16[8]! & 0x3ff, 0);
  assert.equal(f16[9], 0xfc00);
  const back = f16BitsToFloat32(new Uint16Array([0x3c00, 0x0001, 0x7bff, 0xfc00, 0x8000, 0x3555]));
  assert.deepEqual(Array.from(back.slice(0, 5)), [1, 2 ** -24, 65504, -Infinity, -0]);
  assert.equal(back[5], Math.fround(0.333251953125));
});

test("writer rejects inconsistent tensors", () => {
  withTmpDir((dir) => {
    const file = path.join(dir, "bad.safetensors");
    assert.throws(() => writeSafetensors(file, [{ name: "w", dtype: "F32", shape: [3], data: new Float32Array(2) }]), /"w".*3 elements/);
    const t = { name: "w", dtype: "F32" as const, shape: [1], data: new Float32Array(1) };
    assert.throws(() => writeSafetensors(file, [t, t]), /duplicate/);
    assert.equal(fs.existsSync(file), false);
  });
});

// Every header defect the reader must reject, each with the words its message must contain.
const HEADER_ERRORS: { label: string; header?: unknown; text?: string; data?: number; rawLength?: bigint; pattern: RegExp }[] = [
  { label: "header length past the end", rawLength: 1000n, pattern: /header length 1000 exceeds/ },
  { label: "header not JSON", text: "{not json", pattern: /not valid JSON/ },
  { label: "header not an object", text: "[1, 2]", pattern: /not a JSON object/ },
  {
    label: "unknown dtype",
    header: { w: { dtype: "F12", shape: [1], data_offsets: [0, 4] } },
    data: 4,
    pattern: /tensor "w": unknown dtype "F12"/,
  },
  { label: "bad shape", header: { w: { dtype: "F32", shape: [-1], data_offsets: [0, 4] } }, data: 4, pattern: /tensor "w": shape/ },
  { label: "bad offsets", header: { w: { dtype: "F32", shape: [1], data_offsets: [0] } }, data: 4, pattern: /tensor "w": data_offsets/ },
  {
    label: "offsets reversed",
    header: { w: { dtype: "F32", shape: [0], data_offsets: [4, 0] } },
    data: 4,
    pattern: /tensor "w": .*end before/,
  },
  {
    label: "offsets past the data",
    header: { w: { dtype: "F32", shape: [2], data_offsets: [0, 8] } },
    data: 4,
    pattern: /tensor "w": .*past the end/,
  },
  {
    label: "shape x dtype mismatch",
    header: { w: { dtype: "BF16", shape: [2, 2], data_offsets: [0, 4] } },
    data: 8,
    pattern: /tensor "w": .*needs 8 bytes.*span 4/,
  },
  {
    label: "overlapping tensors",
    header: { a: { dtype: "F32", shape: [2], data_offsets: [0, 8] }, b: { dtype: "F32", shape: [2], data_offsets: [4, 12] } },
    data: 12,
    pattern: /tensor "b": .*overlap tensor "a"/,
  },
  { label: "metadata not strings", header: { __metadata__: { n: 1 } }, data: 0, pattern: /__metadata__/ },
];

for (const c of HEADER_ERRORS) {
  test(`reader rejects: ${c.label}`, () => {
    withTmpDir((dir) => {
      const file = path.join(dir, "broken.safetensors");
      if (c.rawLength !== undefined) {
        const bytes = Buffer.alloc(16, 0x20);
        bytes.writeBigUInt64LE(c.rawLength);
        fs.writeFileSync(file, bytes);
      } else {
        writeRawFile(file, c.header, c.data ?? 0, c.text);
      }
      for (const read of [() => readSafetensorsHeader(file), () => readTensorF32(file, "w")]) {
        assert.throws(read, (err: Error) => {
          assert.ok(err.message.includes(file), `message names the file: ${err.message}`);
          assert.match(err.message, c.pattern);
          return true;
        });
      }
    });
  });
}

test("reader rejects a file shorter than the length field", () => {
  withTmpDir((dir) => {
    const file = path.join(dir, "tiny.safetensors");
    fs.writeFileSync(file, Buffer.alloc(3));
    assert.throws(() => readSafetensorsHeader(file), /tiny\.safetensors.*too short/);
  });
});
