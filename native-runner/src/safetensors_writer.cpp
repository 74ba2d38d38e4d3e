#include "safetensors_writer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace bprof {

namespace {

// The data section starts at 8 + N; padding N to a multiple of 8 aligns it.
constexpr size_t kAlignment = 8;

std::string json_string(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

std::string serialize_safetensors(const std::vector<SafetensorsEntry>& entries, const std::map<std::string, std::string>& metadata) {
  std::vector<const SafetensorsEntry*> sorted;
  sorted.reserve(entries.size());
  for (const SafetensorsEntry& e : entries) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) { return a->name < b->name; });

  // The header is written by hand rather than through a JSON object so that its order is fixed
  // (metadata first, then tensors by name) whatever the JSON library's map does.
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& kv : metadata) {
      header += (first ? "" : ",") + json_string(kv.first) + ":" + json_string(kv.second);
      first = false;
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < sorted.size(); i++) {
    const SafetensorsEntry& e = *sorted[i];
    if (e.name.empty()) throw std::invalid_argument("safetensors: a tensor has an empty name");
    if (e.name == "__metadata__") throw std::invalid_argument("safetensors: '__metadata__' is not a tensor name");
    if (i > 0 && sorted[i - 1]->name == e.name) throw std::invalid_argument("safetensors: tensor '" + e.name + "' appears twice");
    uint64_t numel = 1;
    std::string shape;
    for (int64_t d : e.shape) {
      if (d < 0) throw std::invalid_argument("safetensors: tensor '" + e.name + "' has a negative dimension");
      numel *= static_cast<uint64_t>(d);
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
    }
    if (numel * dtype_size(e.dtype) != e.bytes.size())
      throw std::invalid_argument("safetensors: tensor '" + e.name + "' has " + std::to_string(e.bytes.size()) +
                                  " bytes, its shape and dtype call for " + std::to_string(numel * dtype_size(e.dtype)));
    const uint64_t end = offset + e.bytes.size();
    header += (header.size() > 1 ? "," : "") + json_string(e.name) + ":{\"dtype\":\"" + dtype_name(e.dtype) + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += "}";
  const size_t padded = (header.size() + kAlignment - 1) / kAlignment * kAlignment;  // 8 + N stays aligned
  header.append(padded - header.size(), ' ');

  std::string out;
  out.reserve(8 + header.size() + offset);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; i++) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));  // little-endian
  out += header;
  for (const SafetensorsEntry* e : sorted) out += e->bytes;
  return out;
}

}  // namespace bprof
