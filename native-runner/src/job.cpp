#include "job.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "errors.h"
#include "json_util.h"

namespace bprof {

using json = nlohmann::json;

namespace {

RunnerError bad_job(const std::string& source, const std::string& what) { return RunnerError(ErrorCode::bad_job, source + ": " + what); }

std::string item_label(size_t index, const std::string& id) {
  return "items[" + std::to_string(index) + "]" + (id.empty() ? "" : " (id '" + id + "')");
}

// A token list: a non-empty array of non-negative integers. `where` names it in messages.
std::vector<int64_t> parse_tokens(const json& v, const std::string& source, const std::string& where) {
  if (!v.is_array()) throw bad_job(source, where + " must be an array of token ids");
  if (v.empty()) throw bad_job(source, where + " is empty (at least one token is required)");
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); i++) {
    const json& t = v[i];
    if (!t.is_number_integer() || t.get<int64_t>() < 0)
      throw bad_job(source, where + "[" + std::to_string(i) + "] is not a token id: " + describe_json(t));
    out.push_back(t.get<int64_t>());
  }
  return out;
}

Item parse_item(const json& v, size_t index, const std::string& source) {
  if (!v.is_object()) throw bad_job(source, item_label(index, "") + " is not an object");
  Item item;
  auto id = v.find("id");
  if (id == v.end() || !id->is_string() || id->get<std::string>().empty())
    throw bad_job(source, item_label(index, "") + ": 'id' must be a non-empty string");
  item.id = id->get<std::string>();
  const std::string label = item_label(index, item.id);

  auto ctx = v.find("context");
  if (ctx == v.end()) throw bad_job(source, label + ": 'context' is missing");
  item.context = parse_tokens(*ctx, source, label + ": context");

  auto choices = v.find("choices");
  auto generate = v.find("generate");
  if (generate != v.end() && choices != v.end())
    throw bad_job(source, label + ": has both 'choices' and 'generate' (an item is scored or generated, not both)");
  if (generate != v.end()) {
    if (!generate->is_object()) throw bad_job(source, label + ": 'generate' must be an object");
    auto max_tokens = generate->find("max_tokens");
    if (max_tokens == generate->end() || !max_tokens->is_number_integer() || max_tokens->get<int64_t>() < 1 ||
        max_tokens->get<int64_t>() > 1000000)
      throw bad_job(source, label + ": 'generate.max_tokens' must be a positive integer");
    item.generate.max_tokens = max_tokens->get<int64_t>();
    auto stop = generate->find("stop");
    if (stop != generate->end()) {
      if (!stop->is_array()) throw bad_job(source, label + ": 'generate.stop' must be an array of token arrays");
      for (size_t s = 0; s < stop->size(); s++)
        item.generate.stop.push_back(parse_tokens((*stop)[s], source, label + ": generate.stop[" + std::to_string(s) + "]"));
    }
    return item;
  }
  if (choices == v.end()) throw bad_job(source, label + ": 'choices' is missing (or 'generate' for a generation item)");
  if (!choices->is_array() || choices->empty()) throw bad_job(source, label + ": 'choices' must be a non-empty array of token arrays");
  for (size_t c = 0; c < choices->size(); c++)
    item.choices.push_back(parse_tokens((*choices)[c], source, label + ": choices[" + std::to_string(c) + "]"));
  return item;
}

bool is_file_safe_id(const std::string& id) {
  if (id.empty() || !std::isalnum(static_cast<unsigned char>(id[0]))) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

int64_t non_negative_int(const json& obj, const char* key, int64_t fallback, const std::string& source) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    throw bad_job(source, std::string("'ablation.") + key + "' must be a non-negative integer, got " + describe_json(*it));
  return it->get<int64_t>();
}

Ability parse_ability(const json& v, size_t index, const std::string& source) {
  const std::string label = "abilities[" + std::to_string(index) + "]";
  if (!v.is_object()) throw bad_job(source, label + " is not an object");
  Ability ability;
  auto id = v.find("id");
  if (id == v.end() || !id->is_string() || !is_file_safe_id(id->get<std::string>()))
    throw bad_job(source, label +
                              ": 'id' must be a string of letters, digits, '.', '_' or '-' that starts with a letter "
                              "or digit (it names result files)");
  ability.id = id->get<std::string>();
  const std::string where = label + " ('" + ability.id + "')";
  auto sequences = v.find("sequences");
  if (sequences == v.end() || !sequences->is_array() || sequences->empty())
    throw bad_job(source, where + ": 'sequences' must be a non-empty array of token arrays");
  for (size_t s = 0; s < sequences->size(); s++) {
    const std::string name = where + ": sequences[" + std::to_string(s) + "]";
    ability.sequences.push_back(parse_tokens((*sequences)[s], source, name));
    if (ability.sequences.back().size() < 2)
      throw bad_job(source, name + " has one token; a sequence needs at least 2 (one next-token prediction)");
  }
  return ability;
}

AblationPlan parse_ablation(const json& v, const std::string& source) {
  if (!v.is_object()) throw bad_job(source, "'ablation' must be an object");
  AblationPlan plan;
  auto k = v.find("k");
  if (k == v.end() || !k->is_array() || k->empty()) throw bad_job(source, "'ablation.k' must be a non-empty array of fractions");
  for (size_t i = 0; i < k->size(); i++) {
    const json& value = (*k)[i];
    const std::string where = "'ablation.k[" + std::to_string(i) + "]'";
    if (!value.is_number() || !(value.get<double>() > 0 && value.get<double>() < 1))
      throw bad_job(source, where + " must be a number in (0, 1), got " + describe_json(value));
    if (!plan.k.empty() && !(value.get<double>() > plan.k.back()))
      throw bad_job(source, where + " must be larger than the k before it (the sweep is strictly increasing)");
    plan.k.push_back(value.get<double>());
  }
  auto selections = v.find("selections");
  if (selections == v.end() || !selections->is_array() || selections->empty())
    throw bad_job(source, "'ablation.selections' must be a non-empty array of \"top\", \"top_chunked\", \"bottom\", \"random\"");
  for (const json& s : *selections) {
    Selection selection;
    if (s == "top")
      selection = Selection::top;
    else if (s == "top_chunked")
      selection = Selection::top_chunked;
    else if (s == "bottom")
      selection = Selection::bottom;
    else if (s == "random")
      selection = Selection::random;
    else
      throw bad_job(source, "'ablation.selections' holds " + describe_json(s) + " (expected top, top_chunked, bottom or random)");
    if (plan.has(selection)) throw bad_job(source, "'ablation.selections' names " + describe_json(s) + " twice");
    plan.selections.push_back(selection);
  }
  auto method = v.find("method");
  if (method != v.end()) {
    // a name, or a list of names: each rule ranks the same gradient sums its own way
    const json names = method->is_array() ? *method : json::array({*method});
    if (names.empty()) throw bad_job(source, "'ablation.method' is an empty list (expected \"paper\", \"signed\" or a list of them)");
    plan.methods.clear();
    for (const json& name : names) {
      ImportanceMethod m;
      if (name == "paper")
        m = ImportanceMethod::paper;
      else if (name == "signed")
        m = ImportanceMethod::signed_importance;
      else
        throw bad_job(source, std::string("'ablation.method' ") + (method->is_array() ? "holds " : "is ") + describe_json(name) +
                                  " (expected \"paper\" or \"signed\")");
      if (std::find(plan.methods.begin(), plan.methods.end(), m) != plan.methods.end())
        throw bad_job(source, "'ablation.method' names " + describe_json(name) + " twice");
      plan.methods.push_back(m);
    }
  }
  plan.front_removal = non_negative_int(v, "front_removal", 0, source);
  plan.back_removal = non_negative_int(v, "back_removal", 0, source);
  plan.batch_size = non_negative_int(v, "batch_size", 8, source);
  if (plan.batch_size < 1) throw bad_job(source, "'ablation.batch_size' must be at least 1");
  plan.seed = static_cast<uint64_t>(non_negative_int(v, "seed", 1, source));
  plan.random_draws = non_negative_int(v, "random_draws", 1, source);
  if (plan.random_draws < 1 || plan.random_draws > kMaxRandomDraws)
    throw bad_job(source, "'ablation.random_draws' must be from 1 to " + std::to_string(kMaxRandomDraws) + ", got " +
                              std::to_string(plan.random_draws));
  if (plan.random_draws > 1 && !plan.has(Selection::random))
    throw bad_job(source, "'ablation.random_draws' draws the random control " + std::to_string(plan.random_draws) +
                              " times, and 'ablation.selections' has no \"random\"");
  auto stability = v.find("stability");
  if (stability != v.end()) {
    if (!stability->is_boolean()) throw bad_job(source, "'ablation.stability' must be true or false, got " + describe_json(*stability));
    plan.stability = stability->get<bool>();
  }
  auto candidates = v.find("candidates");
  if (candidates != v.end()) {
    // a name, or a list of names: each set is ranked from the same gradient pass, as the rules are
    const json names = candidates->is_array() ? *candidates : json::array({*candidates});
    if (names.empty()) throw bad_job(source, "'ablation.candidates' is an empty list (expected \"mlp\", \"all\" or a list of them)");
    plan.candidate_sets.clear();
    plan.candidate_methods.clear();
    for (const json& entry : names) {
      // {"set": name, "method": rule or rules}: the set ranked by those rules of `method` only
      const bool restricted = entry.is_object() && candidates->is_array();
      const json name = restricted ? entry.value("set", json()) : entry;
      std::vector<ImportanceMethod> rules;
      if (restricted) {
        const json wanted = entry.value("method", json());
        for (const json& rule : wanted.is_array() ? wanted : json::array({wanted})) {
          const auto m = rule == "paper"    ? std::optional<ImportanceMethod>(ImportanceMethod::paper)
                         : rule == "signed" ? std::optional<ImportanceMethod>(ImportanceMethod::signed_importance)
                                            : std::nullopt;
          if (!m || std::find(plan.methods.begin(), plan.methods.end(), *m) == plan.methods.end())
            throw bad_job(source,
                          "'ablation.candidates' holds " + describe_json(entry) + ": its method must name rules of 'ablation.method'");
          rules.push_back(*m);
        }
        if (rules.empty()) throw bad_job(source, "'ablation.candidates' holds " + describe_json(entry) + " without a method");
      }
      if (!name.is_string() || (name != "mlp" && name != "all"))
        throw bad_job(source, std::string("'ablation.candidates' ") +
                                  (candidates->is_array() ? "holds " : "must be \"mlp\" or \"all\", got ") + describe_json(name) +
                                  (candidates->is_array() ? " (expected \"mlp\" or \"all\")" : ""));
      const CandidateSet set = name == "all" ? CandidateSet::all : CandidateSet::mlp;
      if (std::find(plan.candidate_sets.begin(), plan.candidate_sets.end(), set) != plan.candidate_sets.end())
        throw bad_job(source, "'ablation.candidates' names " + describe_json(name) + " twice");
      plan.candidate_sets.push_back(set);
      plan.candidate_methods.push_back(rules);
    }
    const bool attention =
        std::find(plan.candidate_sets.begin(), plan.candidate_sets.end(), CandidateSet::all) != plan.candidate_sets.end();
    if (attention && plan.stability)
      throw bad_job(source, "'ablation.stability' is measured on the MLP candidates only: it cannot go with 'ablation.candidates' \"all\"");
  }
  auto pairs = v.find("pairs");
  if (pairs != v.end()) {
    if (!pairs->is_array()) throw bad_job(source, "'ablation.pairs' must be an array of [ability id, ability id]");
    for (size_t p = 0; p < pairs->size(); p++) {
      const json& pair = (*pairs)[p];
      const std::string at = "'ablation.pairs[" + std::to_string(p) + "]'";
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string())
        throw bad_job(source, at + " must be [ability id, ability id], got " + describe_json(pair));
      if (pair[0] == pair[1]) throw bad_job(source, at + " names one ability twice");
      plan.pairs.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
    }
  }
  return plan;
}

bool required_bool(const json& obj, const char* key, const std::string& source) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_boolean()) throw bad_job(source, std::string("'shard.") + key + "' must be true or false");
  return it->get<bool>();
}

ShardSpec parse_shard(const json& v, const std::string& source) {
  if (!v.is_object()) throw bad_job(source, "'shard' must be an object");
  ShardSpec shard;
  shard.present = true;
  auto of = v.find("of");
  if (of == v.end() || !of->is_string() || of->get<std::string>().empty())
    throw bad_job(source, "'shard.of' must be a non-empty string (the whole job's fingerprint)");
  shard.of = of->get<std::string>();
  auto count = v.find("count");
  if (count == v.end() || !count->is_number_integer() || count->get<int64_t>() < 1)
    throw bad_job(source, "'shard.count' must be a positive integer");
  shard.count = count->get<int64_t>();
  auto index = v.find("index");
  if (index == v.end() || !index->is_number_integer() || index->get<int64_t>() < 0 || index->get<int64_t>() >= shard.count)
    throw bad_job(source, "'shard.index' must be an integer from 0 to shard.count - 1 (" + std::to_string(shard.count - 1) + ")");
  shard.index = index->get<int64_t>();
  shard.baseline = required_bool(v, "baseline", source);
  shard.random = required_bool(v, "random", source);
  return shard;
}

}  // namespace

const char* selection_name(Selection selection) {
  switch (selection) {
    case Selection::top:
      return "top";
    case Selection::top_chunked:
      return "top_chunked";
    case Selection::bottom:
      return "bottom";
    case Selection::random:
      return "random";
  }
  return "top";
}

const char* method_name(ImportanceMethod method) { return method == ImportanceMethod::paper ? "paper" : "signed"; }
const char* candidate_set_name(CandidateSet set) { return set == CandidateSet::all ? "all" : "mlp"; }

bool AblationPlan::has(Selection s) const { return std::find(selections.begin(), selections.end(), s) != selections.end(); }

uint64_t random_draw_seed(uint64_t seed, int64_t r) { return seed + static_cast<uint64_t>(r) * (uint64_t{1} << 53); }

json parse_job_json(const std::string& text, const std::string& source) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw bad_job(source, std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object()) throw bad_job(source, "not a JSON object");
  return root;
}

namespace {

// A sequence past the model's max length would be refused by nothing else before its activations
// are allocated (a 10 MB item asks for gigabytes), so the job's own limit is checked as it is read.
void check_max_length(const Job& job, const std::string& source) {
  if (job.max_length == 0) return;
  auto check = [&](int64_t length, const std::string& where) {
    if (length > job.max_length)
      throw bad_job(source, where + " is " + std::to_string(length) + " tokens long, more than 'model.max_length' (" +
                                std::to_string(job.max_length) + ")");
  };
  for (size_t i = 0; i < job.items.size(); i++) {
    const Item& item = job.items[i];
    const std::string label = item_label(i, item.id);
    if (item.generates())
      check(static_cast<int64_t>(item.context.size()) + item.generate.max_tokens, label + ": context + generate.max_tokens");
    for (size_t c = 0; c < item.choices.size(); c++) check(input_length(item, c), label + ": context + choices[" + std::to_string(c) + "]");
  }
  for (size_t a = 0; a < job.abilities.size(); a++) {
    const Ability& ability = job.abilities[a];
    for (size_t s = 0; s < ability.sequences.size(); s++)
      check(static_cast<int64_t>(ability.sequences[s].size()),
            "abilities[" + std::to_string(a) + "] ('" + ability.id + "'): sequences[" + std::to_string(s) + "]");
  }
}

}  // namespace

std::string parse_job_envelope(const json& root, const std::string& source) {
  auto protocol = root.find("protocol");
  if (protocol == root.end()) throw bad_job(source, "'protocol' is missing");
  if (!protocol->is_number_integer() || protocol->get<int64_t>() != kProtocolVersion)
    throw bad_job(source,
                  "'protocol' is " + describe_json(*protocol) + ", this runner speaks protocol " + std::to_string(kProtocolVersion));
  auto sub = root.find("subcommand");
  if (sub == root.end() || !sub->is_string()) throw bad_job(source, "'subcommand' must be a string");
  return sub->get<std::string>();
}

Job parse_job(const std::string& text, const std::string& source) {
  const json root = parse_job_json(text, source);
  Job job;
  job.subcommand = parse_job_envelope(root, source);

  auto model = root.find("model");
  if (model == root.end() || !model->is_object()) throw bad_job(source, "'model' must be an object");
  auto path = model->find("path");
  if (path == model->end() || !path->is_string() || path->get<std::string>().empty())
    throw bad_job(source, "'model.path' must be a non-empty string");
  job.model_path = path->get<std::string>();
  auto dtype = model->find("dtype");
  if (dtype != model->end() && !dtype->is_null()) {
    if (!dtype->is_string()) throw bad_job(source, "'model.dtype' must be a string");
    job.dtype = dtype->get<std::string>();
    if (job.dtype != "float32" && job.dtype != "bfloat16" && job.dtype != "float16")
      throw bad_job(source, "'model.dtype' is '" + job.dtype + "' (expected float32, bfloat16 or float16)");
  }

  auto max_length = model->find("max_length");
  if (max_length != model->end() && !max_length->is_null()) {
    if (!max_length->is_number_integer() || max_length->get<int64_t>() < 2)
      throw bad_job(source, "'model.max_length' must be an integer of at least 2");
    job.max_length = max_length->get<int64_t>();
  }

  auto device = root.find("device");
  if (device != root.end() && !device->is_null()) {
    if (!device->is_string() || device->get<std::string>().empty()) throw bad_job(source, "'device' must be a non-empty string");
    job.device = device->get<std::string>();
  }

  auto items = root.find("items");
  if (items == root.end() || !items->is_array()) throw bad_job(source, "'items' must be an array");
  std::set<std::string> ids;
  for (size_t i = 0; i < items->size(); i++) {
    job.items.push_back(parse_item((*items)[i], i, source));
    // ids key the result lines, so a repeated id would make two results indistinguishable
    if (!ids.insert(job.items.back().id).second)
      throw bad_job(source, item_label(i, job.items.back().id) + ": the id is used by an earlier item");
  }

  auto shard = root.find("shard");
  if (shard != root.end()) {
    if (job.subcommand != "profile") throw bad_job(source, "'shard' is for profile jobs only");
    job.shard = parse_shard(*shard, source);
  }

  if (job.subcommand == "profile") {
    auto abilities = root.find("abilities");
    // a shard may hold no ability: the baseline and the random control alone
    if (abilities == root.end() || !abilities->is_array() || (abilities->empty() && !job.shard.present))
      throw bad_job(source, "'abilities' must be a non-empty array (a profile job ablates at least one ability)");
    std::set<std::string> ability_ids;
    for (size_t a = 0; a < abilities->size(); a++) {
      job.abilities.push_back(parse_ability((*abilities)[a], a, source));
      const std::string& id = job.abilities.back().id;
      if (id == "random") throw bad_job(source, "abilities[" + std::to_string(a) + "]: the id 'random' is reserved for the random control");
      if (!ability_ids.insert(id).second)
        throw bad_job(source, "abilities[" + std::to_string(a) + "]: the id '" + id + "' is used by an earlier ability");
    }
    auto ablation = root.find("ablation");
    if (ablation == root.end()) throw bad_job(source, "'ablation' is missing (k values and selections)");
    job.ablation = parse_ablation(*ablation, source);
    for (size_t p = 0; p < job.ablation.pairs.size(); p++) {
      const std::string at = "'ablation.pairs[" + std::to_string(p) + "]'";
      // a pair's union needs both top sets, which a shard may not hold
      if (job.shard.present) throw bad_job(source, at + ": pairs are ablated in an unsharded job only");
      if (!job.ablation.has(Selection::top))
        throw bad_job(source, at + ": pairs ablate top sets, and 'ablation.selections' has no \"top\"");
      for (const std::string& id : {job.ablation.pairs[p].first, job.ablation.pairs[p].second}) {
        const bool known = std::any_of(job.abilities.begin(), job.abilities.end(), [&](const Ability& a) { return a.id == id; });
        if (!known) throw bad_job(source, at + " names '" + id + "', which is no ability of the job");
      }
    }
  }
  check_max_length(job, source);
  return job;
}

Job load_job(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RunnerError(ErrorCode::bad_job, path + ": cannot read the job file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_job(ss.str(), path);
}

void check_token_ids(const Job& job, int64_t vocab_size) {
  auto check = [&](const std::vector<int64_t>& tokens, const std::string& where) {
    for (size_t t = 0; t < tokens.size(); t++) {
      if (tokens[t] >= vocab_size)
        throw RunnerError(ErrorCode::bad_job, where + "[" + std::to_string(t) + "] = " + std::to_string(tokens[t]) +
                                                  " is outside the model's vocabulary (0.." + std::to_string(vocab_size - 1) + ")");
    }
  };
  for (size_t i = 0; i < job.items.size(); i++) {
    const Item& item = job.items[i];
    const std::string label = item_label(i, item.id);
    check(item.context, label + ": context");
    for (size_t c = 0; c < item.choices.size(); c++) check(item.choices[c], label + ": choices[" + std::to_string(c) + "]");
    for (size_t s = 0; s < item.generate.stop.size(); s++)
      check(item.generate.stop[s], label + ": generate.stop[" + std::to_string(s) + "]");
  }
  for (size_t a = 0; a < job.abilities.size(); a++) {
    const Ability& ability = job.abilities[a];
    for (size_t s = 0; s < ability.sequences.size(); s++)
      check(ability.sequences[s], "abilities[" + std::to_string(a) + "] ('" + ability.id + "'): sequences[" + std::to_string(s) + "]");
  }
}

std::vector<std::pair<size_t, size_t>> plan_padded_batches(size_t count, const std::function<RowsAndLength(size_t)>& shape,
                                                           int64_t max_tokens) {
  std::vector<std::pair<size_t, size_t>> batches;
  size_t first = 0;
  int64_t rows = 0, longest = 0;
  for (size_t i = 0; i < count; i++) {
    const RowsAndLength item = shape(i);
    if (i > first && (rows + item.rows) * std::max(longest, item.length) > max_tokens) {  // close the batch before this item
      batches.emplace_back(first, i);
      first = i;
      rows = 0;
      longest = 0;
    }
    rows += item.rows;
    longest = std::max(longest, item.length);
  }
  if (first < count) batches.emplace_back(first, count);
  return batches;
}

std::vector<std::pair<size_t, size_t>> plan_batches(const std::vector<Item>& items, int64_t max_tokens) {
  // one row per item: the packed context and choices, or a generation row that grows to
  // context + max_tokens
  return plan_padded_batches(
      items.size(),
      [&](size_t i) {
        const Item& item = items[i];
        return RowsAndLength{1,
                             item.generates() ? static_cast<int64_t>(item.context.size()) + item.generate.max_tokens : packed_length(item)};
      },
      max_tokens);
}

}  // namespace bprof
