// Reading the safetensors format (https://github.com/huggingface/safetensors): 8-byte
// little-endian header length N, N bytes of JSON header, then the raw tensor data. Core reads
// headers to check a model folder; tests also read tensors back. Writing lives with the tools
// that make test models (test/support/safetensorsWriter.ts). The runner never depends on this code.
import * as fs from "fs";
import * as os from "os";

export interface TensorInfo {
  name: string;
  dtype: string;
  shape: number[];
  /** [begin, end) in bytes, relative to the start of the data section. */
  dataOffsets: [number, number];
}

export interface SafetensorsHeader {
  /** Length N of the JSON header (without the 8 length bytes). */
  headerLength: number;
  /** Absolute file offset of the data section: 8 + N. */
  dataStart: number;
  metadata: Record<string, string>;
  /** Tensors in the order the header lists them. */
  tensors: TensorInfo[];
}

/** Byte size of one element of every dtype the format defines. */
export const DTYPE_SIZES: Readonly<Record<string, number>> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E4M3: 1,
  F8_E5M2: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  I64: 8,
  U64: 8,
  F64: 8,
};

// The same limit as the reference Rust implementation: a larger header is a corrupt file, and
// refusing it early avoids allocating gigabytes for a bogus length.
const MAX_HEADER_LENGTH = 100_000_000;

/** Number of elements of a tensor of this shape (1 for a scalar). */
export function elementCount(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

// Typed-array views below reinterpret memory in host byte order; the format is little-endian.
export function assertLittleEndianHost(): void {
  if (os.endianness() !== "LE") {
    throw new Error("safetensors: big-endian hosts are not supported");
  }
}

// ---------------------------------------------------------------------------------------------
// float conversions

/** float32 values of bfloat16 bit patterns (exact). */
export function bf16BitsToFloat32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = bits[i]! << 16;
  return out;
}

/** float32 values of IEEE half-precision bit patterns (exact). */
export function f16BitsToFloat32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i]!;
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) out[i] = sign * mant * 2 ** -24;
    else if (exp === 0x1f) out[i] = mant === 0 ? sign * Infinity : NaN;
    else out[i] = sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// reading

function readExactly(fd: number, length: number, position: number): Uint8Array {
  const buf = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  if (done !== length) throw new Error(`short read (${done} of ${length} bytes)`);
  return buf;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function parseTensorInfo(file: string, name: string, entry: unknown, dataLength: number): TensorInfo {
  const where = `${file}: tensor "${name}"`;
  if (!isPlainObject(entry)) throw new Error(`${where}: header entry is not an object`);
  const { dtype, shape, data_offsets: offsets } = entry;
  if (typeof dtype !== "string" || !(dtype in DTYPE_SIZES)) {
    throw new Error(`${where}: unknown dtype ${JSON.stringify(dtype)}`);
  }
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) {
    throw new Error(`${where}: shape ${JSON.stringify(shape)} is not a list of non-negative integers`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && (o as number) >= 0)) {
    throw new Error(`${where}: data_offsets ${JSON.stringify(offsets)} is not a pair of non-negative integers`);
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end) throw new Error(`${where}: data_offsets [${begin}, ${end}] end before they begin`);
  if (end > dataLength) {
    throw new Error(`${where}: data_offsets [${begin}, ${end}] go past the end of the data (${dataLength} bytes)`);
  }
  const expected = elementCount(shape as number[]) * DTYPE_SIZES[dtype]!;
  if (end - begin !== expected) {
    throw new Error(`${where}: shape ${JSON.stringify(shape)} x ${dtype} needs ${expected} bytes, data_offsets span ${end - begin}`);
  }
  return { name, dtype, shape: shape as number[], dataOffsets: [begin, end] };
}

function checkNoOverlap(file: string, tensors: readonly TensorInfo[]): void {
  const sorted = [...tensors].sort((a, b) => a.dataOffsets[0] - b.dataOffsets[0] || a.dataOffsets[1] - b.dataOffsets[1]);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    // Empty tensors occupy no bytes and cannot overlap anything.
    if (cur.dataOffsets[0] === cur.dataOffsets[1] || prev.dataOffsets[0] === prev.dataOffsets[1]) continue;
    if (cur.dataOffsets[0] < prev.dataOffsets[1]) {
      throw new Error(
        `${file}: tensor "${cur.name}": data_offsets [${cur.dataOffsets.join(", ")}] overlap tensor "${prev.name}" [${prev.dataOffsets.join(", ")}]`,
      );
    }
  }
}

function parseMetadata(file: string, value: unknown): Record<string, string> {
  if (!isPlainObject(value) || !Object.values(value).every((v) => typeof v === "string")) {
    throw new Error(`${file}: __metadata__ is not an object of strings`);
  }
  return value as Record<string, string>;
}

function readHeaderFromFd(file: string, fd: number): SafetensorsHeader {
  const fileSize = fs.fstatSync(fd).size;
  if (fileSize < 8) throw new Error(`${file}: file is ${fileSize} bytes, too short for a safetensors header`);
  const n = Buffer.from(readExactly(fd, 8, 0)).readBigUInt64LE(0);
  if (n > BigInt(fileSize - 8)) {
    throw new Error(`${file}: header length ${n} exceeds the file size (${fileSize} bytes)`);
  }
  if (n > BigInt(MAX_HEADER_LENGTH)) throw new Error(`${file}: header length ${n} is implausibly large`);
  const headerLength = Number(n);
  const text = Buffer.from(readExactly(fd, headerLength, 8)).toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: header is not valid JSON (${(err as Error).message})`);
  }
  if (!isPlainObject(parsed)) throw new Error(`${file}: header is not a JSON object`);
  const dataStart = 8 + headerLength;
  const dataLength = fileSize - dataStart;
  let metadata: Record<string, string> = {};
  const tensors: TensorInfo[] = [];
  for (const [name, entry] of Object.entries(parsed)) {
    if (name === "__metadata__") metadata = parseMetadata(file, entry);
    else tensors.push(parseTensorInfo(file, name, entry, dataLength));
  }
  checkNoOverlap(file, tensors);
  return { headerLength, dataStart, metadata, tensors };
}

/** Parses and validates the header of a safetensors file; errors name the file and tensor. */
export function readSafetensorsHeader(path: string): SafetensorsHeader {
  const fd = fs.openSync(path, "r");
  try {
    return readHeaderFromFd(path, fd);
  } finally {
    fs.closeSync(fd);
  }
}

function decodeToFloat32(file: string, info: TensorInfo, bytes: Uint8Array): Float32Array {
  // `bytes` is a fresh allocation, so its buffer is aligned for any typed-array view.
  switch (info.dtype) {
    case "F32":
      return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    case "BF16":
      return bf16BitsToFloat32(new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2));
    case "F16":
      return f16BitsToFloat32(new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2));
    case "F64":
      return Float32Array.from(new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8));
    default:
      throw new Error(`${file}: tensor "${info.name}": cannot decode dtype ${info.dtype} as float`);
  }
}

/** One tensor of a safetensors file as float32 (decoding F32, F16, BF16 and F64). */
export function readTensorF32(path: string, name: string): { shape: number[]; data: Float32Array } {
  assertLittleEndianHost();
  const fd = fs.openSync(path, "r");
  try {
    const header = readHeaderFromFd(path, fd);
    const info = header.tensors.find((t) => t.name === name);
    if (info === undefined) throw new Error(`${path}: tensor "${name}" not found`);
    const [begin, end] = info.dataOffsets;
    const bytes = readExactly(fd, end - begin, header.dataStart + begin);
    return { shape: [...info.shape], data: decodeToFloat32(path, info, bytes) };
  } finally {
    fs.closeSync(fd);
  }
}
