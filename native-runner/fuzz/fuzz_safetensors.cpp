// libFuzzer harness for the safetensors header parser (torch-free); build, run, seeds: README.md
//   cmake -S native-runner -B native-runner/fuzz/build -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DBPROF_FUZZERS=ON
//   cmake --build native-runner/fuzz/build --target fuzz-safetensors
// Any input must end in a parsed header or a SafetensorsError; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "errors.h"
#include "safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    bprof::SafetensorsHeader header = bprof::parse_safetensors_header(data, size, "fuzz.safetensors");
    // a header that passed validation must describe bytes inside the buffer, exactly shape x dtype
    // of them (numel() is what the runner uses to size a tensor; it must not overflow)
    for (const auto& t : header.tensors) {
      if (t.begin > t.end || header.data_start + t.end > size) __builtin_trap();
      if (static_cast<uint64_t>(t.numel()) * bprof::dtype_size(t.dtype) != t.end - t.begin) __builtin_trap();
    }
  } catch (const bprof::SafetensorsError&) {
  }
  return 0;
}
