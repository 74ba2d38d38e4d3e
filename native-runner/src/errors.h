// Typed errors of the runner. Every failure the user can cause maps to one of the stable error
// codes of PROTOCOL.md, so the CLI turns an exception into exactly one `error` event and exit code.
// Torch-free on purpose: the parsers that throw these are fuzzed without libtorch.
#pragma once

#include <stdexcept>
#include <string>

namespace bprof {

enum class ErrorCode {
  bad_arguments,
  bad_job,
  bad_model,
  bad_safetensors,
  resources,
  cancelled,
  internal,
};

inline const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::bad_arguments:
      return "bad_arguments";
    case ErrorCode::bad_job:
      return "bad_job";
    case ErrorCode::bad_model:
      return "bad_model";
    case ErrorCode::bad_safetensors:
      return "bad_safetensors";
    case ErrorCode::resources:
      return "resources";
    case ErrorCode::cancelled:
      return "cancelled";
    case ErrorCode::internal:
      return "internal";
  }
  return "internal";
}

// Exit codes of PROTOCOL.md: 2 for anything the input got wrong, 3 for the machine, 130 for a signal.
inline int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::bad_arguments:
    case ErrorCode::bad_job:
    case ErrorCode::bad_model:
    case ErrorCode::bad_safetensors:
      return 2;
    case ErrorCode::resources:
      return 3;
    case ErrorCode::cancelled:
      return 130;
    case ErrorCode::internal:
      return 1;
  }
  return 1;
}

class RunnerError : public std::runtime_error {
 public:
  RunnerError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// A safetensors file whose header or data does not add up. `file` and `tensor` are kept apart from
// the message so that tests (and later the TypeScript side) need not parse prose.
class SafetensorsError : public RunnerError {
 public:
  SafetensorsError(const std::string& file, const std::string& tensor, const std::string& what)
      : RunnerError(ErrorCode::bad_safetensors, compose(file, tensor, what)), file_(file), tensor_(tensor) {}
  const std::string& file() const { return file_; }
  const std::string& tensor() const { return tensor_; }

 private:
  static std::string compose(const std::string& file, const std::string& tensor, const std::string& what) {
    std::string msg = file + ": ";
    if (!tensor.empty()) msg += "tensor '" + tensor + "': ";
    return msg + what;
  }
  std::string file_;
  std::string tensor_;
};

}  // namespace bprof
