#include "events.h"

#include <nlohmann/json.hpp>

namespace bprof {

// ordered: "type" comes first on every line, which is kinder to people reading a log
using json = nlohmann::ordered_json;

namespace {

// Messages may quote file names or header bytes that are not UTF-8: replace bad bytes rather than
// let the serializer throw in the middle of reporting an error.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

void EventWriter::emit(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void EventWriter::start(const std::string& subcommand, const std::string& runner_version, const std::string& device, int threads) {
  emit(dump({{"type", "start"}, {"subcommand", subcommand}, {"runner_version", runner_version}, {"device", device}, {"threads", threads}}));
}

void EventWriter::progress(const std::string& phase, int64_t done, int64_t total) {
  emit(dump({{"type", "progress"}, {"phase", phase}, {"done", done}, {"total", total}}));
}

void EventWriter::progress(const std::string& phase, int64_t done, int64_t total, const std::string& ability) {
  emit(dump({{"type", "progress"}, {"phase", phase}, {"done", done}, {"total", total}, {"ability", ability}}));
}

void EventWriter::progress(const std::string& phase, int64_t done, int64_t total, const ScoredVariant& variant) {
  const json ability = variant.ability.empty() ? json(nullptr) : json(variant.ability);
  const json method = variant.method.empty() ? json(nullptr) : json(variant.method);
  json named = {{"ability", ability}, {"method", method}, {"selection", variant.selection}, {"k", variant.k}};
  if (variant.draw >= 0) named["draw"] = variant.draw;
  emit(dump({{"type", "progress"}, {"phase", phase}, {"done", done}, {"total", total}, {"variant", named}}));
}

void EventWriter::variant(const std::string& ability, const std::string& selection, double k, int64_t n, const std::string& file,
                          bool resumed, int64_t draw) {
  json event = {{"type", "variant"},
                {"ability", ability.empty() ? json(nullptr) : json(ability)},
                {"selection", selection},
                {"k", k},
                {"n", n},
                {"file", file},
                {"resumed", resumed}};
  if (draw >= 0) event["draw"] = draw;
  emit(dump(event));
}

void EventWriter::warning(const std::string& message) { emit(dump({{"type", "warning"}, {"message", message}})); }

void EventWriter::result(const std::string& file, int64_t items) { emit(dump({{"type", "result"}, {"file", file}, {"items", items}})); }

void EventWriter::summary(double seconds) { emit(dump({{"type", "summary"}, {"status", "ok"}, {"seconds", seconds}})); }

void EventWriter::error(const std::string& code, const std::string& message) {
  emit(dump({{"type", "error"}, {"code", code}, {"message", message}}));
}

bool ProgressThrottle::should_emit(int64_t done, int64_t total) {
  auto now = std::chrono::steady_clock::now();
  if (!emitted_ || done == 0 || done >= total || now - last_ >= interval_) {
    emitted_ = true;
    last_ = now;
    return true;
  }
  return false;
}

}  // namespace bprof
