// `bprof-runner info` (PROTOCOL.md): what a model is (sizes, parameter counts, the MLP share) and
// what this machine can run it on, from config.json and the safetensors headers alone: no weight is
// read. Includes only ATen/Context.h of libtorch (device count), which compiles in about a second.
#include <ATen/Context.h>
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "commands.h"
#include "errors.h"
#include "files.h"
#include "json_util.h"
#include "safetensors.h"
#include "train.h"

namespace bprof {

namespace {

using json = nlohmann::ordered_json;

struct InfoJob {
  std::string model_path;
  std::string dtype = "float32";
  std::string device = "cpu";
};

RunnerError bad_job(const std::string& source, const std::string& what) { return RunnerError(ErrorCode::bad_job, source + ": " + what); }

InfoJob parse_info_job(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RunnerError(ErrorCode::bad_job, path + ": cannot read the job file");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::exception& e) {
    throw bad_job(path, std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object()) throw bad_job(path, "not a JSON object");
  auto protocol = root.find("protocol");
  if (protocol == root.end()) throw bad_job(path, "'protocol' is missing");
  if (!protocol->is_number_integer() || protocol->get<int64_t>() != kProtocolVersion)
    throw bad_job(path, "'protocol' is " + describe_json(*protocol) + ", this runner speaks protocol " + std::to_string(kProtocolVersion));
  auto sub = root.find("subcommand");
  if (sub == root.end() || !sub->is_string()) throw bad_job(path, "'subcommand' must be a string");
  if (*sub != "info") throw bad_job(path, "'subcommand' is " + describe_json(*sub) + ", expected \"info\"");

  InfoJob job;
  auto model = root.find("model");
  if (model == root.end() || !model->is_object()) throw bad_job(path, "'model' must be an object");
  auto model_path = model->find("path");
  if (model_path == model->end() || !model_path->is_string() || model_path->get<std::string>().empty())
    throw bad_job(path, "'model.path' must be a non-empty string");
  job.model_path = model_path->get<std::string>();
  auto dtype = model->find("dtype");
  if (dtype != model->end() && !dtype->is_null()) {
    if (!dtype->is_string()) throw bad_job(path, "'model.dtype' must be a string");
    job.dtype = dtype->get<std::string>();
    if (job.dtype != "float32" && job.dtype != "bfloat16" && job.dtype != "float16")
      throw bad_job(path, "'model.dtype' is '" + job.dtype + "' (expected float32, bfloat16 or float16)");
  }
  auto device = root.find("device");
  if (device != root.end() && !device->is_null()) {
    if (!device->is_string() || device->get<std::string>().empty()) throw bad_job(path, "'device' must be a non-empty string");
    job.device = device->get<std::string>();
  }
  return job;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Checks that the checkpoint holds every tensor the config calls for, with its shape and a float
// dtype, the same checks as loading (llama.cpp) without reading any weight. Returns the dtypes on
// disk and the bytes of the tensors used; warns about tensors the model would not use.
std::set<std::string> check_checkpoint(const ModelConfig& config, const Checkpoint& checkpoint, EventWriter& events, uint64_t& bytes) {
  std::set<std::string> dtypes, used;
  bytes = 0;
  for (const TensorSpec& spec : llama_tensor_specs(config)) {
    const Checkpoint::Entry* entry = checkpoint.find(spec.name);
    if (!entry) throw RunnerError(ErrorCode::bad_model, "tensor '" + spec.name + "' is missing from the checkpoint");
    const TensorInfo& info = *entry->info;
    if (info.shape != spec.shape)
      throw RunnerError(ErrorCode::bad_model, entry->file->path() + ": tensor '" + spec.name + "' has shape " + shape_str(info.shape) +
                                                  ", expected " + shape_str(spec.shape));
    if (!dtype_is_float(info.dtype))
      throw RunnerError(ErrorCode::bad_model, entry->file->path() + ": tensor '" + spec.name + "' has dtype " + dtype_name(info.dtype) +
                                                  ", expected F32, F16 or BF16");
    dtypes.insert(dtype_name(info.dtype));
    bytes += info.end - info.begin;
    used.insert(spec.name);
  }
  if (config.tie_word_embeddings) used.insert("lm_head.weight");  // ignored when tied, as Hugging Face does
  std::vector<std::string> unused;
  const std::string rope_buffer = "rotary_emb.inv_freq";
  for (const auto& kv : checkpoint.entries()) {
    const std::string& name = kv.first;
    bool is_rope_buffer =
        name.size() >= rope_buffer.size() && name.compare(name.size() - rope_buffer.size(), rope_buffer.size(), rope_buffer) == 0;
    if (!used.count(name) && !is_rope_buffer) unused.push_back(name);
  }
  if (!unused.empty()) {
    std::string msg = std::to_string(unused.size()) + " tensor(s) in the checkpoint are not used by the model: ";
    for (size_t i = 0; i < unused.size() && i < 5; i++) msg += (i ? ", " : "") + unused[i];
    if (unused.size() > 5) msg += ", ...";
    events.warning(msg);
  }
  return dtypes;
}

}  // namespace

// Names of the CUDA devices libtorch sees. libtorch 1.13's CPU-side API has the count but no
// names, so they come from the CUDA driver (libcuda, a C ABI that has not changed since CUDA 2),
// opened at run time: nothing to link, and no CUDA headers at build time. The driver honours
// CUDA_VISIBLE_DEVICES as the runtime does, so ordinal i is cuda:i. An empty name where the driver
// cannot say.
std::vector<std::string> cuda_device_names(int64_t count) {
  std::vector<std::string> names(static_cast<size_t>(count));
  if (count == 0) return names;
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return names;
  using CuInit = int (*)(unsigned int);
  using CuDeviceGet = int (*)(int*, int);
  using CuDeviceGetName = int (*)(char*, int, int);
  auto cu_init = reinterpret_cast<CuInit>(::dlsym(lib, "cuInit"));
  auto cu_device_get = reinterpret_cast<CuDeviceGet>(::dlsym(lib, "cuDeviceGet"));
  auto cu_device_get_name = reinterpret_cast<CuDeviceGetName>(::dlsym(lib, "cuDeviceGetName"));
  if (cu_init && cu_device_get && cu_device_get_name && cu_init(0) == 0) {
    for (int64_t i = 0; i < count; i++) {
      int device = 0;
      char name[256] = {0};
      if (cu_device_get(&device, static_cast<int>(i)) == 0 && cu_device_get_name(name, sizeof(name) - 1, device) == 0)
        names[static_cast<size_t>(i)] = name;
    }
  }
  ::dlclose(lib);  // libtorch keeps its own reference when it uses CUDA
  return names;
}

int run_info(const Command& command) {
  const auto t0 = std::chrono::steady_clock::now();
  InfoJob job = parse_info_job(command.args.job);
  const int threads = set_compute_threads(command.args.threads);
  command.events.start(command.args.subcommand, kRunnerVersion, job.device, threads);
  prepare_output_dir(command.args.out);

  const ModelConfig config = load_model_config(job.model_path);
  uint64_t checkpoint_bytes = 0;
  std::set<std::string> dtypes;
  {
    Checkpoint checkpoint(job.model_path);  // headers only: validated, memory-mapped, not read
    dtypes = check_checkpoint(config, checkpoint, command.events, checkpoint_bytes);
  }
  const ParameterCount count = count_parameters(config);

  // the job's device and dtype: reported, not required (info is how a caller finds out)
  json device = {{"name", job.device}, {"usable", true}};
  try {
    check_compute_target(job.device, job.dtype);
  } catch (const RunnerError& e) {
    device["usable"] = false;
    device["problem"] = e.what();
  }
  const int64_t cuda_count = cuda_device_count();
  json devices = json::array({{{"name", "cpu"}, {"type", "cpu"}}});
  const std::vector<std::string> names = cuda_device_names(cuda_count);
  for (int64_t i = 0; i < cuda_count; i++) {
    json d = {{"name", "cuda:" + std::to_string(i)}, {"type", "cuda"}};
    d["description"] = names[static_cast<size_t>(i)].empty() ? json(nullptr) : json(names[static_cast<size_t>(i)]);
    devices.push_back(d);
  }

  json info = {
      {"model_type", config.model_type},
      {"layers", config.num_hidden_layers},
      {"hidden_size", config.hidden_size},
      {"intermediate_size", config.intermediate_size},
      {"attention_heads", config.num_attention_heads},
      {"key_value_heads", config.num_key_value_heads},
      {"head_dim", config.head_dim},
      {"vocab_size", config.vocab_size},
      {"tie_word_embeddings", config.tie_word_embeddings},
      {"parameters", count.total},
      {"mlp_parameters", count.mlp},
      {"mlp_share", count.total > 0 ? static_cast<double>(count.mlp) / static_cast<double>(count.total) : 0.0},
      {"dtype", job.dtype},
      {"checkpoint_dtypes", dtypes},
      {"checkpoint_bytes", checkpoint_bytes},
      {"device", device},
      {"devices", devices},
      {"cuda_device_count", cuda_count},
      {"libtorch", libtorch_version()},
      {"runner_version", kRunnerVersion},
  };
  write_file_atomic(command.args.out + "/info.json", info.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  command.events.result("info.json", 1);
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
  command.events.summary(elapsed.count());
  return 0;
}

}  // namespace bprof
