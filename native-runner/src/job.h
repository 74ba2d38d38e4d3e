// The job file of PROTOCOL.md: parsing, validation and batch planning. Torch-free.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace bprof {

constexpr int kProtocolVersion = 1;

// Greedy generation for a generate_until item: up to max_tokens new tokens, ending early once the
// generated tokens end with one of the stop sequences (the tokenized `until` strings and EOS; the
// TypeScript side still cuts the decoded text at the first stop string, so a stop string that
// tokenizes differently mid-text costs time, never correctness).
struct GenerateSpec {
  int64_t max_tokens = 0;  // 0: not a generation item
  std::vector<std::vector<int64_t>> stop;
};

struct Item {
  std::string id;
  std::vector<int64_t> context;               // at least one token
  std::vector<std::vector<int64_t>> choices;  // multiple choice: at least one choice, each at least one token
  GenerateSpec generate = {};                 // generation: instead of choices
  bool generates() const { return generate.max_tokens > 0; }
};

// A diagnostic dataset, rendered and tokenized (`profile`): its id names result files.
struct Ability {
  std::string id;
  std::vector<std::vector<int64_t>> sequences;  // each at least 2 tokens
};

// top_chunked: the top set as the authors' released code selects it, chunk by chunk (ranking.h).
enum class Selection { top, top_chunked, bottom, random };
const char* selection_name(Selection selection);

// How an ability's importance is read off its gradient sum g (importance.cpp): `paper`, |theta * g|
// as the authors' code does; `signed`, -theta * g, the first-order estimate of how much zeroing the
// weight raises the ability's loss, so weights whose zeroing would lower it rank last.
enum class ImportanceMethod { paper, signed_importance };
const char* method_name(ImportanceMethod method);

// Which weights can be ablated (`candidates`): the MLP's, or every layer weight matrix.
enum class CandidateSet { mlp, all };
const char* candidate_set_name(CandidateSet set);

// `ablation` of a `profile` job (PROTOCOL.md).
struct AblationPlan {
  std::vector<double> k;  // strictly increasing, each in (0, 1)
  std::vector<Selection> selections;
  // one or more rules, each with its own rankings and variants from the same gradient pass
  std::vector<ImportanceMethod> methods = {ImportanceMethod::paper};
  int64_t front_removal = 0;
  int64_t back_removal = 0;
  int64_t batch_size = 8;
  uint64_t seed = 1;
  // Independent random sets drawn per k and candidate set (`random_draws`, 1 to kMaxRandomDraws):
  // draw 0 is the one random control every job has (seed `seed`), draws 1 .. R - 1 the null's
  // spread (random_draw_seed).
  int64_t random_draws = 1;
  // Also rank each ability's top sets from two seeded halves of its sequences and count, per k,
  // what they share (the ranking's stability, docs/method.md).
  bool stability = false;
  // The candidate sets, each ranked by every rule from the same gradient pass: `mlp`, the MLP's
  // weights; `all`, the attention projections' (q, k, v, o) beside them (the paper's all-layer
  // comparison); embeddings, norms and biases never are.
  std::vector<CandidateSet> candidate_sets = {CandidateSet::mlp};
  // Per candidate set, the rules that rank it: empty, every rule of `methods`; else those named
  // (`{"set": "all", "method": "paper"}`), so a set can be ranked by fewer rules than the others.
  std::vector<std::vector<ImportanceMethod>> candidate_methods = {{}};
  // Two abilities ablated together (ids): the union of their top sets under the first rule, per k.
  std::vector<std::pair<std::string, std::string>> pairs;
  bool has(Selection s) const;
};

// The most random draws a job may ask for (`ablation.random_draws`): each is a variant per k and
// candidate set, and random_draw_seed keeps the draws' seeds apart up to 2048.
constexpr int64_t kMaxRandomDraws = 100;

// The seed of random draw r of a job seeded `seed`: `seed` itself for r = 0 (the random control's
// seed as it always was), `seed + r * 2^53` (mod 2^64) for r >= 1. The draws of one job never share
// a seed (r * 2^53 mod 2^64 differs for every r below 2^11), and for the seeds a config can give
// (below 2^53, JavaScript's safe integers) no draw r >= 1 uses a seed that draw 0 of any job uses.
uint64_t random_draw_seed(uint64_t seed, int64_t r);

// A `profile` job that is one shard of a larger one (PROTOCOL.md, "Shards"): its abilities are its
// share of the whole job's, and the baseline and the random control run only in the shard that
// is given them. Every file it writes has the name and bytes the whole job would give it.
struct ShardSpec {
  bool present = false;
  std::string of;  // identifies the whole job (the TypeScript side's fingerprint of it)
  int64_t index = 0, count = 1;
  bool baseline = true, random = true;
};

struct Job {
  int protocol = kProtocolVersion;
  std::string subcommand;
  std::string model_path;
  std::string dtype = "float32";  // float32 | bfloat16 | float16
  std::string device = "cpu";
  int64_t max_length = 0;  // model.max_length: longest sequence the model may read; 0 when not given
  std::vector<Item> items;
  std::vector<Ability> abilities;  // `profile` only
  AblationPlan ablation;           // `profile` only
  ShardSpec shard;                 // `profile` only
};

// The envelope every job file shares: a JSON object with the runner's `protocol` and a string
// `subcommand` (returned). Throws RunnerError(bad_job) naming what is wrong.
std::string parse_job_envelope(const nlohmann::json& root, const std::string& source);
nlohmann::json parse_job_json(const std::string& text, const std::string& source);

// Parses and validates a job; `source` names the file in messages.
// Throws RunnerError(bad_job) saying which item and field is wrong.
Job parse_job(const std::string& text, const std::string& source);
Job load_job(const std::string& path);

// Every token id must index the model's vocabulary: checked once the config is known, before
// any weight is loaded, so a wrong tokenizer fails in milliseconds. Throws RunnerError(bad_job).
void check_token_ids(const Job& job, int64_t vocab_size);

// Tokens the model reads for one choice: context ++ choice without its last token.
inline int64_t input_length(const Item& item, size_t choice) {  // multiple choice only
  return static_cast<int64_t>(item.context.size() + item.choices[choice].size()) - 1;
}

// Tokens of the one row a multiple-choice item is scored in (Engine::score): its context once,
// then every choice without its last token.
inline int64_t packed_length(const Item& item) {
  int64_t length = static_cast<int64_t>(item.context.size());
  for (const auto& choice : item.choices) length += static_cast<int64_t>(choice.size()) - 1;
  return length;
}

// Groups consecutive items into batches of at most `max_tokens` padded tokens (rows x longest
// row; a multiple-choice item is one row of packed_length tokens, a generation item one row that
// grows to context + max_tokens). An item is never split across batches, so every batch boundary is an item boundary, where
// cancellation may stop the run. An item larger than the budget forms a batch of its own.
// Returns [first, last) item ranges.
// Consecutive items in batches whose padded size (rows x the longest row) stays within
// `max_tokens`, items never split; an item larger than that gets a batch of its own.
struct RowsAndLength {
  int64_t rows;
  int64_t length;
};
std::vector<std::pair<size_t, size_t>> plan_padded_batches(size_t count, const std::function<RowsAndLength(size_t)>& shape,
                                                           int64_t max_tokens);
std::vector<std::pair<size_t, size_t>> plan_batches(const std::vector<Item>& items, int64_t max_tokens);

}  // namespace bprof
