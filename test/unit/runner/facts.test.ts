import assert from "node:assert/strict";
import { test } from "node:test";
import { buildEnd, buildFacts, factLines, installCommands, missingMessage, type BuildFacts } from "../../../src/core/runner/facts";

const WHERE = [
  "@@bprof os ubuntu debian 24.04",
  "@@bprof uid 1000",
  "@@bprof cache /home/ada/.cache/bprof/runner",
  "@@bprof cmake /usr/bin/cmake 3.28.3",
  "@@bprof generator Ninja",
  "@@bprof jobs 8",
  "@@bprof missing c++",
  "@@bprof missing libtorch",
  "@@bprof missing nlohmann-json",
  "@@bprof key 0123456789abcdef",
  "@@bprof last_seconds 61",
  "",
].join("\n");

function facts(overrides: Partial<BuildFacts> = {}): BuildFacts {
  return { ...buildFacts(factLines(WHERE))!, ...overrides };
}

test("build-runner.sh's facts: the host, what it has, what it lacks, the key", () => {
  const f = buildFacts(factLines(`some build output\n${WHERE}[3/26] Building CXX object\n`))!;
  assert.deepEqual(f.os, { id: "ubuntu", like: ["debian"], version: "24.04" });
  assert.equal(f.root, false);
  assert.equal(f.jobs, 8);
  assert.deepEqual(f.missing, ["c++", "libtorch", "nlohmann-json"]);
  assert.equal(f.key, "0123456789abcdef");
  assert.equal(f.lastSeconds, 61);
  assert.equal(f.torch, undefined);
  assert.equal(f.cached, undefined);
  assert.equal(buildFacts(factLines("no facts here\n")), undefined, "an answer without a key is no answer");
  const torch = buildFacts(
    factLines(
      `${WHERE}@@bprof torch /opt/t/share/cmake/Torch\n@@bprof torch_version 2.5.1\n@@bprof torch_from python python3\n@@bprof torch_cuda yes\n`,
    ),
  )!;
  assert.deepEqual(torch.torch, { dir: "/opt/t/share/cmake/Torch", version: "2.5.1", from: "python python3", cuda: true });
});

test("how a build ended: the runner, or the step that failed and its log", () => {
  assert.deepEqual(buildEnd(factLines("@@bprof built /c/k/bprof-runner\n@@bprof seconds 44\n@@bprof runner /c/k/bprof-runner\n")), {
    runner: "/c/k/bprof-runner",
    built: { seconds: 44 },
  });
  assert.deepEqual(buildEnd(factLines("@@bprof runner /c/k/bprof-runner\n")), { runner: "/c/k/bprof-runner" }, "cached: nothing built");
  assert.deepEqual(buildEnd(factLines("@@bprof step compile\nerror: x\n@@bprof failed compile\n@@bprof log /c/failed-k.log\n")), {
    failed: { step: "compile", log: "/c/failed-k.log" },
  });
});

test("install commands: the host's package manager, sudo unless root, PyTorch's wheel where no package has libtorch", () => {
  assert.deepEqual(installCommands(facts()), ["sudo apt-get install -y g++ libtorch-dev nlohmann-json3-dev"]);
  assert.deepEqual(installCommands(facts({ root: true, missing: ["libtorch (none at /opt/x)"] })), ["apt-get install -y libtorch-dev"]);
  // Ubuntu 22.04 has no libtorch-dev: PyTorch's CPU wheel instead.
  assert.deepEqual(installCommands(facts({ os: { id: "ubuntu", like: ["debian"], version: "22.04" }, missing: ["cmake", "libtorch"] })), [
    "sudo apt-get install -y cmake",
    "python3 -m pip install torch --index-url https://download.pytorch.org/whl/cpu",
  ]);
  assert.deepEqual(
    installCommands(
      facts({ os: { id: "rocky", like: ["rhel", "centos", "fedora"], version: "9.4" }, missing: ["c++", "nlohmann-json", "libtorch"] }),
      "/venv/bin/python",
    ),
    ["sudo dnf install -y gcc-c++ json-devel", "/venv/bin/python -m pip install torch --index-url https://download.pytorch.org/whl/cpu"],
  );
  assert.deepEqual(installCommands(facts({ os: { id: "darwin", like: [], version: "" }, missing: ["c++", "cmake", "libtorch"] })), [
    "xcode-select --install",
    "brew install cmake pytorch",
  ]);
  assert.deepEqual(installCommands(facts({ conda: "/opt/conda/envs/lm", missing: ["c++", "libtorch"] })), [
    "conda install -y -c conda-forge cxx-compiler libtorch",
  ]);
  // A CUDA libtorch without the toolkit: no CPU wheel suggested.
  const cuda = installCommands(
    facts({
      os: { id: "rocky", like: ["rhel"], version: "9" },
      missing: ["cuda-toolkit"],
      torch: { dir: "/t", version: "2.5.1", from: "python", cuda: true },
    }),
  );
  assert.deepEqual(cuda, ["# the CUDA toolkit matching your PyTorch: https://developer.nvidia.com/cuda-downloads"]);
  assert.deepEqual(installCommands(facts({ os: { id: "gentoo", like: [], version: "" }, missing: ["c++", "make"] })), [
    "# with your system's package manager: a C++ compiler, make (or ninja)",
  ]);
});

test("the message says what is missing where, then the commands, then the way around it", () => {
  const message = missingMessage(facts({ missing: ["libtorch"] }), "gpu1");
  const [first, ...rest] = message.split("\n");
  assert.equal(
    first,
    "bprof-runner must be built on gpu1 from the sources that came with Benchmark Profiler, and libtorch (PyTorch's C++ library) is missing there. Install with:",
  );
  assert.deepEqual(rest, [
    "  sudo apt-get install -y libtorch-dev",
    "then try again; or point benchmarkProfiler.runnerPath (or BPROF_RUNNER, --runner, target.*.runner) at a runner you built.",
  ]);
  assert.match(
    missingMessage(facts(), "this machine"),
    /and a C\+\+ compiler, libtorch \(PyTorch's C\+\+ library\) and nlohmann-json are missing there/,
  );
});
