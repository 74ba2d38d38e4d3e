// Measurements for `bprof-runner bench` that need libtorch directly (bench_ops.cpp); the bench
// itself (cmd_bench.cpp) is torch-free and reaches the model through engine.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace bprof {

// FLOP/s of an n x n by n x n matrix multiply in `dtype` on `device`: the best of `repeats` timed
// runs after one warm-up, the same binary and thread count as the work it is compared with.
// `cancelled` is polled between runs (RunnerError(cancelled)).
double matmul_flops_per_second(const std::string& device, const std::string& dtype, int64_t n, int repeats,
                               const std::function<bool()>& cancelled);

// Peak resident memory of this process since the last reset_peak_memory() (Linux: VmHWM), and the
// reset itself (writes 5 to /proc/self/clear_refs). Bytes; 0 where the kernel does not say.
int64_t peak_resident_bytes();
int64_t resident_bytes();
void reset_peak_memory();

}  // namespace bprof
