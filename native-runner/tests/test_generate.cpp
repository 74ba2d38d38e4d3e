// Greedy generation with cached contexts and cached own tokens, against the plainest possible
// decoder: the whole sequence through the model again for every new token.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "config.h"
#include "engine.h"
#include "llama.h"
#include "support.h"

namespace bprof {
namespace {

using test::TempDir;
using test::TinyLlamaSpec;

// Greedy decoding by full recomputation; stops like Engine::generate.
Generation naive_greedy(const LlamaModel& model, const Item& item) {
  c10::InferenceMode guard;
  Generation g;
  std::vector<int64_t> sequence = item.context;
  while (static_cast<int64_t>(g.tokens.size()) < item.generate.max_tokens) {
    at::Tensor tokens = at::from_blob(sequence.data(), {1, static_cast<int64_t>(sequence.size())}, at::kLong).clone();
    const int64_t next = model.forward(tokens)[0][static_cast<int64_t>(sequence.size()) - 1].to(at::kFloat).argmax().item<int64_t>();
    sequence.push_back(next);
    g.tokens.push_back(next);
    for (const auto& stop : item.generate.stop) {
      if (g.tokens.size() >= stop.size() && std::equal(stop.rbegin(), stop.rend(), g.tokens.rbegin())) g.stopped = true;
    }
    if (g.stopped) break;
  }
  return g;
}

Item generation_item(const std::string& id, std::vector<int64_t> context, int64_t max_tokens, std::vector<std::vector<int64_t>> stop = {}) {
  Item item{id, std::move(context), {}};
  item.generate.max_tokens = max_tokens;
  item.generate.stop = std::move(stop);
  return item;
}

TEST(Generate, EqualsFullRecomputationInEveryFamily) {
  std::vector<TinyLlamaSpec> specs(4);
  specs[1].model_type = "mistral";
  specs[1].sliding_window = 5;  // shorter than the sequences: the window over cached own tokens matters
  specs[2].model_type = "qwen2";
  specs[3].model_type = "qwen3";
  for (const TinyLlamaSpec& spec : specs) {
    TempDir dir;
    test::write_tiny_llama(dir.path(), spec);
    EngineOptions options;
    options.model_dir = dir.path();
    Engine engine(load_model_config(dir.path()), options);

    // contexts of different lengths in one batch; different budgets, so rows leave at different steps
    std::vector<Item> items = {generation_item("a", {256, 72, 101, 108}, 9), generation_item("b", {256}, 3),
                               generation_item("c", {256, 84, 104, 101, 32, 99, 97, 116, 32, 115, 97, 116}, 14),
                               generation_item("d", {256, 65, 66}, 1)};
    // a stop sequence the greedy continuation of "a" is known to produce: its 3rd and 4th tokens
    Generation free = naive_greedy(engine.model(), items[0]);
    items[0].generate.stop = {{999999}, {free.tokens[2], free.tokens[3]}};

    std::vector<const Item*> batch;
    for (const Item& item : items) batch.push_back(&item);
    std::vector<Generation> generated = engine.generate(batch);
    ASSERT_EQ(generated.size(), items.size());
    for (size_t i = 0; i < items.size(); i++) {
      Generation expected = naive_greedy(engine.model(), items[i]);
      EXPECT_EQ(generated[i].tokens, expected.tokens) << spec.model_type << " item " << items[i].id;
      EXPECT_EQ(generated[i].stopped, expected.stopped) << spec.model_type << " item " << items[i].id;
    }
    EXPECT_TRUE(generated[0].stopped);
    EXPECT_LE(generated[0].tokens.size(), 4u);
    EXPECT_EQ(generated[2].tokens.size(), 14u);
    EXPECT_FALSE(generated[2].stopped);
    EXPECT_EQ(generated[3].tokens.size(), 1u);
  }
}

TEST(Generate, BatchedEqualsOneByOne) {
  TempDir dir;
  test::write_tiny_llama(dir.path());
  EngineOptions options;
  options.model_dir = dir.path();
  Engine engine(load_model_config(dir.path()), options);
  std::vector<Item> items;
  for (int i = 0; i < 6; i++) {
    std::vector<int64_t> context = {256};
    for (int j = 0; j < 2 + 3 * i; j++) context.push_back(40 + (i * 11 + j * 7) % 80);
    items.push_back(generation_item("g" + std::to_string(i), context, 4 + i));
  }
  std::vector<const Item*> all;
  for (const Item& item : items) all.push_back(&item);
  std::vector<Generation> batched = engine.generate(all);
  for (size_t i = 0; i < items.size(); i++) EXPECT_EQ(engine.generate({&items[i]})[0].tokens, batched[i].tokens) << i;
}

}  // namespace
}  // namespace bprof
