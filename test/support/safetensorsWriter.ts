// Writing the safetensors format, for tests that make tiny models (randomLlama.ts) and check
// what the runner and core read. The reader, which the product uses, is
// src/core/model/safetensors.ts; this half stays out of the bundles.
import * as fs from "fs";
import { assertLittleEndianHost, DTYPE_SIZES, elementCount } from "../../src/core/model/safetensors";

export type WritableDtype = "F32" | "F16" | "BF16";

export interface TensorToWrite {
  name: string;
  dtype: WritableDtype;
  shape: number[];
  data: Float32Array;
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

// ---------------------------------------------------------------------------------------------
// writing

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
export function writeSafetensors(path: string, tensors: readonly TensorToWrite[], metadata?: Record<string, string>): void {
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
