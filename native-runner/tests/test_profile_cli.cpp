// `bprof-runner profile` end to end, through its events and files as the TypeScript side sees
// them: counts, an independent check of what a variant zeroed, determinism, resume after a kill,
// and the bad jobs it refuses.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "ranking.h"
#include "support.h"

#ifndef BPROF_RUNNER_PATH
#error "BPROF_RUNNER_PATH must name the built bprof-runner"
#endif

namespace bprof {
namespace {

using json = nlohmann::json;
using test::RunResult;
using test::TempDir;

json benchmark_items(int n) {
  json items = json::array();
  for (int i = 0; i < n; i++)
    items.push_back({{"id", "b/" + std::to_string(i)},
                     {"context", json::array({256, 72 + i % 40, 105, 32 + i % 7})},
                     {"choices", {json::array({65 + i % 20}), json::array({66, 67}), json::array({68, 69, 70 + i % 9})}}});
  return items;
}

json ability(const std::string& id, int salt) {
  json sequences = json::array();
  for (int s = 0; s < 6; s++) {
    json seq = json::array({256});
    for (int t = 0; t < 6 + s; t++) seq.push_back(40 + (t * salt + s * 3) % 80);
    sequences.push_back(seq);
  }
  return {{"id", id}, {"sequences", sequences}};
}

json profile_job(const std::string& model_dir) {
  return {{"protocol", 1},
          {"subcommand", "profile"},
          {"model", {{"path", model_dir}, {"dtype", "float32"}}},
          {"device", "cpu"},
          {"items", benchmark_items(5)},
          {"abilities", {ability("quant", 5), ability("temporal", 11)}},
          {"ablation", {{"k", {0.001, 0.01, 0.05}}, {"selections", {"top", "bottom", "random"}}, {"batch_size", 4}, {"seed", 7}}}};
}

RunResult run_profile(const std::string& job_file, const std::string& out,
                      const std::function<void(const std::string&, int)>& on_line = nullptr) {
  return test::run_process({BPROF_RUNNER_PATH, "profile", "--job", job_file, "--out", out, "--threads", "1"}, {}, on_line);
}

std::vector<json> events_of(const RunResult& r, const std::string& type) {
  std::vector<json> out;
  for (const json& e : r.events)
    if (e["type"] == type) out.push_back(e);
  return out;
}

std::map<std::string, std::string> result_files(const std::string& out) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(out))
    if (entry.is_regular_file()) files[std::filesystem::relative(entry.path(), out).string()] = test::read_file(entry.path().string());
  return files;
}

int64_t parameter_count(const test::Weights& weights) {
  int64_t total = 0;
  for (const auto& kv : weights) total += static_cast<int64_t>(kv.second.values.size());
  return total;
}

TEST(Profile, RunsEveryVariantWithExactCountsAndAManifest) {
  TempDir dir;
  test::Weights weights = test::write_tiny_llama(dir.path());
  test::write_file(dir.file("job.json"), profile_job(dir.path()).dump());
  RunResult r = run_profile(dir.file("job.json"), dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.events.back()["type"], "summary");

  const int64_t p = parameter_count(weights);
  const json manifest = json::parse(test::read_file(dir.file("out/profile.json")));
  EXPECT_EQ(manifest["parameters"], p);
  EXPECT_EQ(manifest["candidates"]["total"], 2 * 3 * 32 * 64);
  // 2 abilities x (top, bottom) x 3 k + random x 3 k
  ASSERT_EQ(manifest["variants"].size(), 15u);
  std::vector<json> variant_events = events_of(r, "variant");
  ASSERT_EQ(variant_events.size(), 15u);
  for (const json& v : manifest["variants"]) {
    EXPECT_EQ(v["n"], parameters_for_k(v["k"].get<double>(), p)) << v.dump();
    EXPECT_TRUE(std::filesystem::exists(dir.file("out/" + v["file"].get<std::string>()))) << v.dump();
    if (v["selection"] == "random") {
      EXPECT_TRUE(v["ability"].is_null());
      EXPECT_FALSE(v.contains("lowering"));
    } else {
      EXPECT_GE(v["lowering"].get<int64_t>(), 0) << v.dump();
      EXPECT_LE(v["lowering"].get<int64_t>(), v["n"].get<int64_t>()) << v.dump();
    }
  }
  for (const json& e : variant_events) EXPECT_FALSE(e["resumed"].get<bool>());
  // importance progress names its ability
  bool saw_importance = false;
  for (const json& e : events_of(r, "progress"))
    if (e["phase"] == "importance") saw_importance = saw_importance || e["ability"] == "temporal";
  EXPECT_TRUE(saw_importance);

  // ranking files hold the largest n, variants at smaller k use their prefix
  const std::string ranking = test::read_file(dir.file("out/rankings/quant.top.bin"));
  EXPECT_EQ(static_cast<int64_t>(ranking.size()), 8 * parameters_for_k(0.05, p));

  // overlap: per k, a symmetric matrix with n on the diagonal
  ASSERT_EQ(manifest["overlap"].size(), 3u);
  const json& widest = manifest["overlap"][2];
  EXPECT_EQ(widest["abilities"], json::array({"quant", "temporal"}));
  EXPECT_EQ(widest["intersections"][0][0], widest["n"]);
  EXPECT_EQ(widest["intersections"][0][1], widest["intersections"][1][0]);
  EXPECT_LE(widest["intersections"][0][1].get<int64_t>(), widest["n"].get<int64_t>());
}

// `method: signed` ranks by r = -theta * g where the paper ranks by |r|, so the paper's top n is
// always inside signed's top n and bottom n together, and neither method's top equals the other's.
// The manifest counts, per variant, the zeroed weights of negative r (zeroing them lowers the
// ability's loss): none in signed's top sets, all in its bottom sets, some in the paper's top sets.
TEST(Profile, SignedRankingsSplitThePapersTopSetBySign) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  auto rankings_of = [&](const std::string& method) {
    json job = profile_job(dir.path());
    job["ablation"]["method"] = method;
    job["ablation"]["selections"] = {"top", "bottom"};
    test::write_file(dir.file(method + ".json"), job.dump());
    RunResult r = run_profile(dir.file(method + ".json"), dir.file(method));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return std::make_pair(ranking_from_bytes(test::read_file(dir.file(method + "/rankings/quant.top.bin")), "top"),
                          ranking_from_bytes(test::read_file(dir.file(method + "/rankings/quant.bottom.bin")), "bottom"));
  };
  auto lowering_of = [&](const std::string& method, const std::string& selection) {
    std::vector<std::pair<int64_t, int64_t>> counts;  // (lowering, n) per k
    const json manifest = json::parse(test::read_file(dir.file(method + "/profile.json")));
    for (const json& v : manifest["variants"])
      if (v["ability"] == "quant" && v["selection"] == selection) counts.emplace_back(v["lowering"].get<int64_t>(), v["n"].get<int64_t>());
    EXPECT_EQ(counts.size(), 3u) << method << " " << selection;
    return counts;
  };
  const auto [paper_top, paper_bottom] = rankings_of("paper");
  const auto [signed_top, signed_bottom] = rankings_of("signed");
  for (const auto& [lowering, n] : lowering_of("signed", "top")) EXPECT_EQ(lowering, 0) << n;
  for (const auto& [lowering, n] : lowering_of("signed", "bottom")) EXPECT_EQ(lowering, n);
  const auto paper_widest = lowering_of("paper", "top").back();
  EXPECT_GT(paper_widest.first, 0);
  EXPECT_LT(paper_widest.first, paper_widest.second);
  ASSERT_EQ(paper_top.size(), signed_top.size());
  EXPECT_NE(paper_top, signed_top);
  for (size_t n : {size_t{1}, size_t{10}, paper_top.size()}) {
    std::set<int64_t> either(signed_top.begin(), signed_top.begin() + static_cast<std::ptrdiff_t>(n));
    either.insert(signed_bottom.begin(), signed_bottom.begin() + static_cast<std::ptrdiff_t>(n));
    for (size_t i = 0; i < n; i++) EXPECT_TRUE(either.count(paper_top[i])) << "n=" << n << " paper_top[" << i << "]";
  }
}

// Both rules in one job: one importance pass per ability, and per rule exactly the rankings,
// variants, counts and stability a job of that rule alone gives (files named by the rule); one
// random control; the overlap per rule. A finished folder resumes to the same manifest.
TEST(Profile, TwoRulesShareOneImportancePassAndEachMatchesItsOwnRun) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  json job = profile_job(dir.path());
  job["ablation"]["selections"] = {"top", "top_chunked", "bottom", "random"};
  job["ablation"]["stability"] = true;
  auto run = [&](const std::string& name, const json& method) {
    job["ablation"]["method"] = method;
    test::write_file(dir.file(name + ".json"), job.dump());
    RunResult r = run_profile(dir.file(name + ".json"), dir.file(name));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r;
  };
  run("paper", "paper");
  run("signed", "signed");
  const RunResult both = run("both", json::array({"paper", "signed"}));

  int importance_passes = 0;
  for (const json& e : events_of(both, "progress"))
    if (e["phase"] == "importance" && e["done"] == e["total"]) importance_passes++;
  EXPECT_EQ(importance_passes, 2) << "one pass per ability, not per rule";

  // "quant.top.bin" in a job of one rule is "quant.<rule>.top.bin" in a job of both
  auto with_rule = [](const std::string& file, const std::string& rule) {
    const size_t dot = file.find('.') + 1;
    return file.substr(0, dot) + rule + "." + file.substr(dot);
  };
  for (const std::string rule : {"paper", "signed"}) {
    for (const std::string file : {"quant.top.bin", "temporal.bottom.bin", "quant.top_chunked.k1.bin", "quant.lowering.json"})
      EXPECT_EQ(test::read_file(dir.file(rule + "/rankings/" + file)), test::read_file(dir.file("both/rankings/" + with_rule(file, rule))))
          << rule << " " << file;
    EXPECT_EQ(test::read_file(dir.file(rule + "/variants/temporal.top.k2.jsonl")),
              test::read_file(dir.file("both/variants/" + with_rule("temporal.top.k2.jsonl", rule))))
        << rule;
  }
  EXPECT_EQ(test::read_file(dir.file("paper/variants/random.k1.jsonl")), test::read_file(dir.file("both/variants/random.k1.jsonl")));

  const json manifest = json::parse(test::read_file(dir.file("both/profile.json")));
  auto of_rule = [](const json& list, const std::string& rule) {
    json out = json::array();
    for (json entry : list)
      if (entry["method"] == rule) {
        entry.erase("method");
        out.push_back(entry);
      }
    return out;
  };
  for (const std::string rule : {"paper", "signed"}) {
    const json alone = json::parse(test::read_file(dir.file(rule + "/profile.json")));
    json variants = json::array();
    for (json v : manifest["variants"]) {
      if (v["method"] != rule && !v["method"].is_null()) continue;
      v.erase("method");
      const std::string file = v["file"];
      if (!v["ability"].is_null()) v["file"] = std::string(file).replace(file.find("." + rule + "."), rule.size() + 1, "");
      variants.push_back(v);
    }
    json alone_variants = alone["variants"];
    for (json& v : alone_variants) v.erase("method");
    EXPECT_EQ(variants, alone_variants) << rule;
    EXPECT_EQ(of_rule(manifest["overlap"], rule), of_rule(alone["overlap"], rule)) << rule;
    EXPECT_EQ(of_rule(manifest["stability"], rule), of_rule(alone["stability"], rule)) << rule;
    EXPECT_EQ(of_rule(manifest["overlap"], rule).size(), 3u) << rule;
  }
  EXPECT_EQ(manifest["variants"].size(), 2u * 2u * 3u * 3u + 3u);  // rules x abilities x (top, chunked, bottom) x k + random

  RunResult again = run_profile(dir.file("both.json"), dir.file("both"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(json::parse(test::read_file(dir.file("both/profile.json"))), manifest);
  const std::vector<json> progress = events_of(again, "progress");
  EXPECT_TRUE(std::none_of(progress.begin(), progress.end(), [](const json& e) { return e["phase"] == "score"; }))
      << "a finished folder scores nothing again";
}

// On a GPU the rankings are made where r is (device_ranking.h) rather than on the host: the same
// files, byte for byte, for two rules over two candidate sets, top, bottom and random.
// BPROF_RANK_ON_DEVICE takes that way on the CPU.
TEST(Profile, RankingWhereRIsWritesTheHostsFiles) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  json job = profile_job(dir.path());
  job["ablation"]["method"] = {"paper", "signed"};
  job["ablation"]["candidates"] = {"mlp", "all"};
  test::write_file(dir.file("job.json"), job.dump());
  const RunResult host = run_profile(dir.file("job.json"), dir.file("host"));
  ASSERT_EQ(host.exit_code, 0) << host.out;
  const RunResult where =
      test::run_process({BPROF_RUNNER_PATH, "profile", "--job", dir.file("job.json"), "--out", dir.file("where"), "--threads", "1"},
                        {{"BPROF_RANK_ON_DEVICE", "1"}});
  ASSERT_EQ(where.exit_code, 0) << where.out;
  std::map<std::string, std::string> a = result_files(dir.file("host")), b = result_files(dir.file("where"));
  size_t rankings = 0;
  for (const auto& [file, bytes] : a)
    if (file.rfind("rankings/", 0) == 0 || file.rfind("variants/", 0) == 0) {
      EXPECT_EQ(bytes, b[file]) << file;
      rankings += file.rfind("rankings/", 0) == 0;
    }
  EXPECT_GE(rankings, 2u * 2u * 2u * 2u) << "abilities x rules x sets x (top, bottom)";
  json manifest_a = json::parse(a["profile.json"]), manifest_b = json::parse(b["profile.json"]);
  EXPECT_EQ(manifest_a["variants"], manifest_b["variants"]);
  EXPECT_EQ(manifest_a["overlap"], manifest_b["overlap"]);
}

// top_chunked, the released code's chunked selection: on this model's 12,288 candidates there is
// one chunk, so each k's set is the exact top of its own size, ceil(n / N * N) (n or n + 1), and
// holds the exact top-n whether or not `top` itself is selected; a finished folder resumes from
// the saved counts alone.
TEST(Profile, ChunkedTopSetsAreSavedPerKAndComparedWithTheExactTop) {
  TempDir dir;
  test::Weights weights = test::write_tiny_llama(dir.path());
  const int64_t p = parameter_count(weights);
  auto run = [&](const std::string& name, const json& selections) {
    json job = profile_job(dir.path());
    job["ablation"]["selections"] = selections;
    test::write_file(dir.file(name + ".json"), job.dump());
    RunResult r = run_profile(dir.file(name + ".json"), dir.file(name));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r;
  };
  run("alone", {"top_chunked", "random"});
  run("beside", {"top", "top_chunked"});
  const auto top = ranking_from_bytes(test::read_file(dir.file("beside/rankings/quant.top.bin")), "top");
  for (const std::string name : {"alone", "beside"}) {
    const json manifest = json::parse(test::read_file(dir.file(name + "/profile.json")));
    int chunked = 0;
    for (const json& v : manifest["variants"]) {
      if (v["selection"] != "top_chunked") continue;
      chunked++;
      const int64_t top_n = parameters_for_k(v["k"].get<double>(), p);
      const int64_t n = v["n"].get<int64_t>();
      EXPECT_EQ(v["top_n"], top_n) << v.dump();
      EXPECT_TRUE(n == top_n || n == top_n + 1) << v.dump();
      EXPECT_EQ(v["shared_with_top"], top_n) << v.dump();
      EXPECT_GE(v["lowering"].get<int64_t>(), 0);
      EXPECT_LE(v["lowering"].get<int64_t>(), n);
      if (v["ability"] != "quant") continue;
      const std::string k_index = v["file"].get<std::string>().substr(v["file"].get<std::string>().rfind(".k") + 2, 1);
      const auto set = ranking_from_bytes(test::read_file(dir.file(name + "/rankings/quant.top_chunked.k" + k_index + ".bin")), "set");
      EXPECT_EQ(set, std::vector<int64_t>(top.begin(), top.begin() + n)) << name << " " << v.dump();
    }
    EXPECT_EQ(chunked, 6) << name;  // 2 abilities x 3 k
  }
  const std::string first_manifest = test::read_file(dir.file("alone/profile.json"));
  RunResult again = run_profile(dir.file("alone.json"), dir.file("alone"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  for (const json& e : events_of(again, "variant")) EXPECT_TRUE(e["resumed"].get<bool>());
  for (const json& e : events_of(again, "progress")) EXPECT_NE(e["phase"], "importance");
  EXPECT_EQ(test::read_file(dir.file("alone/profile.json")), first_manifest);
}

// `stability`: each ability's top n ranked from two seeded halves of its sequences (3 and 3 here),
// counted per k in the manifest; the whole importance, and so every ranking and variant, is the
// same as without it.
TEST(Profile, StabilityComparesTheTopSetsOfTwoHalvesWithoutChangingTheRankings) {
  TempDir dir;
  test::Weights weights = test::write_tiny_llama(dir.path());
  const int64_t p = parameter_count(weights);
  json job = profile_job(dir.path());
  job["ablation"]["selections"] = {"top"};
  test::write_file(dir.file("plain.json"), job.dump());
  ASSERT_EQ(run_profile(dir.file("plain.json"), dir.file("plain")).exit_code, 0);
  job["ablation"]["stability"] = true;
  test::write_file(dir.file("halves.json"), job.dump());
  RunResult r = run_profile(dir.file("halves.json"), dir.file("halves"));
  ASSERT_EQ(r.exit_code, 0) << r.out;

  EXPECT_EQ(test::read_file(dir.file("plain/rankings/quant.top.bin")), test::read_file(dir.file("halves/rankings/quant.top.bin")));
  EXPECT_EQ(test::read_file(dir.file("plain/variants/temporal.top.k2.jsonl")),
            test::read_file(dir.file("halves/variants/temporal.top.k2.jsonl")));
  EXPECT_FALSE(json::parse(test::read_file(dir.file("plain/profile.json"))).contains("stability"));
  const json manifest = json::parse(test::read_file(dir.file("halves/profile.json")));
  ASSERT_EQ(manifest["stability"].size(), 2u);
  for (const json& s : manifest["stability"]) {
    EXPECT_EQ(s["halves"], json::array({3, 3})) << s.dump();
    EXPECT_EQ(s["n"][2], parameters_for_k(0.05, p));
    ASSERT_EQ(s["shared"].size(), 3u);
    int64_t previous = 0;
    for (size_t i = 0; i < 3; i++) {
      const int64_t n = parameters_for_k(job["ablation"]["k"][i].get<double>(), p), shared = s["shared"][i].get<int64_t>();
      EXPECT_GE(shared, previous);  // the sets grow with k
      EXPECT_LE(shared, n);
      previous = shared;
    }
    EXPECT_GT(previous, 0) << "two halves of one ability share none of their top weights";
  }
  EXPECT_EQ(manifest["stability"][0]["ability"], "quant");

  // resumed from the saved counts alone
  RunResult again = run_profile(dir.file("halves.json"), dir.file("halves"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(json::parse(test::read_file(dir.file("halves/profile.json")))["stability"], manifest["stability"]);
}

// `pairs`: per pair and k the union of the two top n is zeroed (n: the union's size, from the two
// rankings on disk), scored into its own file and listed in the manifest; resumed, it is read back.
TEST(Profile, APairZeroesTheUnionOfTwoTopSets) {
  TempDir dir;
  test::Weights weights = test::write_tiny_llama(dir.path());
  const int64_t p = parameter_count(weights);
  json job = profile_job(dir.path());
  job["ablation"]["selections"] = {"top"};
  job["ablation"]["pairs"] = json::array({json::array({"quant", "temporal"})});
  test::write_file(dir.file("job.json"), job.dump());
  RunResult r = run_profile(dir.file("job.json"), dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json manifest = json::parse(test::read_file(dir.file("out/profile.json")));
  ASSERT_EQ(manifest["pairs"].size(), 3u);  // one per k
  const std::vector<int64_t> quant = ranking_from_bytes(test::read_file(dir.file("out/rankings/quant.top.bin")), "top");
  const std::vector<int64_t> temporal = ranking_from_bytes(test::read_file(dir.file("out/rankings/temporal.top.bin")), "top");
  for (size_t i = 0; i < 3; i++) {
    const json& pair = manifest["pairs"][i];
    EXPECT_EQ(pair["abilities"], json::array({"quant", "temporal"}));
    const int64_t n = parameters_for_k(job["ablation"]["k"][i].get<double>(), p);
    std::set<int64_t> both(quant.begin(), quant.begin() + n);
    both.insert(temporal.begin(), temporal.begin() + n);
    EXPECT_EQ(pair["n"].get<int64_t>(), static_cast<int64_t>(both.size())) << pair.dump();
    EXPECT_EQ(pair["file"], "variants/pair.quant+temporal.k" + std::to_string(i) + ".jsonl");
    EXPECT_FALSE(test::read_file(dir.file("out/" + pair["file"].get<std::string>())).empty());
  }
  const std::string scores = test::read_file(dir.file("out/variants/pair.quant+temporal.k2.jsonl"));
  RunResult again = run_profile(dir.file("job.json"), dir.file("out"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(json::parse(test::read_file(dir.file("out/profile.json")))["pairs"], manifest["pairs"]);
  EXPECT_EQ(test::read_file(dir.file("out/variants/pair.quant+temporal.k2.jsonl")), scores);
}

// What a variant zeroed, checked without the runner's ablation code: zero the ranking's first n
// candidates in a copy of the checkpoint, score that with `score`, and compare with the variant.
TEST(Profile, AVariantScoresLikeACheckpointWithItsParametersZeroed) {
  TempDir dir;
  test::Weights weights = test::write_tiny_llama(dir.path());
  test::write_file(dir.file("job.json"), profile_job(dir.path()).dump());
  ASSERT_EQ(run_profile(dir.file("job.json"), dir.file("out")).exit_code, 0);
  const json manifest = json::parse(test::read_file(dir.file("out/profile.json")));

  json variant;
  for (const json& v : manifest["variants"])
    if (v["ability"] == "temporal" && v["selection"] == "top" && v["k"] == 0.01) variant = v;
  ASSERT_FALSE(variant.is_null());
  std::vector<int64_t> ranking = ranking_from_bytes(test::read_file(dir.file("out/rankings/temporal.top.bin")), "ranking");
  const int64_t n = variant["n"];
  ASSERT_GT(n, 0);
  for (int64_t i = 0; i < n; i++) {
    const int64_t g = ranking[static_cast<size_t>(i)];
    for (const json& t : manifest["candidates"]["tensors"]) {
      const int64_t offset = t["offset"], numel = t["numel"];
      if (g >= offset && g < offset + numel) weights.at(t["name"].get<std::string>()).values[static_cast<size_t>(g - offset)] = 0;
    }
  }
  TempDir zeroed;
  std::vector<test::F32Tensor> tensors;
  for (const auto& kv : weights) tensors.push_back(kv.second);
  test::write_file(zeroed.file("model.safetensors"), test::safetensors_bytes(tensors));
  test::write_file(zeroed.file("config.json"), test::tiny_llama_config({}).dump());
  json score_job = profile_job(zeroed.path());
  score_job["subcommand"] = "score";
  score_job.erase("abilities");
  score_job.erase("ablation");
  test::write_file(zeroed.file("job.json"), score_job.dump());
  RunResult r =
      test::run_process({BPROF_RUNNER_PATH, "score", "--job", zeroed.file("job.json"), "--out", zeroed.file("out"), "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out;

  std::istringstream expected(test::read_file(zeroed.file("out/scores.jsonl")));
  std::istringstream actual(test::read_file(dir.file("out/" + variant["file"].get<std::string>())));
  std::istringstream baseline(test::read_file(dir.file("out/baseline.jsonl")));
  std::string e, a, b;
  int lines = 0, changed = 0;
  while (std::getline(expected, e) && std::getline(actual, a) && std::getline(baseline, b)) {
    json je = json::parse(e), ja = json::parse(a);
    for (size_t c = 0; c < je["choices"].size(); c++)
      EXPECT_NEAR(ja["choices"][c]["logprob"].get<double>(), je["choices"][c]["logprob"].get<double>(), 1e-9);
    changed += a != b;
    lines++;
  }
  EXPECT_EQ(lines, 5);
  EXPECT_GT(changed, 0) << "the ablation changed no score";
}

TEST(Profile, IsDeterministicAndResumesAfterAKill) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  test::write_file(dir.file("job.json"), profile_job(dir.path()).dump());
  ASSERT_EQ(run_profile(dir.file("job.json"), dir.file("whole")).exit_code, 0);

  // SIGTERM once the fourth variant is on disk: cancelled, exit 130
  int variants_seen = 0;
  bool signalled = false;
  RunResult killed = run_profile(dir.file("job.json"), dir.file("resumed"), [&](const std::string& line, int pid) {
    if (line.find("\"type\":\"variant\"") != std::string::npos && ++variants_seen == 4 && !signalled) {
      ::kill(pid, SIGTERM);
      signalled = true;
    }
  });
  ASSERT_TRUE(signalled);
  EXPECT_EQ(killed.exit_code, 130) << killed.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("resumed/profile.json")));

  RunResult resumed = run_profile(dir.file("job.json"), dir.file("resumed"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  int reused = 0;
  for (const json& e : events_of(resumed, "variant")) reused += e["resumed"].get<bool>();
  EXPECT_GE(reused, 4);
  EXPECT_LT(reused, 15);
  EXPECT_TRUE(events_of(resumed, "result").size() >= 1);

  // byte for byte what the uninterrupted run wrote
  EXPECT_TRUE(result_files(dir.file("whole")) == result_files(dir.file("resumed")));

  // a finished folder: everything is read back, nothing recomputed
  RunResult again = run_profile(dir.file("job.json"), dir.file("resumed"));
  ASSERT_EQ(again.exit_code, 0);
  for (const json& e : events_of(again, "variant")) EXPECT_TRUE(e["resumed"].get<bool>());
  for (const json& e : events_of(again, "progress")) EXPECT_NE(e["phase"], "importance");
  // the resumed run, which had variants to score, loaded the weights once
  int loads = 0;
  for (const json& e : events_of(resumed, "progress")) loads += e["phase"] == "load" && e["done"] == 0;
  EXPECT_EQ(loads, 1);
}

// Two shards of the job (abilities split, the baseline in one, the random control in the other),
// their files gathered in one folder, then the whole job there: it reads everything back, scores
// nothing again, and the folder is byte for byte the unsharded run's.
TEST(Profile, ShardsGatheredIntoOneFolderGiveTheWholeRunsFiles) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  const json whole = profile_job(dir.path());
  test::write_file(dir.file("job.json"), whole.dump());
  ASSERT_EQ(run_profile(dir.file("job.json"), dir.file("whole")).exit_code, 0);

  std::filesystem::create_directories(dir.file("merged"));
  for (int index = 0; index < 2; index++) {
    json shard = whole;
    shard["abilities"] = json::array({whole["abilities"][index]});
    shard["shard"] = {{"of", "whole-job"}, {"index", index}, {"count", 2}, {"baseline", index == 0}, {"random", index == 1}};
    const std::string name = "shard" + std::to_string(index);
    test::write_file(dir.file(name + ".json"), shard.dump());
    RunResult r = run_profile(dir.file(name + ".json"), dir.file(name));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir.file(name + "/profile.json")));
    const json manifest = json::parse(test::read_file(dir.file(name + "/shard.json")));
    EXPECT_EQ(manifest["of"], "whole-job");
    EXPECT_EQ(manifest["index"], index);
    EXPECT_EQ(manifest["abilities"], json::array({whole["abilities"][index]["id"]}));
    // 1 ability x (top, bottom) x 3 k, and the random control's 3 k in shard 1
    EXPECT_EQ(manifest["variants"].size(), index == 0 ? 6u : 9u);
    EXPECT_EQ(std::filesystem::exists(dir.file(name + "/baseline.jsonl")), index == 0);
    EXPECT_EQ(std::filesystem::exists(dir.file(name + "/rankings/random.bin")), index == 1);
    for (const auto& [file, bytes] : result_files(dir.file(name))) {
      if (file == "job.fingerprint" || file == "shard.json") continue;
      std::filesystem::create_directories(std::filesystem::path(dir.file("merged/" + file)).parent_path());
      test::write_file(dir.file("merged/" + file), bytes);
    }
  }
  RunResult merged = run_profile(dir.file("job.json"), dir.file("merged"));
  ASSERT_EQ(merged.exit_code, 0) << merged.out;
  EXPECT_EQ(events_of(merged, "variant").size(), 15u);
  for (const json& e : events_of(merged, "variant")) EXPECT_TRUE(e["resumed"].get<bool>());
  for (const json& e : events_of(merged, "progress")) {
    EXPECT_NE(e["phase"], "importance");
    EXPECT_NE(e["phase"], "baseline");
    EXPECT_NE(e["phase"], "load") << "the merge reads the checkpoint's headers, not its weights";
  }
  EXPECT_TRUE(result_files(dir.file("whole")) == result_files(dir.file("merged")));
}

// `random_draws: 3`: per k three random sets (draw r seeded random_draw_seed(seed, r)), each a
// prefix of its draw's ranking of n_max and of the k's n; draw 0 is byte for byte the one random
// control of a job without the key. Deterministic across runs, read back on resume, and all three
// draws run in the shard given the random control, with the whole job's bytes.
TEST(Profile, RandomDrawsGiveSeveralNestedRandomSetsPerK) {
  TempDir dir;
  test::Weights weights = test::write_tiny_llama(dir.path());
  const json one = profile_job(dir.path());
  json job = one;
  job["ablation"]["random_draws"] = 3;
  test::write_file(dir.file("one.json"), one.dump());
  test::write_file(dir.file("job.json"), job.dump());
  ASSERT_EQ(run_profile(dir.file("one.json"), dir.file("one")).exit_code, 0);
  RunResult r = run_profile(dir.file("job.json"), dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;

  const int64_t p = parameter_count(weights);
  const int64_t candidates = 2 * 3 * 32 * 64;
  const std::vector<double> ks = {0.001, 0.01, 0.05};
  const int64_t n_max = parameters_for_k(ks.back(), p);
  // the draws' rankings: draw 0 under today's name and seed, draws 1 and 2 under theirs
  std::vector<std::vector<int64_t>> rankings;
  for (int64_t draw = 0; draw < 3; draw++) {
    const std::string file = draw == 0 ? "rankings/random.bin" : "rankings/random.d" + std::to_string(draw) + ".bin";
    rankings.push_back(ranking_from_bytes(test::read_file(dir.file("out/" + file)), file));
    EXPECT_EQ(rankings.back(), draw_random(candidates, n_max, random_draw_seed(7, draw))) << file;
  }
  EXPECT_EQ(random_draw_seed(7, 0), 7u);
  EXPECT_EQ(random_draw_seed(7, 2), 7u + (uint64_t{2} << 53));
  for (size_t i = 0; i < ks.size(); i++) {
    const int64_t n = parameters_for_k(ks[i], p);
    std::vector<std::set<int64_t>> sets;
    for (const auto& ranking : rankings) sets.emplace_back(ranking.begin(), ranking.begin() + n);
    for (const auto& set : sets) EXPECT_EQ(static_cast<int64_t>(set.size()), n);
    EXPECT_NE(sets[0], sets[1]) << "k " << ks[i];
    EXPECT_NE(sets[0], sets[2]) << "k " << ks[i];
    EXPECT_NE(sets[1], sets[2]) << "k " << ks[i];
  }

  // the manifest: 2 abilities x (top, bottom) x 3 k, then the random control's 3 draws x 3 k, each
  // with its draw and the k's n
  const json manifest = json::parse(test::read_file(dir.file("out/profile.json")));
  ASSERT_EQ(manifest["variants"].size(), 12u + 9u);
  json random = json::array();
  for (const json& v : manifest["variants"])
    if (v["selection"] == "random") random.push_back(v);
  ASSERT_EQ(random.size(), 9u);
  for (size_t j = 0; j < random.size(); j++) {
    const int64_t draw = static_cast<int64_t>(j / 3);
    const size_t i = j % 3;
    EXPECT_EQ(random[j]["draw"], draw) << random[j].dump();
    EXPECT_EQ(random[j]["n"], parameters_for_k(ks[i], p)) << random[j].dump();
    const std::string file = "variants/random.k" + std::to_string(i) + (draw == 0 ? "" : ".d" + std::to_string(draw)) + ".jsonl";
    EXPECT_EQ(random[j]["file"], file);
    EXPECT_TRUE(std::filesystem::exists(dir.file("out/" + file))) << file;
  }
  // draws 1 and 2 ablate other weights: at the largest k some score differs from draw 0's
  EXPECT_NE(test::read_file(dir.file("out/variants/random.k2.jsonl")), test::read_file(dir.file("out/variants/random.k2.d1.jsonl")));
  // draw 0 is the job without random_draws, byte for byte, and so is everything else it shares
  const auto one_files = result_files(dir.file("one"));
  const auto files = result_files(dir.file("out"));
  for (const auto& [file, bytes] : one_files) {
    if (file == "job.fingerprint" || file == "profile.json") continue;
    ASSERT_TRUE(files.count(file)) << file;
    EXPECT_EQ(files.at(file), bytes) << file;
  }
  EXPECT_EQ(files.size(), one_files.size() + 2 + 6);  // draws 1 and 2: a ranking each and a variant per k
  json draw_zero = json::array();
  for (json v : manifest["variants"])
    if (!v.contains("draw") || v["draw"] == 0) {
      v.erase("draw");
      draw_zero.push_back(v);
    }
  const json one_manifest = json::parse(test::read_file(dir.file("one/profile.json")));
  EXPECT_EQ(draw_zero, one_manifest["variants"]);
  for (const json& v : one_manifest["variants"]) EXPECT_FALSE(v.contains("draw"));

  // the events name the draw of every random variant, and count every draw
  int random_events = 0;
  for (const json& e : events_of(r, "variant")) {
    EXPECT_EQ(e.contains("draw"), e["ability"].is_null()) << e.dump();
    random_events += e["ability"].is_null();
  }
  EXPECT_EQ(random_events, 9);
  std::set<int64_t> scored_draws;
  for (const json& e : events_of(r, "progress")) {
    if (e["phase"] == "variants") {
      EXPECT_EQ(e["total"], 21) << e.dump();
    }
    if (e["phase"] == "score" && e.contains("variant") && e["variant"]["ability"].is_null())
      scored_draws.insert(e["variant"]["draw"].get<int64_t>());
  }
  EXPECT_EQ(scored_draws, (std::set<int64_t>{0, 1, 2}));

  // deterministic: a second run writes the same bytes; resumed, it reads every draw back
  ASSERT_EQ(run_profile(dir.file("job.json"), dir.file("again")).exit_code, 0);
  EXPECT_TRUE(result_files(dir.file("again")) == files);
  std::filesystem::remove(dir.file("again/variants/random.k1.d2.jsonl"));
  std::filesystem::remove(dir.file("again/rankings/random.d1.bin"));
  RunResult resumed = run_profile(dir.file("job.json"), dir.file("again"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  for (const json& e : events_of(resumed, "variant"))
    EXPECT_EQ(e["resumed"].get<bool>(), e["file"] != "variants/random.k1.d2.jsonl") << e.dump();
  EXPECT_TRUE(result_files(dir.file("again")) == files);

  // the shard given the random control runs every draw; the merge reads them back
  json shard = job;
  shard["abilities"] = json::array();
  shard["shard"] = {{"of", "whole-job"}, {"index", 1}, {"count", 2}, {"baseline", false}, {"random", true}};
  test::write_file(dir.file("shard.json"), shard.dump());
  RunResult sharded = run_profile(dir.file("shard.json"), dir.file("shard"));
  ASSERT_EQ(sharded.exit_code, 0) << sharded.out;
  EXPECT_EQ(json::parse(test::read_file(dir.file("shard/shard.json")))["variants"].size(), 9u);
  for (const auto& [file, bytes] : result_files(dir.file("shard"))) {
    if (file == "job.fingerprint" || file == "shard.json") continue;
    EXPECT_EQ(files.at(file), bytes) << file;
  }
}

TEST(Profile, RefusesAFolderWrittenByAnotherJob) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  json job = profile_job(dir.path());
  job["ablation"]["k"] = {0.01};
  test::write_file(dir.file("job.json"), job.dump());
  ASSERT_EQ(run_profile(dir.file("job.json"), dir.file("out")).exit_code, 0);
  job["ablation"]["seed"] = 8;
  test::write_file(dir.file("job.json"), job.dump());
  RunResult r = run_profile(dir.file("job.json"), dir.file("out"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.events.back()["code"], "bad_job");
  EXPECT_NE(r.events.back()["message"].get<std::string>().find("another job"), std::string::npos);
}

TEST(Profile, BadJobsSayWhatIsWrong) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& j) {
         j["ablation"]["k"] = {0.01, 0.001};
       },
       "ablation.k[1]"},
      {[](json& j) { j["ablation"]["k"] = {1.5}; }, "ablation.k[0]"},
      {[](json& j) {
         j["ablation"]["selections"] = {"top", "middle"};
       },
       "middle"},
      {[](json& j) { j["ablation"]["method"] = "absolute"; }, "'ablation.method' is \"absolute\""},
      {[](json& j) { j["ablation"]["method"] = json::array(); }, "'ablation.method' is an empty list"},
      {[](json& j) {
         j["ablation"]["method"] = {"signed", "paper", "signed"};
       },
       "'ablation.method' names \"signed\" twice"},
      {[](json& j) {
         j["ablation"]["method"] = {"paper", 3};
       },
       "'ablation.method' holds 3"},
      {[](json& j) { j["abilities"][1]["id"] = "quant"; }, "used by an earlier ability"},
      {[](json& j) { j["abilities"][0]["id"] = "../escape"; }, "abilities[0]"},
      {[](json& j) { j["abilities"][0]["sequences"][2] = {256}; }, "sequences[2]"},
      {[](json& j) { j["abilities"][1]["sequences"][0][1] = 999; }, "abilities[1] ('temporal'): sequences[0][1]"},
      {[](json& j) { j.erase("ablation"); }, "'ablation' is missing"},
      {[](json& j) { j["model"]["max_length"] = 11; }, "abilities[0] ('quant'): sequences[5] is 12 tokens long"},
      {[](json& j) { j["ablation"]["k"] = {0.9}; }, "candidates"},
      {[](json& j) {
         j["ablation"]["front_removal"] = 1;
         j["ablation"]["back_removal"] = 1;
       },
       "leave none"},
      {[](json& j) {
         j["ablation"]["pairs"] = json::array({json::array({"quant", "nope"})});
       },
       "'ablation.pairs[0]' names 'nope'"},
      {[](json& j) {
         j["ablation"]["pairs"] = json::array({json::array({"quant", "quant"})});
       },
       "'ablation.pairs[0]' names one ability twice"},
      {[](json& j) {
         j["ablation"]["pairs"] = json::array({json::array({"quant", "temporal"})});
         j["ablation"]["selections"] = {"bottom"};
       },
       "pairs ablate top sets"},
      {[](json& j) { j["ablation"]["random_draws"] = 0; }, "'ablation.random_draws' must be from 1 to 100, got 0"},
      {[](json& j) { j["ablation"]["random_draws"] = 101; }, "'ablation.random_draws' must be from 1 to 100, got 101"},
      {[](json& j) {
         j["ablation"]["random_draws"] = 2;
         j["ablation"]["selections"] = {"top"};
       },
       "'ablation.selections' has no \"random\""},
  };
  int i = 0;
  for (const auto& [mutate, expected] : cases) {
    json job = profile_job(dir.path());
    mutate(job);
    const std::string file = dir.file("job" + std::to_string(i) + ".json");
    test::write_file(file, job.dump());
    RunResult r = run_profile(file, dir.file("out" + std::to_string(i++)));
    EXPECT_EQ(r.exit_code, 2) << expected << "\n" << r.out;
    ASSERT_FALSE(r.events.empty());
    EXPECT_EQ(r.events.back()["code"], "bad_job") << r.out;
    EXPECT_NE(r.events.back()["message"].get<std::string>().find(expected), std::string::npos) << r.events.back().dump();
  }
}

}  // namespace
}  // namespace bprof
