// Small helpers shared by the JSON readers (safetensors header, config.json, job file). Torch-free.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bprof {

// A short description of a JSON value for error messages: scalars as written, containers by
// type only. Never dump a container from untrusted input: dump() recurses, and a header of
// nested brackets ([[[[...) would overflow the stack.
inline std::string describe_json(const nlohmann::json& v) {
  if (v.is_structured()) return std::string("an ") + v.type_name();
  std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

}  // namespace bprof
