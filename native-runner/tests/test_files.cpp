// Result files in a folder that may have come with a repository (a resumed run's): a write makes
// a new file and renames it into place, never writing through a link or into what stands there.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "errors.h"
#include "files.h"
#include "support.h"

namespace bprof {
namespace {

using test::TempDir;

TEST(Files, WriteNeverGoesThroughALinkAtTheOldFixedTemporaryName) {
  TempDir dir;
  test::write_file(dir.file("victim"), "the user's file\n");
  // NAME.tmp was the temporary's one name: a link planted there was truncated and written through.
  ASSERT_EQ(::symlink(dir.file("victim").c_str(), dir.file("scores.jsonl.tmp").c_str()), 0);
  write_file_atomic(dir.file("scores.jsonl"), "{}\n");
  EXPECT_EQ(test::read_file(dir.file("victim")), "the user's file\n");
  EXPECT_EQ(test::read_file(dir.file("scores.jsonl")), "{}\n");
}

TEST(Files, WriteNeverGoesThroughAHardLinkAtTheOldFixedTemporaryName) {
  TempDir dir;
  test::write_file(dir.file("victim"), "the user's file\n");
  ASSERT_EQ(::link(dir.file("victim").c_str(), dir.file("scores.jsonl.tmp").c_str()), 0);
  write_file_atomic(dir.file("scores.jsonl"), "{}\n");
  EXPECT_EQ(test::read_file(dir.file("victim")), "the user's file\n");
}

TEST(Files, ALinkWhereTheFileGoesIsRefusedAndItsTargetKept) {
  TempDir dir;
  test::write_file(dir.file("victim"), "the user's file\n");
  ASSERT_EQ(::symlink(dir.file("victim").c_str(), dir.file("baseline.jsonl").c_str()), 0);
  try {
    write_file_atomic(dir.file("baseline.jsonl"), "{}\n");
    FAIL() << "a link where a result file goes was written";
  } catch (const RunnerError& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_arguments);
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::read_file(dir.file("victim")), "the user's file\n");
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("baseline.jsonl")));
}

TEST(Files, AFifoWhereTheFileGoesIsRefusedNotReplaced) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("events").c_str(), 0600), 0);
  EXPECT_THROW(write_file_atomic(dir.file("events"), "{}\n"), RunnerError);
  struct stat st {};
  ASSERT_EQ(::lstat(dir.file("events").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO is still a FIFO";
}

TEST(Files, ARegularFileIsReplacedWholeAndNoTemporaryStays) {
  TempDir dir;
  test::write_file(dir.file("results"), "old\n");
  write_file_atomic(dir.file("results"), "new\n");
  EXPECT_EQ(test::read_file(dir.file("results")), "new\n");
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

}  // namespace
}  // namespace bprof
