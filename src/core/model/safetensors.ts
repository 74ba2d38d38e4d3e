// Reading and writing the safetensors format (https://github.com/huggingface/safetensors):
// 8-byte little-endian header length N, N bytes of JSON header, then the raw tensor data.
// Used by tests and tools to make tiny models and to check the files the runner reads; the
// runner itself never depends on this code.
import * as fs from "fs";
import * as os from "os";

export type WritableDtype = "F32" | "F16" | "BF16";

export interface TensorToWrite {
  name: string;
  dtype: WritableDtype;
  shape: number[];
  data: Float32Array;
}

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
const DTYPE_SIZES: Readonly<Record<string, number>> = {
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

// Typed-array views below reinterpret memory in host byte order; the format is little-endian.
function assertLittleEndianHost(): void {
  if (os.endianness() !== "LE") {
    throw new Error("safetensors: big-endian hosts are not supported");
  }
}

// ---------------------------------------------------------------------------------------------
// float conversions

/** bfloat16 bits of each float32, rounded to nearest even (NaN stays a quiet NaN). */
export function float32ToBf16Bits(data: Float32Array): Uint16Array {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const out = new Uint16Array(data.length);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i]!;
    if ((b & 0x7f800000) === 0x7f800000 && (b & 0x007fffff) !== 0) {
      out[i] = ((b >>> 16) & 0x8000) | 0x7fc0;
    } else {
      // Adding 0x7fff plus the lowest kept bit rounds ties to even; overflow carries into the
      // exponent, which correctly rounds the largest finite values up to infinity.
      out[i] = ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
    }
  }
  return out;
}

/** IEEE half-precision bits of one float32 bit pattern, rounded to nearest even. */
function float32BitsToF16Bits(b: number): number {
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  const mant = b & 0x007fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x0200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half (or zero): shift the mantissa with its implicit bit into place.
    if (e < -10) return sign;
    const m = mant | 0x00800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = m & ((1 << shift) - 1);
    let h = m >>> shift;
    if (rest > half || (rest === half && (h & 1) !== 0)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  // A carry out of the mantissa correctly increments the exponent (up to infinity).
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1) !== 0)) h++;
  return sign | h;
}

/** IEEE half-precision bits of each float32, rounded to nearest even. */
export function float32ToF16Bits(data: Float32Array): Uint16Array {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const out = new Uint16Array(data.length);
  for (let i = 0; i < bits.length; i++) out[i] = float32BitsToF16Bits(bits[i]!);
  return out;
}

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
// writing

function elementCount(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

function tensorBytes(t: TensorToWrite): Uint8Array {
  if (t.dtype === "F32") return new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const bits = t.dtype === "BF16" ? float32ToBf16Bits(t.data) : float32ToF16Bits(t.data);
  return new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength);
}

function checkTensorsToWrite(tensors: readonly TensorToWrite[]): void {
  const seen = new Set<string>();
  for (const t of tensors) {
    if (t.name === "__metadata__" || t.name === "") throw new Error(`safetensors: invalid tensor name "${t.name}"`);
    if (seen.has(t.name)) throw new Error(`safetensors: duplicate tensor "${t.name}"`);
    seen.add(t.name);
    if (!["F32", "F16", "BF16"].includes(t.dtype)) {
      throw new Error(`safetensors: tensor "${t.name}": cannot write dtype ${String(t.dtype)}`);
    }
    if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new Error(`safetensors: tensor "${t.name}": invalid shape [${t.shape.join(", ")}]`);
    }
    const n = elementCount(t.shape);
    if (n !== t.data.length) {
      throw new Error(`safetensors: tensor "${t.name}": shape [${t.shape.join(", ")}] has ${n} elements, data has ${t.data.length}`);
    }
  }
}

/** Header JSON padded with spaces so that the data section starts 8-byte aligned, as HF does. */
function paddedHeader(header: object): Buffer {
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const padded = Math.ceil((8 + json.length) / 8) * 8 - 8;
  return Buffer.concat([json, Buffer.alloc(padded - json.length, 0x20)]);
}

/**
 * Writes tensors as a safetensors file, atomically (PATH.tmp, then rename). Tensors are laid
 * out by decreasing element size (stable otherwise), as the Python library does, so every
 * tensor starts aligned to its element size. float32 data is converted to F16/BF16 with
 * round-to-nearest-even.
 */
export function writeSafetensors(
  path: string,
  tensors: readonly TensorToWrite[],
  metadata?: Record<string, string>,
): void {
  assertLittleEndianHost();
  checkTensorsToWrite(tensors);
  const ordered = [...tensors].sort((a, b) => DTYPE_SIZES[b.dtype]! - DTYPE_SIZES[a.dtype]!);
  const header: Record<string, unknown> = {};
  if (metadata !== undefined) header["__metadata__"] = { ...metadata };
  let offset = 0;
  for (const t of ordered) {
    const size = elementCount(t.shape) * DTYPE_SIZES[t.dtype]!;
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  const headerBytes = paddedHeader(header);
  const lengthBytes = Buffer.alloc(8);
  lengthBytes.writeBigUInt64LE(BigInt(headerBytes.length));

  const tmp = `${path}.tmp`;
  const fd = fs.openSync(tmp, "w");
  try {
    writeAll(fd, lengthBytes);
    writeAll(fd, headerBytes);
    // One tensor converted at a time keeps peak memory near one tensor's size.
    for (const t of ordered) writeAll(fd, tensorBytes(t));
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, path);
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
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
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isSafeInteger(o) && (o as number) >= 0)
  ) {
    throw new Error(`${where}: data_offsets ${JSON.stringify(offsets)} is not a pair of non-negative integers`);
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end) throw new Error(`${where}: data_offsets [${begin}, ${end}] end before they begin`);
  if (end > dataLength) {
    throw new Error(`${where}: data_offsets [${begin}, ${end}] go past the end of the data (${dataLength} bytes)`);
  }
  const expected = elementCount(shape as number[]) * DTYPE_SIZES[dtype]!;
  if (end - begin !== expected) {
    throw new Error(
      `${where}: shape ${JSON.stringify(shape)} x ${dtype} needs ${expected} bytes, data_offsets span ${end - begin}`,
    );
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
