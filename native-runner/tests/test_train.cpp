// `train` and `info`: the safetensors writer, the learning-rate schedule, AdamW and gradient
// clipping against hand-computed values, and end-to-end runs of the built runner (training lowers
// the loss, the result loads and scores better, runs are reproducible to the byte, bad jobs fail
// naming the field, info counts parameters).
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "config.h"
#include "errors.h"
#include "files.h"
#include "llama.h"
#include "loss.h"
#include "safetensors.h"
#include "safetensors_writer.h"
#include "support.h"
#include "train.h"

#ifndef BPROF_RUNNER_PATH
#error "BPROF_RUNNER_PATH must name the built bprof-runner"
#endif

namespace bprof {
namespace {

using json = nlohmann::json;
using test::RunResult;
using test::TempDir;

// ----------------------------------------------------------------------------
// scratch folders: in a binary linked against libtorch, where PyTorch's own std::filesystem
// copies once crashed the cleanup (files.h)

TEST(Files, RemoveTreeRemovesNestedFoldersButNotWhatALinkPointsTo) {
  TempDir dir;
  const std::string kept = dir.file("kept.txt");
  test::write_file(kept, "outside");
  std::filesystem::create_directories(dir.file("scratch/a/b"));
  test::write_file(dir.file("scratch/a/b/model.safetensors"), "weights");
  test::write_file(dir.file("scratch/top.json"), "{}");
  std::filesystem::create_symlink(kept, dir.file("scratch/a/link"));
  remove_tree(dir.file("scratch"));
  EXPECT_FALSE(std::filesystem::exists(dir.file("scratch")));
  EXPECT_TRUE(std::filesystem::exists(kept)) << "a link's target is not removed";
  remove_tree(dir.file("never-there"));  // nothing to remove is not an error
}

// ----------------------------------------------------------------------------
// safetensors writer

std::string bytes_of(const std::vector<float>& v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)); }

TEST(SafetensorsWriter, RoundTripsThroughTheParserAndCheckpoint) {
  std::vector<SafetensorsEntry> entries = {
      {"model.b.weight", DType::F32, {2, 3}, bytes_of({1, 2, 3, 4, 5, 6})},
      {"model.a.bias", DType::BF16, {3}, std::string("\x80\x3f\x00\x40\x40\x40", 6)},  // 1, 2, 3
      {"c", DType::I64, {2}, std::string("\x07\0\0\0\0\0\0\0\x09\0\0\0\0\0\0\0", 16)},
  };
  const std::string file = serialize_safetensors(entries, {{"format", "pt"}});

  uint64_t n = 0;
  for (int i = 0; i < 8; i++) n |= static_cast<uint64_t>(static_cast<uint8_t>(file[i])) << (8 * i);
  EXPECT_EQ((8 + n) % 8, 0u) << "the data section starts 8-byte aligned";
  const std::string header = file.substr(8, n);
  EXPECT_EQ(header.find_last_not_of(' '), header.rfind('}')) << "padding is spaces after the JSON";
  // names sorted in the header and in the data section
  EXPECT_LT(header.find("\"c\""), header.find("\"model.a.bias\""));
  EXPECT_LT(header.find("\"model.a.bias\""), header.find("\"model.b.weight\""));

  SafetensorsHeader parsed = parse_safetensors_header(reinterpret_cast<const uint8_t*>(file.data()), file.size(), "mem");
  ASSERT_EQ(parsed.tensors.size(), 3u);
  EXPECT_EQ(parsed.tensors[0].name, "c");
  EXPECT_EQ(parsed.tensors[1].name, "model.a.bias");
  EXPECT_EQ(parsed.tensors[2].name, "model.b.weight");
  EXPECT_EQ(parsed.metadata.at("format"), "pt");
  for (const SafetensorsEntry& e : entries) {
    const TensorInfo* info = parsed.find(e.name);
    ASSERT_NE(info, nullptr) << e.name;
    EXPECT_EQ(info->dtype, e.dtype);
    EXPECT_EQ(info->shape, e.shape);
    EXPECT_EQ(file.substr(parsed.data_start + info->begin, info->end - info->begin), e.bytes) << e.name;
  }

  TempDir dir;
  test::write_file(dir.file("model.safetensors"), file);
  Checkpoint checkpoint(dir.path());
  const Checkpoint::Entry* b = checkpoint.find("model.b.weight");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b->file->data(*b->info)), 24), entries[0].bytes);

  // no tensors at all is still a valid file
  const std::string empty = serialize_safetensors({});
  EXPECT_EQ(parse_safetensors_header(reinterpret_cast<const uint8_t*>(empty.data()), empty.size(), "mem").tensors.size(), 0u);
}

TEST(SafetensorsWriter, RefusesInconsistentEntries) {
  EXPECT_THROW(serialize_safetensors({{"a", DType::F32, {2}, bytes_of({1})}}), std::invalid_argument);
  EXPECT_THROW(serialize_safetensors({{"a", DType::F32, {1}, bytes_of({1})}, {"a", DType::F32, {1}, bytes_of({2})}}),
               std::invalid_argument);
  EXPECT_THROW(serialize_safetensors({{"", DType::F32, {1}, bytes_of({1})}}), std::invalid_argument);
}

// ----------------------------------------------------------------------------
// schedule, optimizer, clipping

TEST(Schedule, LinearWarmupThenCosineToMinLr) {
  TrainOptions o;
  o.steps = 110;
  o.warmup_steps = 10;
  o.lr = 1e-3;
  o.min_lr = 1e-4;
  EXPECT_DOUBLE_EQ(cosine_lr(o, 0), 0.0);   // start of the warmup
  EXPECT_DOUBLE_EQ(cosine_lr(o, 1), 1e-4);  // first step: lr / warmup
  EXPECT_DOUBLE_EQ(cosine_lr(o, 5), 5e-4);
  EXPECT_DOUBLE_EQ(cosine_lr(o, 10), 1e-3);                 // warmup end: the peak
  EXPECT_NEAR(cosine_lr(o, 60), (1e-3 + 1e-4) / 2, 1e-15);  // half way through the decay
  EXPECT_NEAR(cosine_lr(o, 35), 1e-4 + 9e-4 * 0.5 * (1 + std::cos(3.14159265358979323846 / 4)), 1e-15);
  EXPECT_DOUBLE_EQ(cosine_lr(o, 110), 1e-4);  // end: min_lr

  o.warmup_steps = 0;
  o.min_lr = 0;
  EXPECT_DOUBLE_EQ(cosine_lr(o, 0), 1e-3);
  EXPECT_NEAR(cosine_lr(o, 55), 5e-4, 1e-15);
  EXPECT_NEAR(cosine_lr(o, 110), 0.0, 1e-15);
}

at::Tensor param(std::vector<float> values) {
  at::Tensor t = at::tensor(values);
  t.set_requires_grad(true);
  return t;
}

TEST(AdamW, MatchesHandComputedSteps) {
  at::Tensor w = param({1.0f, -2.0f});  // decayed
  at::Tensor n = param({1.0f, -2.0f});  // not decayed (a norm)
  AdamWOptions o;
  o.beta1 = 0.9;
  o.beta2 = 0.95;
  o.eps = 1e-8;
  o.weight_decay = 0.1;
  AdamW opt({w, n}, {true, false}, o);

  // step 1, lr 0.1, g = (0.5, 0.1). m = 0.1 g, v = 0.05 g^2; bias-corrected m/sqrt(v) = sign(g),
  // so each weight moves by lr against its gradient; the decayed one first shrinks by 1 - lr * wd.
  w.mutable_grad() = at::tensor(std::vector<float>{0.5f, 0.1f});
  n.mutable_grad() = at::tensor(std::vector<float>{0.5f, 0.1f});
  opt.step(0.1);
  EXPECT_NEAR(w[0].item<double>(), 1.0 * 0.99 - 0.1, 1e-6);   // 0.89
  EXPECT_NEAR(w[1].item<double>(), -2.0 * 0.99 - 0.1, 1e-6);  // -2.08
  EXPECT_NEAR(n[0].item<double>(), 0.9, 1e-6);
  EXPECT_NEAR(n[1].item<double>(), -2.1, 1e-6);
  EXPECT_EQ(opt.steps_taken(), 1);

  // step 2, lr 0.05, g = (-1, 0.1), by the formula in double
  opt.zero_grad();
  EXPECT_FALSE(w.grad().defined());
  w.mutable_grad() = at::tensor(std::vector<float>{-1.0f, 0.1f});
  opt.step(0.05);
  const double g1[2] = {0.5, 0.1}, g2[2] = {-1.0, 0.1}, p1[2] = {0.89, -2.08};
  for (int i = 0; i < 2; i++) {
    double m = 0.9 * (0.1 * g1[i]) + 0.1 * g2[i];
    double v = 0.95 * (0.05 * g1[i] * g1[i]) + 0.05 * g2[i] * g2[i];
    double m_hat = m / (1 - 0.9 * 0.9), v_hat = v / (1 - 0.95 * 0.95);
    double expected = p1[i] * (1 - 0.05 * 0.1) - 0.05 * m_hat / (std::sqrt(v_hat) + 1e-8);
    EXPECT_NEAR(w[i].item<double>(), expected, 1e-6) << i;
  }
  EXPECT_NEAR(n[0].item<double>(), 0.9, 1e-6) << "no gradient: left alone";
}

TEST(ClipGradNorm, ScalesAllGradientsByOneFactor) {
  at::Tensor a = param({0, 0}), b = param({0});
  a.mutable_grad() = at::tensor(std::vector<float>{3.0f, 0.0f});
  b.mutable_grad() = at::tensor(std::vector<float>{4.0f});
  EXPECT_NEAR(clip_grad_norm({a, b}, 1.0), 5.0, 1e-6);
  EXPECT_NEAR(a.grad()[0].item<double>(), 0.6, 1e-6);
  EXPECT_NEAR(b.grad()[0].item<double>(), 0.8, 1e-6);
  EXPECT_NEAR(clip_grad_norm({a, b}, 10.0), 1.0, 1e-5);  // under the limit: unchanged
  EXPECT_NEAR(b.grad()[0].item<double>(), 0.8, 1e-6);
}

// ----------------------------------------------------------------------------
// end to end

json tiny_config(bool tied = false) {
  test::TinyLlamaSpec spec;  // hidden 32, 2 layers, 4 heads / 2 kv heads, byte vocabulary of 258
  spec.tie_word_embeddings = tied;
  json config = test::tiny_llama_config(spec);
  config.erase("torch_dtype");
  return config;
}

// BOS, then a short pattern repeated; one sequence per starting offset
const std::string kPattern = "abcdefgh";
std::vector<int64_t> pattern_tokens(size_t offset, size_t length) {
  std::vector<int64_t> tokens = {256};
  for (size_t i = 0; i < length; i++) tokens.push_back(static_cast<unsigned char>(kPattern[(offset + i) % kPattern.size()]));
  return tokens;
}

json train_job(int64_t steps, bool tied = false) {
  json sequences = json::array();
  for (size_t offset = 0; offset < kPattern.size(); offset++) sequences.push_back(pattern_tokens(offset, 24 + offset % 3));
  return {
      {"protocol", 1},
      {"subcommand", "train"},
      {"config", tiny_config(tied)},
      {"device", "cpu"},
      {"sequences", sequences},
      {"train",
       {{"steps", steps}, {"batch_size", 4}, {"lr", 1e-2}, {"min_lr", 1e-3}, {"warmup_steps", std::min<int64_t>(10, steps)}, {"seed", 7}}}};
}

RunResult run_runner(const std::string& subcommand, const std::string& job_file, const json& job, const std::string& out,
                     const std::function<void(const std::string&, int)>& on_line = nullptr) {
  test::write_file(job_file, job.dump());
  return test::run_process({BPROF_RUNNER_PATH, subcommand, "--job", job_file, "--out", out, "--threads", "1"}, {}, on_line);
}

const json& last_event(const RunResult& r) {
  static const json none;
  return r.events.empty() ? none : r.events.back();
}

double score_of(const TempDir& dir, const std::string& model_dir, const std::vector<int64_t>& context, const std::vector<int64_t>& choice) {
  json job = {{"protocol", 1},
              {"subcommand", "score"},
              {"model", {{"path", model_dir}}},
              {"device", "cpu"},
              {"items", {{{"id", "q"}, {"context", context}, {"choices", {choice}}}}}};
  const std::string out = dir.file("score-out");
  RunResult r = run_runner("score", dir.file("score.json"), job, out);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return json::parse(test::read_file(out + "/scores.jsonl"))["choices"][0]["logprob"].get<double>();
}

TEST(Train, LowersTheLossAndTheResultScoresThePatternBetter) {
  TempDir dir;
  const std::string trained = dir.file("trained"), again = dir.file("again"), initial = dir.file("initial");
  RunResult r = run_runner("train", dir.file("job.json"), train_job(150), trained);
  ASSERT_EQ(r.exit_code, 0) << r.out;

  // events: start, progress with the loss, one result per file, summary
  EXPECT_EQ(r.events.front()["type"], "start");
  EXPECT_EQ(r.events.front()["subcommand"], "train");
  EXPECT_EQ(r.events.front()["threads"], 1);
  bool saw_loss = false;
  std::set<std::string> results;
  for (const json& e : r.events) {
    if (e["type"] == "progress" && e["phase"] == "train" && e["done"] == 150) {
      EXPECT_EQ(e["total"], 150);
      EXPECT_TRUE(e["loss"].is_number());
      saw_loss = true;
    }
    if (e["type"] == "result") results.insert(e["file"].get<std::string>());
  }
  EXPECT_TRUE(saw_loss) << r.out;
  EXPECT_EQ(results, (std::set<std::string>{"model.safetensors", "config.json", "train.json"}));
  EXPECT_EQ(last_event(r)["type"], "summary");

  // the loss curve
  json log = json::parse(test::read_file(trained + "/train.json"));
  ASSERT_EQ(log["loss"].size(), 150u);
  const double first = log["loss"][0], last = log["loss"][149];
  EXPECT_NEAR(first, std::log(258.0), 0.5) << "initial weights are small: the first loss is near log(V)";
  EXPECT_LT(last, 0.5 * first) << r.out;
  EXPECT_EQ(log["parameters"], 35104);

  // config.json: the given config with torch_dtype float32; the folder loads as any checkpoint
  json config = json::parse(test::read_file(trained + "/config.json"));
  EXPECT_EQ(config["torch_dtype"], "float32");
  config.erase("torch_dtype");
  EXPECT_EQ(config, tiny_config());
  {
    ModelConfig mc = load_model_config(trained);
    Checkpoint checkpoint(trained);
    std::vector<std::string> warnings;
    LoadOptions options;
    options.warning = [&](const std::string& w) { warnings.push_back(w); };
    LlamaWeights weights = load_llama_weights(mc, checkpoint, options);
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    EXPECT_NE(checkpoint.find("lm_head.weight"), nullptr);
    for (const auto& kv : checkpoint.entries()) EXPECT_EQ(kv.second.info->dtype, DType::F32) << kv.first;
    EXPECT_NE(weights.norm.sum().item<double>(), 32.0) << "the final norm was trained (it starts at ones)";
  }

  // the same job again: the same bytes
  RunResult r2 = run_runner("train", dir.file("job.json"), train_job(150), again);
  ASSERT_EQ(r2.exit_code, 0) << r2.out;
  EXPECT_TRUE(test::read_file(trained + "/model.safetensors") == test::read_file(again + "/model.safetensors"));
  EXPECT_EQ(test::read_file(trained + "/config.json"), test::read_file(again + "/config.json"));
  EXPECT_EQ(test::read_file(trained + "/train.json"), test::read_file(again + "/train.json"));

  // steps 0: the initialized model the training started from
  RunResult r0 = run_runner("train", dir.file("job0.json"), train_job(0), initial);
  ASSERT_EQ(r0.exit_code, 0) << r0.out;
  EXPECT_FALSE(test::read_file(initial + "/model.safetensors") == test::read_file(trained + "/model.safetensors"));

  // the real `score` subcommand: the pattern's continuation is far more likely after training
  const std::vector<int64_t> context = pattern_tokens(0, 13);  // BOS "abcdefghabcde"
  const std::vector<int64_t> continuation = {'f', 'g', 'h', 'a'};
  const double before = score_of(dir, initial, context, continuation);
  const double after = score_of(dir, trained, context, continuation);
  EXPECT_GT(after, before + 4.0) << "before " << before << ", after " << after;
}

TEST(Loss, PromptWeightScalesThePromptsPredictionsAgainstTheFloat64Reference) {
  TempDir dir;
  const test::TinyLlamaSpec spec;
  const test::Weights weights = test::write_tiny_llama(dir.path(), spec);
  ModelConfig config = load_model_config(dir.path());
  Checkpoint checkpoint(dir.path());
  LlamaModel model(config, load_llama_weights(config, checkpoint, LoadOptions{}));

  const std::vector<std::vector<int64_t>> sequences = {{256, 72, 105, 33, 10, 65, 58, 32, 121},
                                                       {256, 111, 107, 10, 65, 58, 32, 110, 111, 257}};
  const std::vector<const std::vector<int64_t>*> rows = {&sequences[0], &sequences[1]};
  const std::vector<int64_t> prompt_lengths = {7, 3};
  for (double prompt_weight : {0.0, 0.25, 1.0}) {
    double weighted_sum = 0, weight_sum = 0, plain_sum = 0, predictions = 0;
    for (size_t r = 0; r < sequences.size(); r++) {
      const auto logprobs = test::reference_logprobs(spec, weights, sequences[r]);
      for (size_t j = 1; j < sequences[r].size(); j++) {
        const double ce = -logprobs[j - 1][static_cast<size_t>(sequences[r][j])];
        const double w = static_cast<int64_t>(j) < prompt_lengths[r] ? prompt_weight : 1.0;
        weighted_sum += w * ce;
        weight_sum += w;
        plain_sum += ce;
        predictions += 1;
      }
    }
    const double expected = weighted_sum / weight_sum;
    const double got = weighted_next_token_loss(model, rows, prompt_lengths, prompt_weight, at::kCPU).item<double>();
    EXPECT_NEAR(got, expected, 1e-5) << "prompt_weight " << prompt_weight;
    if (prompt_weight == 1.0) {
      EXPECT_NEAR(mean_next_token_loss(model, rows, at::kCPU).item<double>(), plain_sum / predictions, 1e-5);
    }
  }
}

TEST(Train, PromptWeightZeroLearnsOnlyTheAnswers) {
  // Every sequence: BOS, a pattern run (the prompt), then one answer byte that the run's first
  // letter decides. With the prompt's predictions at weight 0 the model learns the answers and
  // not the runs; with weight 1 it learns both.
  TempDir dir;
  json job = train_job(150);
  json sequences = json::array(), prompt_lengths = json::array();
  for (size_t offset = 0; offset < kPattern.size(); offset++) {
    std::vector<int64_t> tokens = pattern_tokens(offset, 12);
    tokens.push_back('0' + static_cast<int64_t>(offset));
    prompt_lengths.push_back(tokens.size() - 1);
    sequences.push_back(tokens);
  }
  job["sequences"] = sequences;
  job["prompt_lengths"] = prompt_lengths;
  job["train"]["prompt_weight"] = 0.0;
  const std::string answers_only = dir.file("answers-only"), everything = dir.file("everything");
  RunResult r = run_runner("train", dir.file("job.json"), job, answers_only);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  job["train"]["prompt_weight"] = 1.0;
  RunResult r1 = run_runner("train", dir.file("job1.json"), job, everything);
  ASSERT_EQ(r1.exit_code, 0) << r1.out;

  const std::vector<int64_t> prompt = pattern_tokens(2, 12);  // BOS "cdefghabcdef"
  const double run_weighted = score_of(dir, answers_only, pattern_tokens(2, 6), {'i', 'j'} /* not the pattern */) -
                              score_of(dir, answers_only, pattern_tokens(2, 6), {'a', 'b'});
  const double run_plain =
      score_of(dir, everything, pattern_tokens(2, 6), {'i', 'j'}) - score_of(dir, everything, pattern_tokens(2, 6), {'a', 'b'});
  EXPECT_GT(run_weighted, run_plain + 4.0) << "the weight-0 model prefers the run's true continuation far less";
  EXPECT_GT(score_of(dir, answers_only, prompt, {'2'}), std::log(0.5)) << "the answer is learned";
}

TEST(Train, TiedEmbeddingsAreSavedOnce) {
  TempDir dir;
  RunResult r = run_runner("train", dir.file("job.json"), train_job(3, /*tied=*/true), dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Checkpoint checkpoint(dir.file("out"));
  EXPECT_EQ(checkpoint.find("lm_head.weight"), nullptr);
  EXPECT_EQ(checkpoint.entries().size(), 2u + 2u * 9u);
  ModelConfig mc = load_model_config(dir.file("out"));
  EXPECT_TRUE(mc.tie_word_embeddings);
  LlamaWeights weights = load_llama_weights(mc, checkpoint, LoadOptions{});
  EXPECT_EQ(weights.lm_head.data_ptr(), weights.embed_tokens.data_ptr());
}

// A family from the table trains as Llama does: Gemma 2's four norms a layer are in the checkpoint,
// initialized to zero (its RMSNorm scales by 1 + weight: the identity, as ones are for Llama), and
// the loss falls.
TEST(Train, Gemma2StartsFromIdentityNormsAndLearns) {
  TempDir dir;
  auto gemma_job = [](int64_t steps) {
    json job = train_job(steps);
    json& config = job["config"];
    config["model_type"] = "gemma2";
    config["head_dim"] = 8;
    config["sliding_window"] = 4;
    config.erase("hidden_act");
    config.erase("tie_word_embeddings");  // Gemma2Config ties by default
    return job;
  };
  RunResult r0 = run_runner("train", dir.file("job0.json"), gemma_job(0), dir.file("initial"));
  ASSERT_EQ(r0.exit_code, 0) << r0.out;
  Checkpoint initial(dir.file("initial"));
  EXPECT_EQ(initial.find("lm_head.weight"), nullptr);
  int norms = 0;
  for (const auto& kv : initial.entries()) {
    if (kv.first.find("norm.weight") == std::string::npos) continue;
    norms++;
    std::vector<float> values(static_cast<size_t>(kv.second.info->shape.at(0)));
    std::memcpy(values.data(), kv.second.file->data(*kv.second.info), values.size() * sizeof(float));  // the mapping may be unaligned
    for (float v : values) EXPECT_EQ(v, 0.0f) << kv.first;
  }
  EXPECT_EQ(norms, 2 * 4 + 1);

  RunResult r = run_runner("train", dir.file("job.json"), gemma_job(60), dir.file("trained"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json log = json::parse(test::read_file(dir.file("trained") + "/train.json"));
  const double first = log["loss"][0], last = log["loss"][59];
  EXPECT_LT(last, 0.6 * first) << r.out;
  EXPECT_TRUE(load_model_config(dir.file("trained")).tie_word_embeddings);
}

TEST(Train, SigtermStopsBetweenStepsAndWritesNothing) {
  TempDir dir;
  bool signalled = false;
  RunResult r = run_runner("train", dir.file("job.json"), train_job(1000000), dir.file("out"), [&](const std::string& line, int pid) {
    if (!signalled && line.find("\"loss\"") != std::string::npos) {
      ::kill(pid, SIGTERM);
      signalled = true;
    }
  });
  ASSERT_TRUE(signalled) << r.out;
  EXPECT_EQ(r.exit_code, 130) << r.out;
  EXPECT_EQ(last_event(r)["code"], "cancelled");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/model.safetensors")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/config.json")));
}

// ----------------------------------------------------------------------------
// bad jobs

// parse_train_job on the job with one change; returns the bad_job message ("" when it parsed).
std::string parse_error(const std::function<void(json&)>& edit) {
  json job = train_job(10);
  edit(job);
  try {
    parse_train_job(job.dump(), "job.json");
  } catch (const RunnerError& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_job) << e.what();
    return e.what();
  }
  return "";
}

TEST(TrainJob, BadFieldsAreBadJobNamingTheField) {
  EXPECT_EQ(parse_error([](json&) {}), "");
  struct Case {
    std::function<void(json&)> edit;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["train"].erase("steps"); }, "'train.steps' is missing"},
      {[](json& j) { j["train"].erase("lr"); }, "'train.lr' is missing"},
      {[](json& j) { j["train"].erase("seed"); }, "'train.seed' is missing"},
      {[](json& j) { j["train"].erase("warmup_steps"); }, "'train.warmup_steps' is missing"},
      {[](json& j) { j["train"].erase("batch_size"); }, "'train.batch_size' is missing"},
      {[](json& j) { j["train"]["steps"] = -1; }, "'train.steps'"},
      {[](json& j) { j["train"]["steps"] = 1.5; }, "'train.steps'"},
      {[](json& j) { j["train"]["batch_size"] = 0; }, "'train.batch_size'"},
      {[](json& j) { j["train"]["lr"] = 0; }, "'train.lr'"},
      {[](json& j) { j["train"]["lr"] = "0.1"; }, "'train.lr'"},
      {[](json& j) { j["train"]["min_lr"] = 1; }, "'train.min_lr'"},
      {[](json& j) { j["train"]["warmup_steps"] = 11; }, "'train.warmup_steps'"},
      {[](json& j) { j["train"]["weight_decay"] = -0.1; }, "'train.weight_decay'"},
      {[](json& j) { j["train"]["betas"] = {0.9}; }, "'train.betas'"},
      {[](json& j) {
         j["train"]["betas"] = {0.9, 1.0};
       },
       "'train.betas[1]'"},
      {[](json& j) { j["train"]["eps"] = 0; }, "'train.eps'"},
      {[](json& j) { j["train"]["grad_clip"] = -1; }, "'train.grad_clip'"},
      {[](json& j) { j["train"]["learning_rate"] = 0.1; }, "'train.learning_rate' is not a training option"},
      {[](json& j) { j.erase("train"); }, "'train' is missing"},
      {[](json& j) { j["sequences"][2] = {256}; }, "'sequences[2]' has 1 token(s)"},
      {[](json& j) { j["sequences"][1][3] = 258; }, "'sequences[1][3]' = 258"},
      {[](json& j) { j["sequences"][0][0] = -1; }, "'sequences[0][0]' = -1"},
      {[](json& j) { j["sequences"] = json::array(); }, "'sequences'"},
      {[](json& j) { j.erase("config"); }, "'config'"},
      {[](json& j) { j["config"].erase("hidden_size"); }, "'config': 'hidden_size' is missing"},
      {[](json& j) { j["config"]["model_type"] = "gpt2"; }, "'model_type' is 'gpt2'"},
      {[](json& j) { j["config"]["initializer_range"] = 0; }, "'config.initializer_range'"},
      {[](json& j) { j["protocol"] = 2; }, "'protocol'"},
      {[](json& j) { j["subcommand"] = "score"; }, "'subcommand'"},
      {[](json& j) { j["device"] = 3; }, "'device'"},
      {[](json& j) { j["train"]["prompt_weight"] = 1.5; }, "'train.prompt_weight'"},
      {[](json& j) { j["train"]["prompt_weight"] = 0.5; }, "'train.prompt_weight' needs 'prompt_lengths'"},
      {[](json& j) {
         j["prompt_lengths"] = {1, 2};
       },
       "'prompt_lengths' must be an array with one integer per sequence (8)"},
      {[](json& j) {
         j["prompt_lengths"] = json::array();
         for (size_t s = 0; s < j["sequences"].size(); s++) j["prompt_lengths"].push_back(1);
         j["prompt_lengths"][5] = j["sequences"][5].size();
       },
       "'prompt_lengths[5]' = 27 must be an integer from 0 to 26 (sequences[5] has 27 tokens)"},
  };
  for (const Case& c : cases) {
    std::string message = parse_error(c.edit);
    EXPECT_NE(message.find(c.field), std::string::npos) << "expected " << c.field << " in: " << message;
  }
}

TEST(TrainJob, BadJobExitsTwoBeforeStart) {
  TempDir dir;
  json job = train_job(10);
  job["train"]["lr"] = -1;
  RunResult r = run_runner("train", dir.file("job.json"), job, dir.file("out"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  ASSERT_EQ(r.events.size(), 1u) << r.out;
  EXPECT_EQ(last_event(r)["code"], "bad_job");
  EXPECT_NE(last_event(r)["message"].get<std::string>().find("'train.lr'"), std::string::npos);
}

// ----------------------------------------------------------------------------
// info

TEST(Info, SummarizesATinyModel) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  json job = {{"protocol", 1}, {"subcommand", "info"}, {"model", {{"path", dir.path()}, {"dtype", "float32"}}}, {"device", "cpu"}};
  RunResult r = run_runner("info", dir.file("job.json"), job, dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(last_event(r)["type"], "summary");
  for (const json& e : r.events) EXPECT_NE(e["type"], "warning") << e.dump();

  // by hand: V 258, H 32, I 64, 2 layers, 4 heads and 2 kv heads of 8
  //   embed and lm_head 258 * 32 = 8256 each; per layer: q 32*32 + k 16*32 + v 16*32 + o 32*32 = 3072,
  //   gate, up, down 3 * 64*32 = 6144, two norms 64: 9280; final norm 32
  const int64_t mlp = 2 * 6144, total = 2 * 8256 + 2 * 9280 + 32;
  ASSERT_EQ(total, 35104);
  json info = json::parse(test::read_file(dir.file("out/info.json")));
  EXPECT_EQ(info["model_type"], "llama");
  EXPECT_EQ(info["layers"], 2);
  EXPECT_EQ(info["hidden_size"], 32);
  EXPECT_EQ(info["intermediate_size"], 64);
  EXPECT_EQ(info["attention_heads"], 4);
  EXPECT_EQ(info["key_value_heads"], 2);
  EXPECT_EQ(info["head_dim"], 8);
  EXPECT_EQ(info["vocab_size"], 258);
  EXPECT_EQ(info["parameters"], total);
  EXPECT_EQ(info["mlp_parameters"], mlp);
  EXPECT_NEAR(info["mlp_share"].get<double>(), static_cast<double>(mlp) / total, 1e-12);
  EXPECT_EQ(info["dtype"], "float32");
  EXPECT_EQ(info["checkpoint_dtypes"], json::array({"F32"}));
  EXPECT_EQ(info["checkpoint_bytes"], total * 4);
  EXPECT_EQ(info["device"]["name"], "cpu");
  EXPECT_EQ(info["device"]["usable"], true);
  EXPECT_EQ(info["devices"][0]["name"], "cpu");
  EXPECT_EQ(info["devices"].size(), 1u + info["cuda_device_count"].get<size_t>());
  EXPECT_TRUE(info["libtorch"].is_string());

  // tied: the embedding matrix counted once
  ModelConfig config = load_model_config(dir.path());
  config.tie_word_embeddings = true;
  EXPECT_EQ(count_parameters(config).total, total - 8256);
  EXPECT_EQ(count_parameters(config).mlp, mlp);
}

TEST(Info, MissingTensorIsBadModelNamingIt) {
  TempDir dir;
  test::Weights weights = test::write_tiny_llama(dir.path());
  std::vector<test::F32Tensor> tensors;
  for (const auto& kv : weights)
    if (kv.first != "model.layers.1.mlp.up_proj.weight") tensors.push_back(kv.second);
  test::write_file(dir.file("model.safetensors"), test::safetensors_bytes(tensors));
  json job = {{"protocol", 1}, {"subcommand", "info"}, {"model", {{"path", dir.path()}}}};
  RunResult r = run_runner("info", dir.file("job.json"), job, dir.file("out"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(last_event(r)["code"], "bad_model");
  EXPECT_NE(last_event(r)["message"].get<std::string>().find("model.layers.1.mlp.up_proj.weight"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/info.json")));
}

}  // namespace
}  // namespace bprof
