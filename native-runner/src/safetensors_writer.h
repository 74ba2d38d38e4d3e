// safetensors writer: the inverse of safetensors.h's parser. Torch-free.
//
// Output layout: 8 bytes little-endian N, N bytes of JSON header, the data section. The header
// holds "__metadata__" (when given) and the tensors, names sorted; the data section holds the
// tensors back to back in the same (name) order. The header is padded with spaces so that the
// data section starts at a multiple of 8 bytes, as the format allows (and the reference writer
// does), which keeps every tensor of an 8-byte-aligned dtype aligned in a memory map.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "safetensors.h"

namespace bprof {

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string bytes;  // numel * dtype_size bytes, little-endian, row-major
};

// The bytes of a safetensors file holding `entries` (in any order) and `metadata`. Throws
// std::invalid_argument for an empty or repeated name (or "__metadata__"), a negative dimension, or
// bytes whose size does not match shape x dtype: those are programming errors of the caller.
std::string serialize_safetensors(const std::vector<SafetensorsEntry>& entries, const std::map<std::string, std::string>& metadata = {});

}  // namespace bprof
