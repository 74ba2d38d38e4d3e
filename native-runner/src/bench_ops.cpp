#include <ATen/ops/mm.h>
#include <ATen/ops/randn.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "bench.h"
#include "errors.h"

namespace bprof {

namespace {

at::ScalarType scalar_type(const std::string& dtype) {
  return dtype == "bfloat16" ? at::kBFloat16 : dtype == "float16" ? at::kHalf : at::kFloat;
}

// A field of /proc/self/status in kB, as bytes.
int64_t status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream values(line.substr(field.size() + 1));
    int64_t kb = 0;
    values >> kb;
    return kb * 1024;
  }
  return 0;
}

}  // namespace

double matmul_flops_per_second(const std::string& device, const std::string& dtype, int64_t n, int repeats,
                               const std::function<bool()>& cancelled) {
  c10::InferenceMode guard;
  auto options = at::TensorOptions().dtype(scalar_type(dtype)).device(at::Device(device));
  at::Tensor a = at::randn({n, n}, options), b = at::randn({n, n}, options);
  at::mm(a, b).sum().item<double>();  // warm-up; item() waits for a GPU
  double best = 0;
  for (int r = 0; r < repeats; r++) {
    if (cancelled && cancelled()) throw RunnerError(ErrorCode::cancelled, "cancelled while measuring the matrix-multiply peak");
    const auto t0 = std::chrono::steady_clock::now();
    at::mm(a, b).sum().item<double>();
    std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - t0;
    best = std::max(best, 2.0 * static_cast<double>(n) * n * n / seconds.count());
  }
  return best;
}

int64_t peak_resident_bytes() { return status_bytes("VmHWM"); }
int64_t resident_bytes() { return status_bytes("VmRSS"); }

void reset_peak_memory() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
}

}  // namespace bprof
