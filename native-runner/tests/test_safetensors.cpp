// The safetensors header parser must reject every inconsistency before any data is read, with a
// SafetensorsError naming the file and the tensor at fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <random>

#include "errors.h"
#include "safetensors.h"
#include "support.h"

namespace bprof {
namespace {

using test::safetensors_bytes;
using test::TempDir;
using test::write_file;

const uint8_t* as_bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

SafetensorsHeader parse(const std::string& file_bytes) {
  return parse_safetensors_header(as_bytes(file_bytes), file_bytes.size(), "test.safetensors");
}

TEST(Safetensors, ParsesAWellFormedFile) {
  TempDir dir;
  std::vector<test::F32Tensor> tensors = {{"b.weight", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"a.bias", {2}, {7, 8}}};
  write_file(dir.file("m.safetensors"), safetensors_bytes(tensors));

  SafetensorsFile file(dir.file("m.safetensors"));
  const SafetensorsHeader& h = file.header();
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "b.weight");  // data order, not name order
  EXPECT_EQ(h.tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h.tensors[0].dtype, DType::F32);
  EXPECT_EQ(h.metadata.at("format"), "pt");
  const TensorInfo* bias = h.find("a.bias");
  ASSERT_NE(bias, nullptr);
  float values[2];
  std::memcpy(values, file.data(*bias), sizeof values);
  EXPECT_EQ(values[0], 7.0f);
  EXPECT_EQ(values[1], 8.0f);
}

TEST(Safetensors, AcceptsEmptyTensorsHalfTypesAndPadding) {
  std::string header = R"({"e":{"dtype":"F32","shape":[0,5],"data_offsets":[0,0]},)"
                       R"("h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},)"
                       R"("b":{"dtype":"BF16","shape":[],"data_offsets":[4,6]}})";
  header += "   ";  // writers pad the header with spaces to align the data
  SafetensorsHeader h = parse(safetensors_bytes(header, std::string(6, '\0')));
  ASSERT_EQ(h.tensors.size(), 3u);
  EXPECT_EQ(h.find("e")->numel(), 0);
  EXPECT_EQ(h.find("b")->numel(), 1);  // a scalar
}

// Found by review while fuzzing: the parser accepts an empty tensor whatever its other dimensions
// (as it must), but numel() multiplied them first, overflowing int64 (UB) before meeting the 0.
TEST(Safetensors, EmptyTensorWithHugeDimensionsHasNoElements) {
  SafetensorsHeader h = parse(safetensors_bytes(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}})", ""));
  ASSERT_EQ(h.tensors.size(), 1u);
  EXPECT_EQ(h.tensors[0].numel(), 0);
  EXPECT_EQ(h.tensors[0].shape, (std::vector<int64_t>{4294967296, 4294967296, 0}));
}

// --- malformed files ------------------------------------------------------

struct BadCase {
  const char* label;
  std::string header;   // JSON text
  size_t data_bytes;    // size of the (zero) data section
  const char* tensor;   // the tensor the error must name ("" when there is none)
  const char* message;  // a fragment the message must contain
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) { return os << c.label; }

class MalformedHeader : public ::testing::TestWithParam<BadCase> {};

TEST_P(MalformedHeader, IsRejectedNamingTheTensor) {
  const BadCase& c = GetParam();
  std::string bytes = safetensors_bytes(c.header, std::string(c.data_bytes, '\0'));
  try {
    parse(bytes);
    FAIL() << "accepted: " << c.header;
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_safetensors);
    EXPECT_EQ(e.file(), "test.safetensors");
    EXPECT_EQ(e.tensor(), c.tensor) << e.what();
    std::string msg = e.what();
    EXPECT_NE(msg.find("test.safetensors"), std::string::npos) << msg;
    if (*c.tensor) {
      EXPECT_NE(msg.find(std::string("'") + c.tensor + "'"), std::string::npos) << msg;
    }
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
  }
}

const char* kOk = R"("ok":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

INSTANTIATE_TEST_SUITE_P(
    Safetensors, MalformedHeader,
    ::testing::Values(
        BadCase{"NotJson", "{\"x\": ", 0, "", "not valid JSON"}, BadCase{"NotAnObject", "[1, 2]", 0, "", "not a JSON object"},
        BadCase{"EntryNotObject", R"({"w": 3})", 0, "w", "not a JSON object"},
        BadCase{"UnknownDtype", R"({"w":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})", 4, "w", "unknown dtype 'F33'"},
        BadCase{"SubByteDtype", R"({"w":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", 1, "w", "unknown dtype 'F4'"},
        BadCase{"DtypeNotString", R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", 4, "w", "'dtype'"},
        BadCase{"MissingDtype", R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4, "w", "missing field 'dtype'"},
        BadCase{"MissingShape", R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", 4, "w", "missing field 'shape'"},
        BadCase{"MissingOffsets", R"({"w":{"dtype":"F32","shape":[1]}})", 4, "w", "missing field 'data_offsets'"},
        BadCase{"UnknownField", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", 4, "w", "unknown field 'x'"},
        BadCase{"NegativeDim", R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4, "w", "non-negative integer"},
        BadCase{"FloatDim", R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4, "w", "non-negative integer"},
        BadCase{"ShapeNotArray", R"({"w":{"dtype":"F32","shape":4,"data_offsets":[0,4]}})", 4, "w", "'shape' is not an array"},
        BadCase{"HugeShape", R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,4]}})", 4, "w", "does not match"},
        BadCase{"OffsetsNotPair", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4, "w", "[begin, end]"},
        BadCase{"NegativeOffset", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", 4, "w", "[begin, end]"},
        BadCase{"BeginAfterEnd", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4, "w", "is after end"},
        BadCase{"EndPastData", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8, "w", "beyond the data section"},
        BadCase{"SizeMismatch", R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 12, "w", "does not match"},
        BadCase{"Overlap", std::string("{") + kOk + R"(,"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12, "w",
                "overlap tensor 'ok'"},
        BadCase{"Hole", std::string("{") + kOk + R"(,"w":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})", 16, "w", "hole of 4 bytes"},
        BadCase{"TrailingBytes", std::string("{") + kOk + "}", 12, "", "4 bytes after the last tensor"},
        BadCase{"DuplicateTensor", std::string("{") + kOk + R"(,"ok":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8, "ok",
                "more than once"},
        BadCase{"DuplicateField", R"({"w":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}})", 4, "w",
                "field 'dtype' appears more than once"},
        BadCase{"MetadataNotStrings", std::string("{") + kOk + R"(,"__metadata__":{"a":1}})", 8, "", "__metadata__"},
        BadCase{"EmptyName", R"({"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4, "", "empty name"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.label); });

TEST(Safetensors, RejectsFilesShorterThanTheLengthPrefix) {
  std::string bytes("\x01\x00\x00", 3);
  try {
    parse(bytes);
    FAIL();
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find("shorter than the 8-byte header length"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, RejectsAHeaderLengthPastTheEndOfTheFile) {
  std::string bytes = safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", "");
  bytes[0] = static_cast<char>(0xff);  // claims a longer header than the file holds
  EXPECT_THROW(parse(bytes), SafetensorsError);
}

TEST(Safetensors, TruncatedFileNamesTheTensorThatNoLongerFits) {
  TempDir dir;
  std::vector<test::F32Tensor> tensors = {{"first", {4}, {1, 2, 3, 4}}, {"second", {4}, {5, 6, 7, 8}}};
  std::string bytes = safetensors_bytes(tensors);
  write_file(dir.file("m.safetensors"), bytes.substr(0, bytes.size() - 6));
  try {
    SafetensorsFile file(dir.file("m.safetensors"));
    FAIL();
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.file(), dir.file("m.safetensors"));
    EXPECT_EQ(e.tensor(), "second");
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, DeeplyNestedHeaderIsAnErrorNotAStackOverflow) {
  const size_t depth = 500000;
  std::string header = R"({"w":{"dtype":"F32","shape":)" + std::string(depth, '[') + std::string(depth, ']') + R"(,"data_offsets":[0,4]}})";
  try {
    parse(safetensors_bytes(header, std::string(4, '\0')));
    FAIL();
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.tensor(), "w");
  }
}

TEST(Safetensors, MissingFileIsASafetensorsError) { EXPECT_THROW(SafetensorsFile("/nonexistent/model.safetensors"), SafetensorsError); }

// Random corruption of a valid file must end in a SafetensorsError or a valid header: never in
// another exception, a crash or a hang. A poor man's fuzzer until libFuzzer runs on this parser.
TEST(Safetensors, SurvivesRandomCorruption) {
  std::vector<test::F32Tensor> tensors = {{"a", {2, 2}, {1, 2, 3, 4}}, {"b", {3}, {5, 6, 7}}};
  const std::string good = safetensors_bytes(tensors);
  std::mt19937 rng(7);
  int rejected = 0;
  for (int round = 0; round < 3000; round++) {
    std::string bytes = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; f++) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
    if (rng() % 8 == 0) bytes.resize(rng() % bytes.size());
    try {
      parse(bytes);
    } catch (const SafetensorsError&) {
      rejected++;
    }
  }
  EXPECT_GT(rejected, 1000);
}

// Replays the libFuzzer corpus (native-runner/fuzz/corpus, see fuzz/README.md) with the g++ build,
// so CI, which has no clang, still checks every input the fuzzer found interesting: each must end
// in a header whose tensors lie inside the buffer, or in a SafetensorsError, as in the harness.
#ifndef BPROF_FUZZ_CORPUS_DIR
#error "BPROF_FUZZ_CORPUS_DIR must name native-runner/fuzz/corpus (a compile definition in CMakeLists.txt)"
#endif
TEST(Safetensors, FuzzCorpusReplays) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(BPROF_FUZZ_CORPUS_DIR))
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 20u) << "fuzz corpus missing or nearly empty: " << BPROF_FUZZ_CORPUS_DIR;

  size_t accepted = 0, rejected = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    const std::string bytes = test::read_file(path);
    try {
      SafetensorsHeader h = parse(bytes);
      accepted++;
      EXPECT_LE(h.data_start, bytes.size());
      EXPECT_EQ(h.data_start + h.data_size, bytes.size());
      for (const auto& t : h.tensors) {
        EXPECT_LE(t.begin, t.end) << t.name;
        EXPECT_LE(h.data_start + t.end, bytes.size()) << t.name;
        EXPECT_EQ(static_cast<uint64_t>(t.numel()) * dtype_size(t.dtype), t.end - t.begin) << t.name;
      }
    } catch (const SafetensorsError&) {
      rejected++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw something other than SafetensorsError: " << e.what();
    } catch (...) {
      ADD_FAILURE() << "threw a non-std exception";
    }
  }
  EXPECT_EQ(accepted + rejected, files.size());
}

}  // namespace
}  // namespace bprof
