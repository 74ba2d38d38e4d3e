#!/usr/bin/env python3
"""Writes the seed inputs of the safetensors header fuzzer (fuzz_safetensors.cpp).

    python3 native-runner/fuzz/make_seeds.py [OUT_DIR]    # default: native-runner/fuzz/corpus

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON, then the data
section. The seeds are a few valid files and a few near-misses, each one rule away from valid, so
the fuzzer starts next to every check of the parser. Files are named seed-*.safetensors; running
the script again overwrites them with the same bytes (it is deterministic) and leaves other files
of the folder (those libFuzzer added) alone. Python 3 standard library only.
"""

import json
import os
import struct
import sys

DTYPE_SIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2,
              "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}


def raw(header_text, data=b"", length=None):
    """A file from literal header text; `length` overrides the 8-byte prefix."""
    body = header_text.encode("utf-8")
    n = len(body) if length is None else length
    return struct.pack("<Q", n) + body + data


def container(entries, metadata=None, pad_to=None):
    """A well-formed file: entries is [(name, dtype, shape)], laid out back to back in order."""
    header, offset, data = {}, 0, bytearray()
    if metadata is not None:
        header["__metadata__"] = metadata
    for i, (name, dtype, shape) in enumerate(entries):
        count = 1
        for d in shape:
            count *= d
        size = count * DTYPE_SIZE[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        data += bytes((i * 31 + j) & 0xFF for j in range(size))
        offset += size
    text = json.dumps(header, separators=(",", ":"))
    if pad_to:  # writers pad the header with spaces so the data section is aligned
        text += " " * (-(8 + len(text)) % pad_to)
    return raw(text, bytes(data))


def tensor(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def dump(obj):
    return json.dumps(obj, separators=(",", ":"))


def seeds():
    s = {}
    # --- valid
    s["valid-one-f32"] = container([("weight", "F32", [2, 3])])
    s["valid-mixed-dtypes"] = container(
        [("embed.weight", "F16", [4, 2]), ("norm.weight", "BF16", [2]), ("position_ids", "I64", [1, 3])],
        metadata={"format": "pt"}, pad_to=8)
    s["valid-metadata"] = container([("w", "F32", [1])], metadata={"format": "pt", "note": "a\u00e9\"\\"})
    s["valid-empty-tensor"] = container([("e", "F32", [0, 5]), ("s", "BF16", [])])
    s["valid-zero-tensors"] = raw("{}")
    s["valid-zero-tensors-metadata"] = raw(dump({"__metadata__": {}}))
    s["valid-all-dtypes"] = container([("t_" + d.lower(), d, [2]) for d in DTYPE_SIZE])
    # empty, with dimensions whose product overflows int64: valid, and numel() must still say 0
    s["valid-empty-huge-dims"] = raw(dump({"w": tensor("F32", [4294967296, 4294967296, 0], 0, 0)}))
    s["valid-null-metadata"] = raw(dump({"__metadata__": None, "x": tensor("U8", [3], 0, 3)}), b"abc")

    # --- near-misses: each breaks one rule
    ok = tensor("F32", [2], 0, 8)
    s["bad-offset-past-data"] = raw(dump({"w": tensor("F32", [4], 0, 16)}), bytes(8))
    s["bad-begin-after-end"] = raw(dump({"w": tensor("F32", [1], 4, 0)}), bytes(4))
    s["bad-overlap"] = raw(dump({"ok": ok, "w": tensor("F32", [2], 4, 12)}), bytes(12))
    s["bad-hole"] = raw(dump({"ok": ok, "w": tensor("F32", [1], 12, 16)}), bytes(16))
    s["bad-trailing-bytes"] = raw(dump({"ok": ok}), bytes(12))
    s["bad-size-mismatch"] = raw(dump({"w": tensor("F32", [2, 2], 0, 12)}), bytes(12))
    s["bad-huge-shape"] = raw(dump({"w": tensor("F32", [4294967296, 4294967296, 16], 0, 4)}), bytes(4))
    s["bad-dtype"] = raw(dump({"w": tensor("F33", [1], 0, 4)}), bytes(4))
    s["bad-subbyte-dtype"] = raw(dump({"w": tensor("F4", [2], 0, 1)}), bytes(1))
    s["bad-negative-dim"] = raw(dump({"w": tensor("F32", [-1], 0, 4)}), bytes(4))
    s["bad-float-offset"] = raw(dump({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0.0, 4]}}), bytes(4))
    s["bad-nested-json"] = raw(dump({"w": {"dtype": "F32", "shape": [[[[1]]]], "data_offsets": [0, 4]}}),
                               bytes(4))
    s["bad-nested-metadata"] = raw(dump({"__metadata__": {"a": {"b": ["c"]}}}))
    s["bad-duplicate-tensor"] = raw('{"w":%s,"w":%s}' % (dump(ok), dump(ok)), bytes(8))
    s["bad-duplicate-field"] = raw('{"w":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}}',
                                   bytes(4))
    s["bad-unknown-field"] = raw(dump({"w": dict(tensor("F32", [1], 0, 4), x=1)}), bytes(4))
    s["bad-not-object"] = raw("[1,2]")
    s["bad-truncated-json"] = raw('{"w":{"dtype":"F32","sha')
    s["bad-length-past-end"] = raw(dump({"w": tensor("F32", [1], 0, 4)}), bytes(4), length=0xFFFF)
    s["bad-length-huge"] = raw("{}", length=0xFFFFFFFFFFFFFFFF)
    s["bad-short-file"] = b"\x02\x00\x00"
    s["bad-empty-name"] = raw(dump({"": tensor("F32", [1], 0, 4)}), bytes(4))
    bad_utf8 = b'{"\xff":1}'  # a key that is not UTF-8
    s["bad-invalid-utf8"] = struct.pack("<Q", len(bad_utf8)) + bad_utf8
    return s


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in sorted(seeds().items()):
        with open(os.path.join(out, "seed-%s.safetensors" % name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds()), out))


if __name__ == "__main__":
    main()
