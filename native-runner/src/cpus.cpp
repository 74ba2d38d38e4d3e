#include "cpus.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace bprof {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

bool read_first_line(const std::string& path, std::string& line) {
  std::ifstream in(path);
  return in && static_cast<bool>(std::getline(in, line));
}

// mountinfo writes a space, tab, newline or backslash in a path as \ and three octal digits.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 2])) && std::isdigit(static_cast<unsigned char>(s[i + 3]))) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

struct Mount {
  std::string root;   // the folder of the hierarchy mounted here
  std::string point;  // where
};

// The first mount of `fstype` ("cgroup" with `option` among its super options, or "cgroup2").
bool find_mount(const std::string& mountinfo, const std::string& fstype, const std::string& option, Mount& mount) {
  std::ifstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream words(line);
    for (std::string w; words >> w;) fields.push_back(w);
    auto dash = std::find(fields.begin(), fields.end(), "-");
    if (dash == fields.end() || dash - fields.begin() < 5 || fields.end() - dash < 4) continue;
    if (*(dash + 1) != fstype) continue;
    if (!option.empty()) {
      std::vector<std::string> options = split(*(dash + 3), ',');
      if (std::find(options.begin(), options.end(), option) == options.end()) continue;
    }
    mount.root = unescape(fields[3]);
    mount.point = unescape(fields[4]);
    return true;
  }
  return false;
}

// Quota / period in one cgroup folder, 0 when unlimited or unreadable.
double folder_limit(const std::string& dir, bool v1) {
  std::string line;
  if (v1) {
    std::string quota, period;
    if (!read_first_line(dir + "/cpu.cfs_quota_us", quota) || !read_first_line(dir + "/cpu.cfs_period_us", period)) return 0;
    try {
      double q = std::stod(quota), p = std::stod(period);
      return q > 0 && p > 0 ? q / p : 0;
    } catch (const std::exception&) {
      return 0;
    }
  }
  if (!read_first_line(dir + "/cpu.max", line)) return 0;
  std::istringstream in(line);
  std::string quota, period;
  in >> quota >> period;
  if (quota == "max" || quota.empty()) return 0;
  try {
    double q = std::stod(quota), p = period.empty() ? 100000.0 : std::stod(period);
    return q > 0 && p > 0 ? q / p : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

int affinity_cores() {
#if defined(__linux__)
  for (int cpus = 1024; cpus <= (1 << 20); cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (set == nullptr) break;
    size_t size = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      int n = CPU_COUNT_S(size, set);
      CPU_FREE(set);
      if (n > 0) return n;
      break;
    }
    CPU_FREE(set);
    if (errno != EINVAL) break;  // EINVAL: the kernel's mask is larger than this one
  }
#endif
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0) return static_cast<int>(online);
  return std::max(1u, std::thread::hardware_concurrency());
}

double cgroup_cpu_limit(const std::string& root) {
  // the process's cgroups: "hierarchy:controllers:path"; v1's cpu controller wins over v2
  std::ifstream in(root + "/proc/self/cgroup");
  std::string line, v1_path, v2_path;
  bool v1 = false, v2 = false;
  while (std::getline(in, line)) {
    size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string hierarchy = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::vector<std::string> names = split(controllers, ',');
    if (std::find(names.begin(), names.end(), "cpu") != names.end()) {
      v1 = true;
      v1_path = path;
    } else if (hierarchy == "0" && controllers.empty()) {
      v2 = true;
      v2_path = path;
    }
  }
  if (!v1 && !v2) return 0;
  const std::string cgroup_path = v1 ? v1_path : v2_path;
  Mount mount;
  if (!find_mount(root + "/proc/self/mountinfo", v1 ? "cgroup" : "cgroup2", v1 ? "cpu" : "", mount)) return 0;

  // the cgroup's folder under the mount: its path less the mount's root (in a cgroup namespace the
  // path is "/" and so is the root); outside the mount's root, only the mount's own files count
  std::string relative;
  if (mount.root == "/")
    relative = cgroup_path;
  else if (cgroup_path == mount.root || cgroup_path.rfind(mount.root + "/", 0) == 0)
    relative = cgroup_path.substr(mount.root.size());
  while (!relative.empty() && relative.back() == '/') relative.pop_back();

  double limit = 0;
  for (;;) {
    double here = folder_limit(root + mount.point + relative, v1);
    if (here > 0 && (limit == 0 || here < limit)) limit = here;
    if (relative.empty()) break;
    size_t slash = relative.rfind('/');
    relative = slash == std::string::npos ? "" : relative.substr(0, slash);
  }
  return limit;
}

int usable_cores() {
  int cores = affinity_cores();
#if defined(__linux__)
  double limit = cgroup_cpu_limit();
  if (limit > 0) cores = std::min(cores, static_cast<int>(std::ceil(limit - 1e-9)));
#endif
  return std::max(1, cores);
}

}  // namespace bprof
