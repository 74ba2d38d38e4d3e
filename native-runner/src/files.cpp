#include "files.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "errors.h"

namespace bprof {

namespace {

RunnerError write_error(const std::string& path, int err) {
  ErrorCode code = (err == ENOSPC || err == EDQUOT) ? ErrorCode::resources : ErrorCode::bad_arguments;
  return RunnerError(code, path + ": cannot write: " + std::strerror(err));
}

// A new temporary beside `path`, created exclusively and never through a link: a run folder can
// come with a repository, and a link or a hard link planted at a fixed temporary name would make
// the runner truncate and write a file of the user's. Its name is unique to this process and call.
int create_temporary(const std::string& path, std::string& tmp) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0;; attempt++) {
    tmp = path + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST || attempt >= 64) return fd;
  }
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  // A result file replaces a file, never a link, a device or a FIFO that stands where it goes.
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode))
    throw RunnerError(ErrorCode::bad_arguments,
                      path + ": not a regular file (a link, a folder, a device or a FIFO): nothing is written there");
  std::string tmp;
  int fd = create_temporary(path, tmp);
  if (fd < 0) throw write_error(tmp, errno);
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;  // a signal (SIGINT) may interrupt the write; retry
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw write_error(tmp, err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // the data must be on disk before the rename makes it visible under the final name
  int err = ::fsync(fd) == 0 ? 0 : errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw write_error(tmp, err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw write_error(path, err);
  }
}

bool read_file_if_exists(const std::string& path, std::string& content) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RunnerError(ErrorCode::bad_arguments, path + ": cannot read");
  std::ostringstream ss;
  ss << in.rdbuf();
  content = ss.str();
  return true;
}

void prepare_output_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw RunnerError(ErrorCode::bad_arguments, "--out " + dir + ": cannot create: " + ec.message());
  if (!std::filesystem::is_directory(dir, ec)) throw RunnerError(ErrorCode::bad_arguments, "--out " + dir + ": not a directory");
  if (::access(dir.c_str(), W_OK) != 0)
    throw RunnerError(ErrorCode::bad_arguments, "--out " + dir + ": not writable: " + std::strerror(errno));
}

}  // namespace bprof

namespace bprof {

namespace {
int remove_entry(const char* path, const struct stat*, int type, struct FTW*) {
  // depth first (FTW_DEPTH): a folder comes after its entries, so it is empty by then
  if (type == FTW_DP)
    ::rmdir(path);
  else
    ::unlink(path);
  return 0;  // go on whatever failed: remove what can be removed
}
}  // namespace

void remove_tree(const std::string& path) { ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

}  // namespace bprof
