// `bprof-runner profile` (PROTOCOL.md): the whole method of docs/method.md on one model.
//
//   baseline -> for each ability: importance -> rankings per rule (method and candidate set) ->
//   for each rule, selection and k: ablate in place, score every item, restore -> the random
//   control per candidate set (each of its draws) -> overlap per rule -> profile.json
//
// Every result file is written atomically and named by what it holds, so a run that is stopped
// and started again with the same job skips what is on disk (resume) and never reads half a file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "errors.h"
#include "files.h"
#include "ranking.h"

namespace bprof {

namespace {

using json = nlohmann::ordered_json;

// Identifies the job that owns an output folder: FNV-1a (64 bit) of the job file's bytes and the
// runner version. Not a security measure: it keeps results of two different jobs from mixing.
std::string job_fingerprint(const std::string& job_bytes) {
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&](const std::string& bytes) {
    for (unsigned char c : bytes) {
      hash ^= c;
      hash *= 1099511628211ull;
    }
  };
  mix(job_bytes);
  mix(std::string("\n") + kRunnerVersion);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(hex) + "\n";
}

// Claims `out` for this job, or finds it already claimed by the same job (resume). A folder that
// holds another job's results is refused: mixing them would give silently wrong AIS.
void claim_output_dir(const std::string& out, const std::string& job_path) {
  std::string job_bytes, previous;
  if (!read_file_if_exists(job_path, job_bytes)) throw RunnerError(ErrorCode::bad_job, job_path + ": cannot read the job file");
  const std::string fingerprint = job_fingerprint(job_bytes);
  const std::string file = out + "/job.fingerprint";
  if (read_file_if_exists(file, previous)) {
    if (previous != fingerprint)
      throw RunnerError(ErrorCode::bad_job, "--out " + out +
                                                " holds the results of another job (or another runner version); "
                                                "give this job an empty folder");
    return;
  }
  prepare_output_dir(out + "/rankings");
  prepare_output_dir(out + "/variants");
  write_file_atomic(file, fingerprint);
}

bool on_disk(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// The profile of one job, step by step; each step reads back what an earlier run left on disk.
class Profile {
 public:
  // `shapes`: the model's sizes (an engine of shapes only); `weights`: the engine that computes,
  // loaded the first time a step finds its file missing, so a run whose files are all on disk
  // (a merge of shards, a finished run resumed) never reads the weights.
  Profile(const Command& command, const Job& job, const Engine& shapes, std::function<Engine&()> weights)
      : command_(command), job_(job), plan_(job.ablation), weights_(std::move(weights)), out_(command.args.out) {
    parameters_ = shapes.parameter_count();
    for (size_t s = 0; s < plan_.candidate_sets.size(); s++) {
      candidates_.push_back(shapes.candidates(plan_.front_removal, plan_.back_removal, plan_.candidate_sets[s] == CandidateSet::all));
      candidate_count_.push_back(candidates_.back().back().offset + candidates_.back().back().numel);
      for (ImportanceMethod m : plan_.methods) {
        const std::vector<ImportanceMethod>& only = plan_.candidate_methods[s];
        if (only.empty() || std::find(only.begin(), only.end(), m) != only.end()) rules_.push_back({m, s});
      }
    }
    const bool attention =
        std::find(plan_.candidate_sets.begin(), plan_.candidate_sets.end(), CandidateSet::all) != plan_.candidate_sets.end();
    gradient_candidates_ = shapes.candidates(plan_.front_removal, plan_.back_removal, attention);
    const int64_t fewest = *std::min_element(candidate_count_.begin(), candidate_count_.end());
    for (size_t i = 0; i < plan_.k.size(); i++) {
      const int64_t n = parameters_for_k(plan_.k[i], parameters_);
      if (n > fewest)
        throw RunnerError(ErrorCode::bad_job, "ablation.k[" + std::to_string(i) + "] = " + json(plan_.k[i]).dump() + " asks for " +
                                                  std::to_string(n) + " of the model's " + std::to_string(parameters_) +
                                                  " parameters, but the candidates (MLP weights of the included layers) number " +
                                                  std::to_string(fewest));
      if (n == 0)
        command_.events.warning("ablation.k[" + std::to_string(i) + "] = " + json(plan_.k[i]).dump() +
                                " selects no parameter of this model (" + std::to_string(parameters_) +
                                " parameters): its variants equal the baseline");
      n_.push_back(n);
    }
    const int64_t ranked_per_k = static_cast<int64_t>(job_.abilities.size() * rules_.size() *
                                                      (ranked_selections().size() + (plan_.has(Selection::top_chunked) ? 1 : 0)));
    top_rankings_.resize(rules_.size());
    // the random control: every draw of it over every candidate set
    const int64_t random_per_k = random_here() ? static_cast<int64_t>(candidates_.size()) * plan_.random_draws : 0;
    const int64_t pairs_per_k = static_cast<int64_t>(plan_.pairs.size() * rules_.size());
    variants_total_ = (ranked_per_k + random_per_k + pairs_per_k) * static_cast<int64_t>(plan_.k.size());
  }

  void run() {
    if (!job_.shard.present || job_.shard.baseline) baseline();
    command_.events.progress("variants", 0, variants_total_);
    for (const Ability& ability : job_.abilities) ability_variants(ability);
    if (random_here()) random_variants();
    pair_variants();
    if (job_.shard.present)
      write_shard_manifest();
    else
      write_manifest();
  }

 private:
  // The random control runs once per whole job: in an unsharded job, or in the shard given it.
  bool random_here() const { return plan_.has(Selection::random) && (!job_.shard.present || job_.shard.random); }

  void baseline() {
    const std::string file = "baseline.jsonl";
    if (scores_on_disk(file)) return;
    write_file_atomic(out_ + "/" + file, score_items(command_, weights_(), job_.items, "baseline"));
    command_.events.result(file, static_cast<int64_t>(job_.items.size()));
  }

  // A scores file (one line per item) counts only when it is whole. Files are written atomically,
  // so one cut short was damaged after the fact (a copy, a full disk under another tool): it is
  // scored again rather than read as a result.
  bool scores_on_disk(const std::string& file) {
    const std::string path = out_ + "/" + file;
    if (!on_disk(path)) return false;
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    if (lines == job_.items.size() && !text.empty() && text.back() == '\n') return true;
    command_.events.warning(file + " is incomplete (" + std::to_string(lines) + " of " + std::to_string(job_.items.size()) +
                            " lines): scoring it again");
    std::remove(path.c_str());
    return false;
  }

  // A rule: an importance rule (method) over one candidate set (its index in the job's list).
  struct Rule {
    ImportanceMethod method;
    size_t set;
  };
  bool several_sets() const { return plan_.candidate_sets.size() > 1; }
  std::string set_tag(size_t set) const { return several_sets() ? std::string(candidate_set_name(plan_.candidate_sets[set])) + "." : ""; }
  // A rule's files carry its method and set only when the job has several of them: a job of one
  // rule keeps the names it always had, so its earlier runs resume.
  std::string tag(const Rule& r) const {
    return (plan_.methods.size() > 1 ? std::string(method_name(r.method)) + "." : "") + set_tag(r.set);
  }
  std::string ranking_file(const std::string& ability, const Rule& r, Selection s) const {
    return "rankings/" + ability + "." + tag(r) + selection_name(s) + ".bin";
  }
  std::string variant_file(const std::string& ability, const Rule& r, Selection s, size_t k_index) const {
    return "variants/" + ability + "." + tag(r) + selection_name(s) + ".k" + std::to_string(k_index) + ".jsonl";
  }
  // The manifest names a rule's set only when the job has several.
  void name_set(json& entry, size_t set) const {
    if (several_sets()) entry["candidates"] = candidate_set_name(plan_.candidate_sets[set]);
  }

  std::vector<Selection> ranked_selections() const {
    std::vector<Selection> out;
    for (Selection s : {Selection::top, Selection::bottom})
      if (plan_.has(s)) out.push_back(s);
    return out;
  }

  // What an ability's variants need besides the index lists, saved per ability (lowering_file):
  // per ranked selection and k, how many of the variant's n weights lower the ability's own loss
  // when zeroed, to first order (the check that tells `paper` and `signed` rankings apart); for
  // top_chunked, per k the set's size, that count, and how many it shares with the exact top-n.
  // With `stability`, the sizes of the two seeded halves of the ability's sequences and, per k,
  // how many weights the top n ranked from each half share (empty: fewer than 2 sequences).
  struct RankingFacts {
    std::vector<std::vector<int64_t>> lowering;
    std::vector<int64_t> chunked_n, chunked_lowering, chunked_shared;
    std::vector<int64_t> halves, halves_shared;
  };
  // An ability's index lists: per ranked selection n_.back() long; top_chunked, one set per k.
  struct AbilityRankings {
    std::vector<std::vector<int64_t>> ranked;
    std::vector<std::vector<int64_t>> chunked;
    RankingFacts facts;
  };
  std::string lowering_file(const std::string& ability, const Rule& m) const {
    return "rankings/" + ability + "." + tag(m) + "lowering.json";
  }
  std::string chunked_file(const std::string& ability, const Rule& m, size_t k_index) const {
    return "rankings/" + ability + "." + tag(m) + "top_chunked.k" + std::to_string(k_index) + ".bin";
  }

  RankingFacts read_facts(const std::string& ability, const Rule& m) const {
    const std::string path = out_ + "/" + lowering_file(ability, m);
    std::string bytes;
    read_file_if_exists(path, bytes);
    RankingFacts facts;
    try {
      const json saved = json::parse(bytes);
      for (Selection s : ranked_selections()) facts.lowering.push_back(saved.at(selection_name(s)).get<std::vector<int64_t>>());
      if (plan_.has(Selection::top_chunked)) {
        const json& chunked = saved.at("top_chunked");
        facts.chunked_n = chunked.at("n").get<std::vector<int64_t>>();
        facts.chunked_lowering = chunked.at("lowering").get<std::vector<int64_t>>();
        facts.chunked_shared = chunked.at("shared_with_top").get<std::vector<int64_t>>();
      }
      if (plan_.stability && saved.contains("stability")) {
        facts.halves = saved.at("stability").at("halves").get<std::vector<int64_t>>();
        facts.halves_shared = saved.at("stability").at("shared").get<std::vector<int64_t>>();
      }
    } catch (const json::exception& e) {
      throw RunnerError(ErrorCode::bad_job, path + ": " + e.what());
    }
    bool whole = !plan_.has(Selection::top_chunked) ||
                 (facts.chunked_n.size() == plan_.k.size() && facts.chunked_lowering.size() == plan_.k.size() &&
                  facts.chunked_shared.size() == plan_.k.size());
    for (const auto& per_k : facts.lowering) whole = whole && per_k.size() == plan_.k.size();
    whole = whole && (facts.halves.empty() || (facts.halves.size() == 2 && facts.halves_shared.size() == plan_.k.size()));
    if (!whole) throw RunnerError(ErrorCode::bad_job, path + " does not hold one count per k of this job");
    return facts;
  }

  std::vector<int64_t> read_ranking(const std::string& file, int64_t expected) const {
    std::string bytes;
    read_file_if_exists(out_ + "/" + file, bytes);
    std::vector<int64_t> ranking = ranking_from_bytes(bytes, out_ + "/" + file);
    if (static_cast<int64_t>(ranking.size()) != expected)
      throw RunnerError(ErrorCode::bad_job, out_ + "/" + file + " holds " + std::to_string(ranking.size()) + " indices, this job needs " +
                                                std::to_string(expected));
    return ranking;
  }

  bool rankings_on_disk(const std::string& ability, const Rule& m) const {
    bool all = on_disk(out_ + "/" + lowering_file(ability, m));
    for (Selection s : ranked_selections()) all = all && on_disk(out_ + "/" + ranking_file(ability, m, s));
    if (plan_.has(Selection::top_chunked))
      for (size_t i = 0; i < plan_.k.size(); i++) all = all && on_disk(out_ + "/" + chunked_file(ability, m, i));
    return all;
  }

  AbilityRankings read_rankings(const std::string& ability, const Rule& m) const {
    AbilityRankings out;
    out.facts = read_facts(ability, m);
    for (Selection s : ranked_selections()) out.ranked.push_back(read_ranking(ranking_file(ability, m, s), n_.back()));
    if (plan_.has(Selection::top_chunked))
      for (size_t i = 0; i < plan_.k.size(); i++) out.chunked.push_back(read_ranking(chunked_file(ability, m, i), out.facts.chunked_n[i]));
    return out;
  }

  // The ability's rankings per rule (the job's order), from disk when an earlier run wrote them
  // all, else from one importance pass that every rule ranks its own way.
  std::vector<AbilityRankings> rankings_of(const Ability& ability) {
    std::vector<AbilityRankings> out;
    bool all_on_disk = true;
    for (const Rule& r : rules_) all_on_disk = all_on_disk && rankings_on_disk(ability.id, r);
    if (all_on_disk) {
      for (const Rule& r : rules_) out.push_back(read_rankings(ability.id, r));
      return out;
    }

    ProgressThrottle throttle;
    auto progress = [&](int64_t done, int64_t total) {
      if (throttle.should_emit(done, total)) command_.events.progress("importance", done, total, ability.id);
    };
    // the stability's halves come out of the same pass: r of the first half's sequences, and r
    // minus that for the second
    const bool halved = plan_.stability && ability.sequences.size() >= 2;
    if (plan_.stability && !halved)
      command_.events.warning("ability '" + ability.id + "' has one diagnostic sequence: no halves to measure its ranking's stability");
    int64_t non_finite = 0;
    // On a GPU, r stays there and is ranked there: the same rankings, without its copy to the host
    // and the host's passes over it (docs/performance.md, "An 8B model"). The chunked selection
    // and the stability's halves rank r on the host.
    if (ranks_where_r_is() && !halved && !plan_.has(Selection::top_chunked)) {
      out = ranked_on_device(ability, progress, &non_finite);
      return rankings_done(ability, std::move(out), non_finite);
    }
    const std::vector<bool> in_first =
        halved ? first_half(static_cast<int64_t>(ability.sequences.size()), plan_.seed) : std::vector<bool>{};
    std::vector<std::vector<float>> first_rise;
    std::vector<std::vector<float>> rise = weights_().first_order_loss_rise(
        ability.sequences, plan_.batch_size, gradient_candidates_, progress, [this] { return command_.cancelled(); }, in_first,
        halved ? &first_rise : nullptr);
    std::vector<std::vector<ImportanceSpan>> spans;
    for (size_t s = 0; s < candidates_.size(); s++) spans.push_back(spans_of_set(rise, s));

    for (const Rule& r : rules_) out.push_back(rank_rule(ability.id, r, spans[r.set], &non_finite));
    if (halved) {
      const std::vector<int64_t> halves = {static_cast<int64_t>(std::count(in_first.begin(), in_first.end(), true)),
                                           static_cast<int64_t>(std::count(in_first.begin(), in_first.end(), false))};
      const std::vector<std::vector<int64_t>> shared = halves_shared(rise, std::move(first_rise));
      for (size_t r = 0; r < out.size(); r++) {
        out[r].facts.halves = halves;
        out[r].facts.halves_shared = shared[r];
      }
    }
    return rankings_done(ability, std::move(out), non_finite);
  }

  // An ability's rankings made: a warning for non-finite importances, each rule's facts written
  // (last: their file says every ranking of the ability under the rule is on disk), and `rank`'s
  // progress.
  std::vector<AbilityRankings> rankings_done(const Ability& ability, std::vector<AbilityRankings> out, int64_t non_finite) {
    if (non_finite > 0)
      command_.events.warning("ability '" + ability.id + "': " + std::to_string(non_finite) +
                              " importance value(s) are not finite (did the loss diverge in this dtype?); ranked as 0");
    // written last: its presence says every ranking of the ability under the rule is on disk
    for (size_t r = 0; r < out.size(); r++) write_lowering(ability.id, rules_[r], out[r]);
    command_.events.progress("rank", 1, 1, ability.id);
    return out;
  }

  // On a GPU; on the CPU too with BPROF_RANK_ON_DEVICE set, so that the CPU's tests run the
  // GPU's way of ranking through the whole profile (tests/test_profile_cli.cpp).
  bool ranks_where_r_is() { return weights_().on_gpu() || std::getenv("BPROF_RANK_ON_DEVICE") != nullptr; }

  // The positions in the gradient pass's tensors of one candidate set's, in the set's order: the
  // set's global index runs over them as over its own candidates. Each set is a subset of the
  // pass's tensors.
  std::vector<size_t> set_tensors(size_t set) const {
    std::vector<size_t> positions;
    for (const CandidateTensor& c : candidates_[set]) {
      size_t t = 0;
      while (gradient_candidates_[t].name != c.name) t++;
      positions.push_back(t);
    }
    return positions;
  }

  // The gradient pass's sums of one candidate set's tensors, in the set's order.
  std::vector<ImportanceSpan> spans_of_set(const std::vector<std::vector<float>>& rise, size_t set) const {
    std::vector<ImportanceSpan> spans;
    for (size_t t : set_tensors(set)) spans.push_back({rise[t].data(), static_cast<int64_t>(rise[t].size())});
    return spans;
  }

  // Every rule's rankings of an ability as rank_rule makes them, ranked where the model computes
  // (Engine::rank_first_order_loss_rise), written to disk; their facts but the halves'.
  std::vector<AbilityRankings> ranked_on_device(const Ability& ability, const std::function<void(int64_t, int64_t)>& progress,
                                                int64_t* non_finite) {
    const std::vector<Selection> selections = ranked_selections();
    std::vector<RankingRequest> requests;
    for (const Rule& r : rules_)
      for (Selection s : selections) requests.push_back({set_tensors(r.set), key_of(r.method), s == Selection::top, n_.back(), n_});
    const std::vector<RankingResult> results = weights_().rank_first_order_loss_rise(
        ability.sequences, plan_.batch_size, gradient_candidates_, progress, [this] { return command_.cancelled(); }, requests);
    std::vector<AbilityRankings> out;
    size_t next = 0;
    for (const Rule& r : rules_) {
      AbilityRankings rankings;
      for (Selection s : selections) {
        const RankingResult& result = results[next++];
        write_file_atomic(out_ + "/" + ranking_file(ability.id, r, s), ranking_bytes(result.ranking));
        rankings.ranked.push_back(result.ranking);
        rankings.facts.lowering.push_back(result.negatives);
        *non_finite = result.non_finite;  // as rank_rule's: the last ranking's count
      }
      out.push_back(std::move(rankings));
    }
    return out;
  }

  // paper: |r| (the released code's |theta * g|); signed: r, so weights whose zeroing lowers the
  // ability's loss rank below every weight whose zeroing raises it
  static RankKey key_of(ImportanceMethod m) { return m == ImportanceMethod::paper ? RankKey::magnitude : RankKey::value; }

  // One rule's rankings of an ability's importance, written to disk; its facts but the halves'.
  AbilityRankings rank_rule(const std::string& ability, const Rule& m, const std::vector<ImportanceSpan>& spans, int64_t* non_finite) {
    const RankKey key = key_of(m.method);
    AbilityRankings out;
    for (Selection s : ranked_selections()) {
      out.ranked.push_back(s == Selection::top ? rank_top(spans, n_.back(), key, non_finite)
                                               : rank_bottom(spans, n_.back(), key, non_finite));
      write_file_atomic(out_ + "/" + ranking_file(ability, m, s), ranking_bytes(out.ranked.back()));
      out.facts.lowering.push_back(negatives_in_prefixes(spans, out.ranked.back(), n_));
    }
    if (plan_.has(Selection::top_chunked)) {
      // the exact top-n each chunked set is compared with: the top ranking, ranked here when `top`
      // itself is not selected
      const std::vector<int64_t> exact_top = plan_.has(Selection::top) ? out.ranked.front() : rank_top(spans, n_.back(), key, non_finite);
      for (size_t i = 0; i < plan_.k.size(); i++) {
        out.chunked.push_back(rank_top_chunked(spans, n_[i], key, non_finite));
        const std::vector<int64_t>& set = out.chunked.back();
        write_file_atomic(out_ + "/" + chunked_file(ability, m, i), ranking_bytes(set));
        out.facts.chunked_n.push_back(static_cast<int64_t>(set.size()));
        out.facts.chunked_lowering.push_back(negatives_in_prefixes(spans, set, {static_cast<int64_t>(set.size())}).front());
        out.facts.chunked_shared.push_back(shared_indices(set, std::vector<int64_t>(exact_top.begin(), exact_top.begin() + n_[i])));
      }
    }
    return out;
  }

  void write_lowering(const std::string& ability, const Rule& m, const AbilityRankings& rankings) const {
    const RankingFacts& facts = rankings.facts;
    json saved = json::object();
    const std::vector<Selection> selections = ranked_selections();
    for (size_t r = 0; r < selections.size(); r++) saved[selection_name(selections[r])] = facts.lowering[r];
    if (plan_.has(Selection::top_chunked))
      saved["top_chunked"] = {{"n", facts.chunked_n}, {"lowering", facts.chunked_lowering}, {"shared_with_top", facts.chunked_shared}};
    if (!facts.halves.empty()) saved["stability"] = {{"halves", facts.halves}, {"shared", facts.halves_shared}};
    write_file_atomic(out_ + "/" + lowering_file(ability, m), saved.dump() + "\n");
  }

  // Per rule and k, how many weights the top n ranked from the first half's r and from the rest (r
  // minus it) share. The second half's r overwrites the first's once every rule has ranked it: one
  // copy of r, not two, for a model of billions of candidates.
  std::vector<std::vector<int64_t>> halves_shared(const std::vector<std::vector<float>>& rise, std::vector<std::vector<float>> half) const {
    auto spans_of = [](const std::vector<std::vector<float>>& values) {
      std::vector<ImportanceSpan> spans;
      for (const std::vector<float>& v : values) spans.push_back({v.data(), static_cast<int64_t>(v.size())});
      return spans;
    };
    // stability goes with the MLP set alone (job.cpp), so the rules are the methods over it
    std::vector<std::vector<int64_t>> first;
    for (const Rule& r : rules_) first.push_back(rank_top(spans_of(half), n_.back(), key_of(r.method)));
    for (size_t t = 0; t < half.size(); t++)
      for (size_t i = 0; i < half[t].size(); i++) half[t][i] = rise[t][i] - half[t][i];
    std::vector<std::vector<int64_t>> shared(rules_.size());
    for (size_t r = 0; r < rules_.size(); r++) {
      const std::vector<int64_t> second = rank_top(spans_of(half), n_.back(), key_of(rules_[r].method));
      for (int64_t n : n_) shared[r].push_back(prefix_intersections({&first[r], &second}, n)[0][1]);
    }
    return shared;
  }

  // The ability's stability entry of the manifest under a rule (none without halves).
  void record_stability(const std::string& ability, const Rule& m, const RankingFacts& facts) {
    if (facts.halves.empty()) return;
    stability_.push_back(
        {{"ability", ability}, {"method", method_name(m.method)}, {"halves", facts.halves}, {"n", n_}, {"shared", facts.halves_shared}});
  }

  bool variants_pending(const std::string& ability) {
    bool pending = false;
    for (const Rule& m : rules_) {
      for (Selection s : ranked_selections())
        for (size_t i = 0; i < plan_.k.size(); i++) pending = pending || !scores_on_disk(variant_file(ability, m, s, i));
      if (plan_.has(Selection::top_chunked))
        for (size_t i = 0; i < plan_.k.size(); i++)
          pending = pending || !scores_on_disk(variant_file(ability, m, Selection::top_chunked, i));
    }
    return pending;
  }

  void ability_variants(const Ability& ability) {
    // the overlap report needs the top rankings even when every variant is already on disk
    const bool need_rankings = variants_pending(ability.id) || plan_.has(Selection::top);
    std::vector<AbilityRankings> rankings;
    if (need_rankings) rankings = rankings_of(ability);
    for (size_t r = 0; r < rules_.size(); r++) {
      const Rule& m = rules_[r];
      const RankingFacts facts = need_rankings ? rankings[r].facts : read_facts(ability.id, m);
      record_stability(ability.id, m, facts);
      const std::vector<Selection> selections = ranked_selections();
      for (size_t s = 0; s < selections.size(); s++)
        for (size_t i = 0; i < plan_.k.size(); i++)
          variant(ability.id, m, selections[s], i, need_rankings ? &rankings[r].ranked[s] : nullptr, n_[i], facts.lowering[s][i]);
      if (plan_.has(Selection::top_chunked))
        for (size_t i = 0; i < plan_.k.size(); i++)
          variant(ability.id, m, Selection::top_chunked, i, need_rankings ? &rankings[r].chunked[i] : nullptr, facts.chunked_n[i],
                  facts.chunked_lowering[i], facts.chunked_shared[i]);
      if (plan_.has(Selection::top)) top_rankings_[r].emplace_back(ability.id, std::move(rankings[r].ranked.front()));
    }
  }

  // One random control per candidate set: each set's variants are held to weights drawn from it,
  // `random_draws` times over (draw r seeded random_draw_seed(seed, r), draw 0 the job's seed).
  void random_variants() {
    for (size_t set = 0; set < candidates_.size(); set++) {
      for (int64_t draw = 0; draw < plan_.random_draws; draw++) {
        const std::string file = "rankings/random." + set_tag(set) + draw_tag(draw) + "bin";
        std::vector<int64_t> ranking;
        if (on_disk(out_ + "/" + file)) {
          ranking = read_ranking(file, n_.back());
        } else {
          ranking = draw_random(candidate_count_[set], n_.back(), random_draw_seed(plan_.seed, draw));
          write_file_atomic(out_ + "/" + file, ranking_bytes(ranking));
        }
        for (size_t i = 0; i < plan_.k.size(); i++)
          variant("", {plan_.methods.front(), set}, Selection::random, i, &ranking, n_[i], -1, -1, several_draws() ? draw : -1);
      }
    }
  }

  // A job of one random draw names none, so its files, manifest and events are those it always had.
  bool several_draws() const { return plan_.random_draws > 1; }
  // Draw 0 keeps the random control's names; draws 1 .. R - 1 add `d<r>.` (`random.d1.bin`).
  std::string draw_tag(int64_t draw) const { return draw > 0 ? "d" + std::to_string(draw) + "." : ""; }
  std::string random_variant_file(size_t set, size_t k_index, int64_t draw) const {
    return "variants/random." + set_tag(set) + "k" + std::to_string(k_index) + "." + draw_tag(draw) + "jsonl";
  }

  // Two abilities ablated together: per rule and k, the union of their top n under that rule (its
  // size is the variant's n). Scored as any variant; listed in the manifest's `pairs`. A job of one
  // rule keeps the file names it always had, so its earlier runs resume.
  void pair_variants() {
    for (size_t r = 0; r < rules_.size(); r++) {
      const Rule& rule = rules_[r];
      for (const auto& [a, b] : plan_.pairs) {
        const std::vector<int64_t>& first = top_ranking_of(r, a);
        const std::vector<int64_t>& second = top_ranking_of(r, b);
        for (size_t i = 0; i < plan_.k.size(); i++) {
          const std::string file = "variants/pair." + a + "+" + b + "." + tag(rule) + "k" + std::to_string(i) + ".jsonl";
          std::vector<int64_t> both(first.begin(), first.begin() + n_[i]);
          both.insert(both.end(), second.begin(), second.begin() + n_[i]);
          std::sort(both.begin(), both.end());
          both.erase(std::unique(both.begin(), both.end()), both.end());
          const int64_t n = static_cast<int64_t>(both.size());
          if (!scores_on_disk(file)) {
            Engine& engine = weights_();
            engine.ablate(candidates_[rule.set], both.data(), n);
            std::string lines;
            try {
              const ScoredVariant scored{a + "+" + b, method_name(rule.method), "top", plan_.k[i]};
              lines = score_items(command_, engine, job_.items, "score", &scored);
            } catch (...) {
              engine.restore();
              throw;
            }
            engine.restore();
            write_file_atomic(out_ + "/" + file, lines);
          }
          json entry = {{"abilities", {a, b}}, {"method", method_name(rule.method)}, {"k", plan_.k[i]}, {"n", n}, {"file", file}};
          name_set(entry, rule.set);
          manifest_pairs_.push_back(entry);
          command_.events.progress("variants", ++variants_done_, variants_total_);
        }
      }
    }
  }

  const std::vector<int64_t>& top_ranking_of(size_t rule, const std::string& ability) const {
    for (const auto& [id, ranking] : top_rankings_[rule])
      if (id == ability) return ranking;
    throw RunnerError(ErrorCode::bad_job, "ablation.pairs: no top ranking of '" + ability + "'");
  }

  // One variant: ablate the first n of the ranking, score, restore. Skipped when on disk.
  // `lowering`: of the n, those whose zeroing lowers the ability's loss (-1 for the random control);
  // `shared_with_top`: a top_chunked set's intersection with the exact top-n (-1 for the others).
  // The random control (no ability) belongs to no rule: only `m`'s set is then used. `draw`: which
  // random draw, named in the manifest and the events when the job has several (-1: none named).
  void variant(const std::string& ability, const Rule& m, Selection selection, size_t k_index, const std::vector<int64_t>* ranking,
               int64_t n, int64_t lowering = -1, int64_t shared_with_top = -1, int64_t draw = -1) {
    const std::string file =
        ability.empty() ? random_variant_file(m.set, k_index, std::max<int64_t>(draw, 0)) : variant_file(ability, m, selection, k_index);
    const bool resumed = scores_on_disk(file);
    if (!resumed) {
      std::string lines;
      Engine& engine = weights_();
      engine.ablate(candidates_[m.set], ranking->data(), n);
      try {
        const ScoredVariant scored{ability, ability.empty() ? "" : method_name(m.method), selection_name(selection), plan_.k[k_index],
                                   draw};
        lines = score_items(command_, engine, job_.items, "score", &scored);
      } catch (...) {
        engine.restore();
        throw;
      }
      engine.restore();
      write_file_atomic(out_ + "/" + file, lines);
    }
    command_.events.variant(ability, selection_name(selection), plan_.k[k_index], n, file, resumed, draw);
    json entry = {{"ability", ability.empty() ? json(nullptr) : json(ability)},
                  {"method", ability.empty() ? json(nullptr) : json(method_name(m.method))},
                  {"selection", selection_name(selection)},
                  {"k", plan_.k[k_index]},
                  {"n", n},
                  {"file", file}};
    name_set(entry, m.set);
    if (draw >= 0) entry["draw"] = draw;
    if (lowering >= 0) entry["lowering"] = lowering;
    if (shared_with_top >= 0) {
      entry["top_n"] = n_[k_index];
      entry["shared_with_top"] = shared_with_top;
    }
    manifest_variants_.push_back(std::move(entry));
    command_.events.progress("variants", ++variants_done_, variants_total_);
  }

  // Per rule and k, how many weights the abilities' top sets share, pairwise.
  json overlap() const {
    json out = json::array();
    for (size_t r = 0; r < rules_.size(); r++) {
      if (top_rankings_[r].empty()) continue;
      std::vector<const std::vector<int64_t>*> rankings;
      json abilities = json::array();
      for (const auto& [id, ranking] : top_rankings_[r]) {
        rankings.push_back(&ranking);
        abilities.push_back(id);
      }
      for (size_t i = 0; i < plan_.k.size(); i++) {
        json entry = {{"method", method_name(rules_[r].method)},
                      {"k", plan_.k[i]},
                      {"n", n_[i]},
                      {"abilities", abilities},
                      {"intersections", prefix_intersections(rankings, n_[i])}};
        name_set(entry, rules_[r].set);
        out.push_back(std::move(entry));
      }
    }
    return out;
  }

  void write_manifest() {
    json tensors = json::array();
    for (const CandidateTensor& c : candidates_.front()) tensors.push_back({{"name", c.name}, {"numel", c.numel}, {"offset", c.offset}});
    json manifest = {{"parameters", parameters_},
                     {"candidates", {{"total", candidate_count_.front()}, {"tensors", tensors}}},
                     {"baseline", "baseline.jsonl"},
                     {"variants", manifest_variants_},
                     {"overlap", overlap()}};
    if (plan_.stability) manifest["stability"] = stability_;
    if (!plan_.pairs.empty()) manifest["pairs"] = manifest_pairs_;
    if (several_sets()) {
      json sets = json::array();
      for (size_t set = 0; set < candidates_.size(); set++)
        sets.push_back({{"name", candidate_set_name(plan_.candidate_sets[set])}, {"total", candidate_count_[set]}});
      manifest["candidate_sets"] = sets;
    }
    write_file_atomic(out_ + "/profile.json", manifest.dump(1) + "\n");
    command_.events.result("profile.json", static_cast<int64_t>(manifest_variants_.size()));
  }

  // A shard's last file, its "done" mark: which shard of which job it is and what it wrote. The
  // merge reads it; profile.json (overlap across every ability) is the whole job's alone.
  void write_shard_manifest() {
    json abilities = json::array();
    for (const Ability& ability : job_.abilities) abilities.push_back(ability.id);
    const json manifest = {{"of", job_.shard.of},           {"index", job_.shard.index},       {"count", job_.shard.count},
                           {"abilities", abilities},        {"baseline", job_.shard.baseline}, {"random", job_.shard.random},
                           {"variants", manifest_variants_}};
    write_file_atomic(out_ + "/shard.json", manifest.dump(1) + "\n");
    command_.events.result("shard.json", static_cast<int64_t>(manifest_variants_.size()));
  }

  const Command& command_;
  const Job& job_;
  const AblationPlan& plan_;
  std::function<Engine&()> weights_;
  const std::string out_;
  int64_t parameters_ = 0;
  std::vector<std::vector<CandidateTensor>> candidates_;  // per candidate set (the job's order)
  std::vector<int64_t> candidate_count_;                  // per candidate set
  std::vector<CandidateTensor> gradient_candidates_;      // what the gradient pass sums: every set's tensors
  std::vector<Rule> rules_;                               // per set, per method: each ranks the same sums
  std::vector<int64_t> n_;                                // parameters zeroed at each k
  int64_t variants_total_ = 0, variants_done_ = 0;
  json manifest_pairs_ = json::array();
  std::vector<std::vector<std::pair<std::string, std::vector<int64_t>>>> top_rankings_;  // per rule: (ability, top ranking)
  json manifest_variants_ = json::array();
  json stability_ = json::array();
};

}  // namespace

int run_profile(const Command& command) {
  const auto t0 = std::chrono::steady_clock::now();
  Job job = load_job_for(command);
  prepare_output_dir(command.args.out);
  claim_output_dir(command.args.out, command.args.job);
  ModelConfig config;
  const std::unique_ptr<Engine> shapes = open_engine(command, job, config, EngineLoad::shapes_only);
  std::unique_ptr<Engine> weights;
  Profile(command, job, *shapes, [&]() -> Engine& {
    if (!weights) weights = open_engine(command, job, config, EngineLoad::weights_after_shapes);
    return *weights;
  }).run();
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
  command.events.summary(elapsed.count());
  return 0;
}

}  // namespace bprof
