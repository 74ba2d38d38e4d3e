// End to end: the built bprof-runner on job files, checked through its events, exit codes and
// result files exactly as the TypeScript side will see them.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cpus.h"
#include "support.h"

#ifndef BPROF_RUNNER_PATH
#error "BPROF_RUNNER_PATH must name the built bprof-runner"
#endif

namespace bprof {
namespace {

using json = nlohmann::json;
using test::RunResult;
using test::TempDir;

json make_job(const std::string& model_dir, int n_items = 3) {
  json items = json::array();
  for (int i = 0; i < n_items; i++) {
    items.push_back({{"id", "q" + std::to_string(i)},
                     {"context", json::array({256, 72 + i % 100, 105, 32})},
                     {"choices", {json::array({65 + i % 100}), json::array({66, 67}), json::array({68, 69, 70 + i % 100})}}});
  }
  return {{"protocol", 1},
          {"subcommand", "score"},
          {"model", {{"path", model_dir}, {"dtype", "float32"}}},
          {"device", "cpu"},
          {"items", items}};
}

RunResult run_runner(const TempDir& dir, const json& job, const std::map<std::string, std::string>& env = {},
                     const std::function<void(const std::string&, int)>& on_line = nullptr) {
  test::write_file(dir.file("job.json"), job.dump());
  return test::run_process({BPROF_RUNNER_PATH, "score", "--job", dir.file("job.json"), "--out", dir.file("out"), "--threads", "1"}, env,
                           on_line);
}

const json& last_event(const RunResult& r) {
  static const json none;
  return r.events.empty() ? none : r.events.back();
}

// Every line of stdout is an event of PROTOCOL.md.
void expect_only_events(const RunResult& r) {
  for (const json& e : r.events) {
    ASSERT_TRUE(e.is_object()) << e.dump();
    ASSERT_TRUE(e.contains("type")) << e.dump();
  }
}

TEST(Cli, ScoresATinyModel) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  RunResult r = run_runner(dir, make_job(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  expect_only_events(r);

  const json& start = r.events.front();
  EXPECT_EQ(start["type"], "start");
  EXPECT_EQ(start["subcommand"], "score");
  EXPECT_EQ(start["device"], "cpu");
  EXPECT_EQ(start["threads"], 1);
  EXPECT_TRUE(start["runner_version"].is_string());

  bool saw_load = false, saw_result = false;
  for (const json& e : r.events) {
    if (e["type"] == "progress" && e["phase"] == "load" && e["done"] == e["total"]) saw_load = true;
    if (e["type"] == "result") {
      saw_result = true;
      EXPECT_EQ(e["file"], "scores.jsonl");
      EXPECT_EQ(e["items"], 3);
    }
  }
  EXPECT_TRUE(saw_load);
  EXPECT_TRUE(saw_result);
  EXPECT_EQ(last_event(r)["type"], "summary");
  EXPECT_EQ(last_event(r)["status"], "ok");
  EXPECT_TRUE(last_event(r)["seconds"].is_number());

  // one line per item, in job order
  std::istringstream lines(test::read_file(dir.file("out/scores.jsonl")));
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    json item = json::parse(line);
    EXPECT_EQ(item["id"], "q" + std::to_string(n));
    ASSERT_EQ(item["choices"].size(), 3u);
    const int expected_tokens[] = {1, 2, 3};
    for (int c = 0; c < 3; c++) {
      const json& choice = item["choices"][c];
      EXPECT_LT(choice["logprob"].get<double>(), 0.0);
      EXPECT_EQ(choice["tokens"], expected_tokens[c]);
      EXPECT_TRUE(choice["greedy"].is_boolean());
    }
    n++;
  }
  EXPECT_EQ(n, 3);
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/scores.jsonl.tmp")));
}

TEST(Cli, TruncatedSafetensorsIsBadSafetensorsNamingTheFile) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  std::string bytes = test::read_file(dir.file("model.safetensors"));
  test::write_file(dir.file("model.safetensors"), bytes.substr(0, bytes.size() / 2));
  RunResult r = run_runner(dir, make_job(dir.path()));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  expect_only_events(r);
  const json& e = last_event(r);
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["code"], "bad_safetensors");
  EXPECT_NE(e["message"].get<std::string>().find(dir.file("model.safetensors")), std::string::npos) << e.dump();
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/scores.jsonl")));
}

TEST(Cli, TokenOutsideTheVocabularyIsBadJob) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  json job = make_job(dir.path());
  job["items"][1]["choices"][2][0] = 300;
  RunResult r = run_runner(dir, job);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(last_event(r)["code"], "bad_job");
  std::string msg = last_event(r)["message"];
  EXPECT_NE(msg.find("'q1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("choices[2][0]"), std::string::npos) << msg;
}

TEST(Cli, EmptyContextIsBadJob) {
  TempDir dir;
  json job = make_job(dir.path());
  job["items"][0]["context"] = json::array();
  RunResult r = run_runner(dir, job);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(last_event(r)["code"], "bad_job");
  EXPECT_NE(last_event(r)["message"].get<std::string>().find("context"), std::string::npos);
}

TEST(Cli, OtherModelTypeIsBadModel) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  json config = test::tiny_llama_config({});
  config["model_type"] = "gpt2";
  test::write_file(dir.file("config.json"), config.dump());
  RunResult r = run_runner(dir, make_job(dir.path()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(last_event(r)["code"], "bad_model");
  EXPECT_NE(last_event(r)["message"].get<std::string>().find("gpt2"), std::string::npos);
}

TEST(Cli, MissingTensorIsBadModelNamingIt) {
  TempDir dir;
  test::Weights w = test::tiny_llama_weights({});
  w.erase("model.layers.1.mlp.up_proj.weight");
  std::vector<test::F32Tensor> tensors;
  for (const auto& kv : w) tensors.push_back(kv.second);
  test::write_file(dir.file("config.json"), test::tiny_llama_config({}).dump());
  test::write_file(dir.file("model.safetensors"), test::safetensors_bytes(tensors));
  RunResult r = run_runner(dir, make_job(dir.path()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(last_event(r)["code"], "bad_model");
  EXPECT_NE(last_event(r)["message"].get<std::string>().find("model.layers.1.mlp.up_proj.weight"), std::string::npos);
}

TEST(Cli, MissingGpuIsResources) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  json job = make_job(dir.path());
  job["device"] = "cuda:99";
  RunResult r = run_runner(dir, job);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(last_event(r)["code"], "resources");
}

TEST(Cli, GenerationItemsAreDecodedInJobOrder) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  json job = make_job(dir.path(), 2);
  job["items"].push_back({{"id", "gen"}, {"context", {256, 72, 105}}, {"generate", {{"max_tokens", 5}, {"stop", {{257}}}}}});
  job["items"].push_back(make_job(dir.path(), 1)["items"][0]);
  job["items"][3]["id"] = "last";
  RunResult r = run_runner(dir, job);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::istringstream lines(test::read_file(dir.file("out/scores.jsonl")));
  std::vector<json> rows;
  std::string line;
  while (std::getline(lines, line)) rows.push_back(json::parse(line));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2]["id"], "gen");
  ASSERT_TRUE(rows[2]["generated"].is_array());
  EXPECT_GE(rows[2]["generated"].size(), 1u);
  EXPECT_LE(rows[2]["generated"].size(), 5u);
  EXPECT_EQ(rows[2]["stopped"].get<bool>(), rows[2]["generated"].back() == 257);
  EXPECT_EQ(rows[3]["id"], "last");
  EXPECT_EQ(rows[3]["choices"].size(), 3u);

  json both = job;
  both["items"][2]["choices"] = {{65}};
  RunResult r2 = run_runner(dir, both);
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_NE(last_event(r2)["message"].get<std::string>().find("both 'choices' and 'generate'"), std::string::npos);
  json zero = job;
  zero["items"][2]["generate"]["max_tokens"] = 0;
  RunResult r3 = run_runner(dir, zero);
  EXPECT_EQ(r3.exit_code, 2);
  EXPECT_NE(last_event(r3)["message"].get<std::string>().find("generate.max_tokens"), std::string::npos);
}

TEST(Cli, BadArguments) {
  RunResult r = test::run_process({BPROF_RUNNER_PATH, "score", "--job"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(last_event(r)["code"], "bad_arguments");
  r = test::run_process({BPROF_RUNNER_PATH, "frobnicate", "--job", "x", "--out", "y"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(last_event(r)["code"], "bad_arguments");
  r = test::run_process({BPROF_RUNNER_PATH, "score", "--job", "x", "--out", "y", "--threads", "zero"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(last_event(r)["code"], "bad_arguments");
  EXPECT_EQ(r.events.size(), 1u);
}

TEST(Cli, Version) {
  RunResult r = test::run_process({BPROF_RUNNER_PATH, "--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("bprof-runner ", 0), 0u) << r.out;
}

// Without --threads the runner uses every core it may: its affinity under its cgroup's quota, not
// libtorch's default (1 with Debian's libtorch 1.13), for the intra-op pool the start event reports.
TEST(Cli, WithoutThreadsUsesTheCoresItMay) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  test::write_file(dir.file("job.json"), make_job(dir.path()).dump());
  const std::vector<std::string> argv = {BPROF_RUNNER_PATH, "score", "--job", dir.file("job.json"), "--out", dir.file("out")};
  RunResult r = test::run_process(argv);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const int cores = usable_cores();
  EXPECT_EQ(r.events.front()["threads"], cores);
  if (cores > 1) {
    EXPECT_GT(r.events.front()["threads"].get<int>(), 1);
  }

#if defined(__linux__)
  // pinned to one core (the child inherits this process's affinity), it runs one thread
  cpu_set_t saved, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &saved)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  RunResult pinned = test::run_process(argv);
  sched_setaffinity(0, sizeof saved, &saved);
  ASSERT_EQ(pinned.exit_code, 0) << pinned.out;
  EXPECT_EQ(pinned.events.front()["threads"], 1);
#endif
}

// A fake root with the files cgroup_cpu_limit reads.
void write_cgroup_root(const TempDir& dir, const std::string& cgroup, const std::string& mountinfo,
                       const std::map<std::string, std::string>& files) {
  std::filesystem::create_directories(dir.file("proc/self"));
  test::write_file(dir.file("proc/self/cgroup"), cgroup);
  test::write_file(dir.file("proc/self/mountinfo"), mountinfo);
  for (const auto& [name, content] : files) {
    std::filesystem::create_directories(std::filesystem::path(dir.file(name)).parent_path());
    test::write_file(dir.file(name), content);
  }
}

TEST(Cpus, CgroupV2QuotaIsTheLowestAlongThePath) {
  TempDir dir;
  write_cgroup_root(dir, "0::/user.slice/job\n", "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
                    {{"sys/fs/cgroup/user.slice/job/cpu.max", "max 100000\n"},
                     {"sys/fs/cgroup/user.slice/cpu.max", "150000 100000\n"},
                     {"sys/fs/cgroup/cpu.max", "400000 100000\n"}});
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(dir.path()), 1.5);
}

TEST(Cpus, CgroupV2WithoutQuotaIsNone) {
  TempDir dir;
  write_cgroup_root(dir, "0::/\n", "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", {{"sys/fs/cgroup/cpu.max", "max 100000\n"}});
  EXPECT_EQ(cgroup_cpu_limit(dir.path()), 0);
  TempDir empty;
  EXPECT_EQ(cgroup_cpu_limit(empty.path()), 0);
}

TEST(Cpus, CgroupV1CfsQuotaUnderTheMountsRoot) {
  TempDir dir;
  // a container's view: the hierarchy's /docker/abc mounted at /sys/fs/cgroup/cpu,cpuacct
  write_cgroup_root(dir, "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n",
                    "40 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
                    "41 31 0:30 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
                    {{"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "300000\n"},
                     {"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"},
                     {"sys/fs/cgroup/unified/cpu.max", "100000 100000\n"}});
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(dir.path()), 3.0);
  test::write_file(dir.file("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"), "-1\n");
  EXPECT_EQ(cgroup_cpu_limit(dir.path()), 0);
}

// SIGTERM mid-run: the runner stops at the next item boundary, reports `cancelled`, exits 130 and
// leaves no result file behind.
TEST(Cli, SigtermCancelsAtAnItemBoundary) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  bool signalled = false;
  RunResult r = run_runner(dir, make_job(dir.path(), 20000), {{"BPROF_BATCH_TOKENS", "1"}}, [&](const std::string& line, int pid) {
    if (!signalled && line.find("\"phase\":\"score\"") != std::string::npos) {
      ::kill(pid, SIGTERM);
      signalled = true;
    }
  });
  ASSERT_TRUE(signalled) << r.out;
  EXPECT_EQ(r.exit_code, 130) << r.out;
  EXPECT_EQ(last_event(r)["type"], "error");
  EXPECT_EQ(last_event(r)["code"], "cancelled");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/scores.jsonl")));
}

// The bench's FLOPs count the keys each layer's mask lets in: a Mistral whose window (8) is shorter
// than the importance sequences (32 tokens, 31 read) does less attention work than the same model
// with a window longer than them, by exactly the keys past the window: per layer and sequence,
// 1 + 2 + ... + 31 = 496 keys against 1 + ... + 8 + 23 x 8 = 220.
TEST(Cli, BenchFlopsCountOnlyTheKeysInsideASlidingWindow) {
  const auto importance_flops = [](int64_t window) {
    const json model = {{"model_type", "mistral"},  {"vocab_size", 256},        {"hidden_size", 32},
                        {"intermediate_size", 64},  {"num_hidden_layers", 2},   {"num_attention_heads", 4},
                        {"num_key_value_heads", 2}, {"sliding_window", window}, {"max_position_embeddings", 512}};
    TempDir dir;
    const json job = {{"protocol", 1},
                      {"subcommand", "bench"},
                      {"rows", {"importance"}},
                      {"scoring_model", model},
                      {"importance", {{"sequences", 2}, {"length", 32}, {"batch_size", 2}}}};
    test::write_file(dir.file("job.json"), job.dump());
    RunResult r =
        test::run_process({BPROF_RUNNER_PATH, "bench", "--job", dir.file("job.json"), "--out", dir.file("out"), "--threads", "1"});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return json::parse(test::read_file(dir.file("out/bench.json")))["importance"]["flops"].get<double>();
  };
  const double full = importance_flops(4096), windowed = importance_flops(8);
  // forward and the backward's second forward (x 2), 2 sequences, 2 layers, q k^T and p v (4 x q_dim 32 per key)
  EXPECT_DOUBLE_EQ(full - windowed, 2.0 * 2 * 2 * 4 * 32 * (496 - 220));
}

// SIGTERM in the middle of each row of a bench (sizes that would run for minutes): the bench polls
// between measurements and inside their loops, so it stops within a couple of seconds, reports
// `cancelled`, exits 130 and leaves neither bench.json nor its scratch models behind.
TEST(Cli, SigtermStopsABenchWithinSeconds) {
  const json tiny_model = {
      {"model_type", "llama"},  {"vocab_size", 256},        {"hidden_size", 32},        {"intermediate_size", 64},
      {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"max_position_embeddings", 512}};
  const std::map<std::string, json> rows = {
      {"matmul", {{"matmul", {{"n", 512}, {"repeats", 1000000}}}}},
      {"scoring", {{"scoring_model", tiny_model}, {"scoring", {{"items", 4000}, {"repeats", 1000}, {"items_per_batch", 4}}}}},
      {"importance", {{"scoring_model", tiny_model}, {"importance", {{"sequences", 100000}, {"length", 32}}}}},
      {"profile", {{"profile_model", tiny_model}, {"profile", {{"sequences", 100000}, {"length", 32}, {"k", {0.001, 0.01}}}}}},
  };
  for (const auto& [row, sizes] : rows) {
    TempDir dir;
    json job = {{"protocol", 1}, {"subcommand", "bench"}, {"rows", {row}}};
    job.update(sizes);
    test::write_file(dir.file("job.json"), job.dump());
    std::atomic<bool> signalled{false};
    std::chrono::steady_clock::time_point signalled_at;
    std::thread killer;
    RunResult r = test::run_process({BPROF_RUNNER_PATH, "bench", "--job", dir.file("job.json"), "--out", dir.file("out"), "--threads", "1"},
                                    {}, [&](const std::string& line, int pid) {
                                      if (killer.joinable() || line.find("\"type\":\"start\"") == std::string::npos) return;
                                      killer = std::thread([&, pid] {  // well inside the row: making the tiny model takes milliseconds
                                        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
                                        signalled_at = std::chrono::steady_clock::now();
                                        ::kill(pid, SIGTERM);
                                        signalled = true;
                                      });
                                    });
    const auto exited_at = std::chrono::steady_clock::now();
    if (killer.joinable()) killer.join();
    ASSERT_TRUE(signalled) << row << ": the bench ended before the signal\n" << r.out;
    EXPECT_EQ(r.exit_code, 130) << row << "\n" << r.out;
    EXPECT_EQ(last_event(r)["type"], "error") << row;
    EXPECT_EQ(last_event(r)["code"], "cancelled") << row;
    EXPECT_LT(std::chrono::duration<double>(exited_at - signalled_at).count(), 2.0) << row << ": too slow to stop";
    EXPECT_FALSE(std::filesystem::exists(dir.file("out/bench.json"))) << row;
    EXPECT_FALSE(std::filesystem::exists(dir.file("out/models"))) << row << ": scratch models left behind";
  }
}

}  // namespace
}  // namespace bprof
