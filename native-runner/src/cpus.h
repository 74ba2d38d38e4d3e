// How many cores this process may use: its CPU affinity, capped by its cgroup's CPU quota. The
// runner's thread count when `--threads` is not given. Torch-free.
#pragma once

#include <string>

namespace bprof {

// The cores of this process's affinity mask (sched_getaffinity), else the online cores; at least 1.
int affinity_cores();

// The CPU quota of this process's cgroup in cores (quota / period), the lowest along the cgroup's
// path up to its mount: cgroup v1's cpu.cfs_quota_us / cpu.cfs_period_us where the cpu controller is
// mounted as v1, else cgroup v2's cpu.max. 0 when there is none ("max", -1, or no cgroup files).
// `root` stands for "/" (its proc/self/cgroup, proc/self/mountinfo and mount points), for tests.
double cgroup_cpu_limit(const std::string& root = "");

// min(affinity_cores(), ceil(cgroup_cpu_limit())), at least 1.
int usable_cores();

}  // namespace bprof
