#include "safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "errors.h"
#include "json_util.h"

namespace bprof {

using json = nlohmann::json;

// ----------------------------------------------------------------------------
// dtypes

namespace {

struct DTypeDesc {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeDesc kDTypes[] = {
    {DType::BOOL, "BOOL", 1},       {DType::U8, "U8", 1},   {DType::I8, "I8", 1},   {DType::F8_E5M2, "F8_E5M2", 1},
    {DType::F8_E4M3, "F8_E4M3", 1}, {DType::I16, "I16", 2}, {DType::U16, "U16", 2}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},       {DType::I32, "I32", 4}, {DType::U32, "U32", 4}, {DType::F32, "F32", 4},
    {DType::F64, "F64", 8},         {DType::I64, "I64", 8}, {DType::U64, "U64", 8},
};

const DTypeDesc& describe(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d;
  return kDTypes[0];  // unreachable: every enumerator is in the table
}

bool dtype_from_name(const std::string& name, DType* out) {
  for (const auto& d : kDTypes) {
    if (name == d.name) {
      *out = d.dtype;
      return true;
    }
  }
  return false;
}

}  // namespace

const char* dtype_name(DType dtype) { return describe(dtype).name; }
size_t dtype_size(DType dtype) { return describe(dtype).size; }
bool dtype_is_float(DType dtype) { return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 || dtype == DType::F64; }

int64_t TensorInfo::numel() const {
  // An empty tensor is valid whatever its other dimensions, and their product may overflow
  // ([2^32, 2^32, 0]): it holds nothing, full stop. Without a zero the product cannot overflow,
  // the parser checked it against the file size.
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const TensorInfo* SafetensorsHeader::find(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

// ----------------------------------------------------------------------------
// header parsing

namespace {

// nlohmann::json keeps the last of duplicate keys without a word. A parser callback sees every
// key as it is read, so we keep one set of keys per open object and remember the first repeat.
// The top-level key in force tells which tensor a nested duplicate ("dtype" twice) belongs to.
struct DuplicateKeyFinder {
  std::vector<std::set<std::string>> open_objects;
  std::string top_level_key;
  bool found = false;
  std::string duplicate_key;
  std::string duplicate_owner;  // top-level key around a nested duplicate; empty for a top-level one

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case json::parse_event_t::key: {
        const std::string& key = parsed.get_ref<const std::string&>();
        bool top_level = open_objects.size() == 1;
        if (top_level) top_level_key = key;
        if (!open_objects.empty() && !open_objects.back().insert(key).second && !found) {
          found = true;
          duplicate_key = key;
          duplicate_owner = top_level ? "" : top_level_key;
        }
        break;
      }
      default:
        break;
    }
    return true;  // keep everything: validation happens on the finished object
  }
};

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

// Parses one tensor entry; `data_size` bounds the offsets.
TensorInfo parse_tensor_entry(const std::string& file, const std::string& name, const json& entry, uint64_t data_size) {
  auto fail = [&](const std::string& what) -> SafetensorsError { return SafetensorsError(file, name, what); };
  if (name.empty()) throw fail("a tensor has an empty name");
  if (!entry.is_object()) throw fail("entry is not a JSON object");
  for (const auto& field : entry.items()) {
    const std::string& key = field.key();
    if (key != "dtype" && key != "shape" && key != "data_offsets") throw fail("unknown field '" + key + "'");
  }

  TensorInfo info;
  info.name = name;

  // dtype
  auto dt = entry.find("dtype");
  if (dt == entry.end()) throw fail("missing field 'dtype'");
  if (!dt->is_string()) throw fail("'dtype' is not a string");
  if (!dtype_from_name(dt->get<std::string>(), &info.dtype)) throw fail("unknown dtype '" + dt->get<std::string>() + "'");

  // shape: non-negative integers. The element count is computed with an overflow flag instead of
  // trusting the product: a dimension of 2^40 must be an error message, not a wrapped-around number.
  auto sh = entry.find("shape");
  if (sh == entry.end()) throw fail("missing field 'shape'");
  if (!sh->is_array()) throw fail("'shape' is not an array");
  uint64_t numel = 1;
  bool has_zero = false, overflow = false;
  for (const auto& d : *sh) {
    if (!d.is_number_unsigned()) throw fail("'shape' has an entry that is not a non-negative integer: " + describe_json(d));
    uint64_t v = d.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) throw fail("'shape' entry " + describe_json(d) + " is too large");
    info.shape.push_back(static_cast<int64_t>(v));
    if (v == 0)
      has_zero = true;
    else if (numel > std::numeric_limits<uint64_t>::max() / v)
      overflow = true;
    else
      numel *= v;
  }
  if (has_zero) {  // an empty tensor: whatever the other dimensions, it holds no bytes
    numel = 0;
    overflow = false;
  }

  // data_offsets
  auto off = entry.find("data_offsets");
  if (off == entry.end()) throw fail("missing field 'data_offsets'");
  if (!off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned())
    throw fail("'data_offsets' is not [begin, end] with non-negative integers: " + describe_json(*off));
  info.begin = (*off)[0].get<uint64_t>();
  info.end = (*off)[1].get<uint64_t>();
  if (info.begin > info.end) throw fail("data_offsets begin " + std::to_string(info.begin) + " is after end " + std::to_string(info.end));
  if (info.end > data_size)
    throw fail("data_offsets end " + std::to_string(info.end) + " is beyond the data section (" + std::to_string(data_size) +
               " bytes; is the file truncated?)");

  // the byte range must hold exactly shape x dtype
  uint64_t span = info.end - info.begin;
  size_t elem = dtype_size(info.dtype);
  if (overflow || span % elem != 0 || numel != span / elem)
    throw fail("shape x dtype size does not match the " + std::to_string(span) + " bytes of its data_offsets");
  return info;
}

std::map<std::string, std::string> parse_metadata(const std::string& file, const json& meta) {
  std::map<std::string, std::string> out;
  if (meta.is_null()) return out;
  if (!meta.is_object()) throw SafetensorsError(file, "", "'__metadata__' is not a JSON object");
  for (const auto& kv : meta.items()) {
    if (!kv.value().is_string()) throw SafetensorsError(file, "", "'__metadata__' value of '" + kv.key() + "' is not a string");
    out[kv.key()] = kv.value().get<std::string>();
  }
  return out;
}

}  // namespace

SafetensorsHeader parse_safetensors_header(const uint8_t* bytes, uint64_t size, const std::string& file) {
  if (size < 8) throw SafetensorsError(file, "", "file is " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  uint64_t n = read_u64_le(bytes);
  if (n > size - 8)
    throw SafetensorsError(file, "",
                           "header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(size) +
                               " bytes; is the file truncated?)");
  if (n > kMaxHeaderSize) throw SafetensorsError(file, "", "header length " + std::to_string(n) + " exceeds 100 MB");

  SafetensorsHeader header;
  header.data_start = 8 + n;
  header.data_size = size - header.data_start;

  DuplicateKeyFinder dups;
  json root;
  try {
    const char* text = reinterpret_cast<const char*>(bytes + 8);
    root = json::parse(text, text + n, std::ref(dups));
  } catch (const json::exception& e) {
    throw SafetensorsError(file, "", std::string("header is not valid JSON: ") + e.what());
  }
  if (dups.found) {
    if (dups.duplicate_owner.empty()) throw SafetensorsError(file, dups.duplicate_key, "appears more than once in the header");
    throw SafetensorsError(file, dups.duplicate_owner, "field '" + dups.duplicate_key + "' appears more than once");
  }
  if (!root.is_object()) throw SafetensorsError(file, "", "header is not a JSON object");

  for (const auto& kv : root.items()) {
    if (kv.key() == "__metadata__") {
      header.metadata = parse_metadata(file, kv.value());
      continue;
    }
    header.tensors.push_back(parse_tensor_entry(file, kv.key(), kv.value(), header.data_size));
  }

  // The data section is the tensors back to back: sorted by offset, each starts where the previous
  // one ended, and together they cover the section exactly (the format forbids holes).
  std::sort(header.tensors.begin(), header.tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t expected = 0;
  const TensorInfo* prev = nullptr;
  for (const auto& t : header.tensors) {
    if (t.begin < expected) throw SafetensorsError(file, t.name, "data_offsets overlap tensor '" + prev->name + "'");
    if (t.begin > expected)
      throw SafetensorsError(file, t.name, "data_offsets leave a hole of " + std::to_string(t.begin - expected) + " bytes before it");
    expected = t.end;
    prev = &t;
  }
  if (expected != header.data_size)
    throw SafetensorsError(file, "", "data section has " + std::to_string(header.data_size - expected) + " bytes after the last tensor");
  return header;
}

// ----------------------------------------------------------------------------
// files

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SafetensorsError(path, "", std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw SafetensorsError(path, "", "not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    throw SafetensorsError(path, "", "file is " + std::to_string(size_) + " bytes, shorter than the 8-byte header length");
  }
  void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file alive
  if (map == MAP_FAILED) throw SafetensorsError(path, "", std::string("cannot mmap: ") + std::strerror(errno));
  bytes_ = static_cast<const uint8_t*>(map);
  try {
    header_ = parse_safetensors_header(bytes_, size_, path);
  } catch (...) {
    ::munmap(const_cast<uint8_t*>(bytes_), size_);
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (bytes_) ::munmap(const_cast<uint8_t*>(bytes_), size_);
}

// ----------------------------------------------------------------------------
// checkpoints

namespace {

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

Checkpoint::Checkpoint(const std::string& dir) {
  const std::string single = dir + "/model.safetensors";
  const std::string index = dir + "/model.safetensors.index.json";
  if (file_exists(single)) {
    add_file(single);
    return;
  }
  if (!file_exists(index)) throw RunnerError(ErrorCode::bad_model, dir + ": neither model.safetensors nor model.safetensors.index.json");

  // Sharded: {"weight_map": {tensor name: shard file name}}; the shards must hold what it says.
  json root;
  try {
    std::ifstream in(index);
    root = json::parse(in);
  } catch (const json::exception& e) {
    throw SafetensorsError(index, "", std::string("not valid JSON: ") + e.what());
  }
  auto wm = root.find("weight_map");
  if (!root.is_object() || wm == root.end() || !wm->is_object()) throw SafetensorsError(index, "", "no 'weight_map' object");
  std::map<std::string, std::string> wanted;  // tensor -> shard
  std::set<std::string> shards;
  for (const auto& kv : wm->items()) {
    if (!kv.value().is_string()) throw SafetensorsError(index, kv.key(), "shard name is not a string");
    std::string shard = kv.value().get<std::string>();
    if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..")
      throw SafetensorsError(index, kv.key(), "shard name '" + shard + "' is not a file name in the model folder");
    wanted[kv.key()] = shard;
    shards.insert(shard);
  }
  std::map<std::string, const SafetensorsFile*> by_shard;
  for (const auto& shard : shards) {
    files_.push_back(std::make_unique<SafetensorsFile>(dir + "/" + shard));
    by_shard[shard] = files_.back().get();
  }
  for (const auto& kv : wanted) {
    const SafetensorsFile* f = by_shard[kv.second];
    const TensorInfo* info = f->header().find(kv.first);
    if (!info) throw SafetensorsError(f->path(), kv.first, "listed in model.safetensors.index.json but not in this shard");
    entries_[kv.first] = Entry{f, info};
  }
}

void Checkpoint::add_file(const std::string& path) {
  files_.push_back(std::make_unique<SafetensorsFile>(path));
  const SafetensorsFile* f = files_.back().get();
  for (const auto& t : f->header().tensors) entries_[t.name] = Entry{f, &t};
}

const Checkpoint::Entry* Checkpoint::find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace bprof
