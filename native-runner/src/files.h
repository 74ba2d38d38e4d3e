// Result files are written whole or not at all: to a new NAME.<pid>.<n>.tmp in the same folder,
// created exclusively (never through a link), flushed to disk, then renamed over NAME (rename is
// atomic within a file system). Torch-free.
#pragma once

#include <string>

namespace bprof {

// Throws RunnerError: resources when the disk is full, bad_arguments when the folder is not writable
// or NAME is something other than a regular file (a link, a device, a FIFO).
void write_file_atomic(const std::string& path, const std::string& content);

// The whole file, or false when there is none. Throws RunnerError(bad_arguments) when it exists but
// cannot be read.
bool read_file_if_exists(const std::string& path, std::string& content);

// Creates `dir` (and parents) if needed and checks that it is writable; throws RunnerError(bad_arguments).
void prepare_output_dir(const std::string& dir);

// Removes `path` and everything under it, without following links; quietly does what it can (a
// scratch folder's cleanup must not fail the run). Not std::filesystem::remove_all: PyTorch's
// libtorch.so (2.11 wheels) exports its own copy of it, which the dynamic linker binds ahead of
// libstdc++'s and which calls a null pointer (a runner built against it crashed on an H200 host).
void remove_tree(const std::string& path);

}  // namespace bprof
