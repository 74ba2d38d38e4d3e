// safetensors: header parsing and validation, memory-mapped files, sharded checkpoints.
//
// Layout of a file: 8 bytes little-endian N, then N bytes of JSON header, then the data section.
// The header maps tensor names to {dtype, shape, data_offsets=[begin,end]} (offsets relative to the
// data section) plus an optional "__metadata__" map of strings.
//
// Everything here is plain C++17 + nlohmann-json, no libtorch: the parser takes a byte buffer so a
// libFuzzer harness can call parse_safetensors_header() directly, and every check happens before
// any tensor data is touched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bprof {

// Element types of the safetensors format (the byte-sized ones; sub-byte types are rejected by name).
enum class DType { BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64 };

const char* dtype_name(DType dtype);
size_t dtype_size(DType dtype);
bool dtype_is_float(DType dtype);  // F16, BF16, F32, F64: the ones a model weight may have

struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets into the data section, begin <= end
  uint64_t end = 0;
  int64_t numel() const;
};

struct SafetensorsHeader {
  uint64_t data_start = 0;          // 8 + N: where the data section starts in the file
  uint64_t data_size = 0;           // file size - data_start
  std::vector<TensorInfo> tensors;  // sorted by begin offset (the order of the data section)
  std::map<std::string, std::string> metadata;
  const TensorInfo* find(const std::string& name) const;
};

// The format allows any header size; real headers are kilobytes. The reference implementation
// refuses more than 100 MB, and so do we: a corrupt length must not make us allocate gigabytes.
constexpr uint64_t kMaxHeaderSize = 100'000'000;

// Parses and validates the header of a safetensors file held in `bytes` (the whole file, `size`
// bytes; only the first 8 + N are read). `file` is only used in error messages.
// Throws SafetensorsError naming the file and, where there is one, the tensor.
SafetensorsHeader parse_safetensors_header(const uint8_t* bytes, uint64_t size, const std::string& file);

// A read-only memory map of one safetensors file with its validated header.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);  // throws SafetensorsError
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const SafetensorsHeader& header() const { return header_; }
  // Bytes of a tensor of this file's header: end - begin bytes, little-endian, possibly unaligned.
  const uint8_t* data(const TensorInfo& info) const { return bytes_ + header_.data_start + info.begin; }

 private:
  std::string path_;
  const uint8_t* bytes_ = nullptr;
  uint64_t size_ = 0;
  SafetensorsHeader header_;
};

// The weights of a Hugging Face folder: model.safetensors, or the shards listed by
// model.safetensors.index.json. Tensors are looked up by name across all files.
class Checkpoint {
 public:
  struct Entry {
    const SafetensorsFile* file;
    const TensorInfo* info;
  };
  // Throws RunnerError(bad_model) when the folder has no weights, SafetensorsError for a bad file.
  explicit Checkpoint(const std::string& dir);

  const Entry* find(const std::string& name) const;
  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  void add_file(const std::string& path);
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Entry> entries_;
};

}  // namespace bprof
