// What an Engine holds, for the translation units that implement its parts (engine.cpp: loading
// and scoring; importance.cpp: gradients; ablation.cpp: in-place ablation). Includes libtorch.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "engine.h"
#include "llama.h"

namespace bprof {

struct Engine::Impl {
  std::unique_ptr<LlamaModel> model;
  at::Device device = at::kCPU;
};

}  // namespace bprof
