// What build-runner.sh found on a host (its `@@bprof <fact> <value>` lines), and what to tell the
// user when something a build needs is missing: the exact commands that install it there.

export interface BuildFacts {
  /** /etc/os-release's ID and ID_LIKE, or uname's system ("darwin"). */
  os: { id: string; like: string[]; version: string };
  root: boolean;
  /** The active conda environment, if any. */
  conda?: string;
  /** The host's runner cache. */
  cache: string;
  cmake?: string;
  cxx?: string;
  generator?: string;
  jobs: number;
  torch?: { dir: string; version: string; from: string; cuda: boolean };
  /** nlohmann-json's include folder. */
  json?: string;
  /** What a build needs and the host lacks, as build-runner.sh names it ("libtorch", "c++"). */
  missing: string[];
  /** The cache key: sources, libtorch, compiler. */
  key: string;
  /** The runner built for this key, when there is one. */
  cached?: string;
  /** How long the host's last build took. */
  lastSeconds?: number;
}

/** How a build ended, from the lines after the facts. */
export interface BuildEnd {
  runner?: string;
  built?: { seconds: number };
  failed?: { step: string; log: string };
}

/** The `@@bprof` lines of the script's output, fact -> values in order. */
export function factLines(output: string): Map<string, string[]> {
  const facts = new Map<string, string[]>();
  for (const line of output.split("\n")) {
    const m = /^@@bprof (\S+) ?(.*)$/.exec(line);
    if (!m) continue;
    facts.set(m[1]!, [...(facts.get(m[1]!) ?? []), m[2]!]);
  }
  return facts;
}

export function buildFacts(lines: Map<string, string[]>): BuildFacts | undefined {
  const one = (name: string) => lines.get(name)?.[0];
  const key = one("key");
  const cache = one("cache");
  if (!key || !cache) return undefined;
  const [id = "", like = "", version = ""] = (one("os") ?? "").split(" ");
  const torch = one("torch");
  const facts: BuildFacts = {
    os: { id, like: like.split(",").filter(Boolean), version },
    root: one("uid") === "0",
    cache,
    jobs: Number(one("jobs")) || 1,
    missing: lines.get("missing") ?? [],
    key,
  };
  const optional = {
    conda: one("conda"),
    cmake: one("cmake"),
    cxx: one("cxx"),
    generator: one("generator"),
    json: one("json"),
    cached: one("cached"),
  };
  for (const [name, value] of Object.entries(optional)) if (value) (facts as unknown as Record<string, string>)[name] = value;
  if (torch)
    facts.torch = {
      dir: torch,
      version: one("torch_version") ?? "unknown",
      from: one("torch_from") ?? "",
      cuda: one("torch_cuda") === "yes",
    };
  const last = Number(one("last_seconds"));
  if (Number.isFinite(last) && last > 0) facts.lastSeconds = last;
  return facts;
}

export function buildEnd(lines: Map<string, string[]>): BuildEnd {
  const end: BuildEnd = {};
  const runner = lines.get("runner")?.[0];
  if (runner) end.runner = runner;
  const seconds = Number(lines.get("seconds")?.[0]);
  if (lines.has("built")) end.built = { seconds: Number.isFinite(seconds) ? seconds : 0 };
  const step = lines.get("failed")?.[0];
  if (step) end.failed = { step, log: lines.get("log")?.[0] ?? "" };
  return end;
}

/** What a missing thing is, for people. */
function describe(missing: string): string {
  if (missing === "c++") return "a C++ compiler";
  if (missing === "make") return "make (or ninja)";
  if (missing === "cuda-toolkit") return "the CUDA toolkit (nvcc), which a CUDA libtorch's CMake files need";
  if (missing.startsWith("libtorch")) return missing.replace("libtorch", "libtorch (PyTorch's C++ library)");
  return missing;
}

type Family = "debian" | "fedora" | "suse" | "arch" | "alpine" | "darwin" | "other";

function familyOf(os: BuildFacts["os"]): Family {
  const names = [os.id, ...os.like];
  if (names.some((n) => n === "debian" || n === "ubuntu")) return "debian";
  if (names.some((n) => n === "fedora" || n === "rhel" || n === "centos")) return "fedora";
  if (names.some((n) => n.includes("suse"))) return "suse";
  if (names.some((n) => n === "arch")) return "arch";
  if (os.id === "alpine") return "alpine";
  if (os.id === "darwin") return "darwin";
  return "other";
}

/** Each family's package for what build-runner.sh calls missing; undefined: not packaged there. */
const PACKAGES: Record<Exclude<Family, "other">, Partial<Record<string, string>>> = {
  debian: {
    cmake: "cmake",
    "c++": "g++",
    make: "make",
    "nlohmann-json": "nlohmann-json3-dev",
    libtorch: "libtorch-dev",
    "cuda-toolkit": "nvidia-cuda-toolkit",
  },
  fedora: { cmake: "cmake", "c++": "gcc-c++", make: "make", "nlohmann-json": "json-devel" },
  suse: { cmake: "cmake", "c++": "gcc-c++", make: "make", "nlohmann-json": "nlohmann_json-devel" },
  arch: {
    cmake: "cmake",
    "c++": "gcc",
    make: "make",
    "nlohmann-json": "nlohmann-json",
    libtorch: "python-pytorch",
    "cuda-toolkit": "cuda",
  },
  alpine: { cmake: "cmake", "c++": "g++", make: "make", "nlohmann-json": "nlohmann-json" },
  darwin: { cmake: "cmake", make: "make", "nlohmann-json": "nlohmann-json", libtorch: "pytorch" },
};

const INSTALLER: Record<Exclude<Family, "other">, string> = {
  debian: "apt-get install -y",
  fedora: "dnf install -y",
  suse: "zypper install -y",
  arch: "pacman -S --needed --noconfirm",
  alpine: "apk add",
  darwin: "brew install",
};

/** The commands that install what is missing on the host, one per line, in order. */
export function installCommands(facts: BuildFacts, python = "python3"): string[] {
  const family = familyOf(facts.os);
  const needs = facts.missing.map((m) => (m.startsWith("libtorch") ? "libtorch" : m.startsWith("cmake") ? "cmake" : m));
  const commands: string[] = [];
  const sudo = facts.root || family === "darwin" ? "" : "sudo ";
  if (facts.conda) {
    // In a conda environment its own packages fit best, compiler included.
    const conda = {
      cmake: "cmake",
      "c++": "cxx-compiler",
      make: "make",
      "nlohmann-json": "nlohmann_json",
      libtorch: "libtorch",
      "cuda-toolkit": "cuda-toolkit",
    } as Record<string, string>;
    return [`conda install -y -c conda-forge ${needs.map((n) => conda[n] ?? n).join(" ")}`];
  }
  let rest = needs;
  if (family !== "other") {
    if (family === "darwin" && needs.includes("c++")) commands.push("xcode-select --install");
    const packaged = needs.filter((n) => PACKAGES[family][n] !== undefined);
    // Debian's libtorch-dev came with Debian 12 and Ubuntu 23.04; a release without it takes PyTorch's own.
    const oldDebian = family === "debian" && (facts.os.id === "debian" ? Number(facts.os.version) < 12 : Number(facts.os.version) < 23.04);
    const viaPackages = packaged.filter((n) => !(n === "libtorch" && oldDebian));
    if (viaPackages.length > 0) commands.push(`${sudo}${INSTALLER[family]} ${viaPackages.map((n) => PACKAGES[family][n]!).join(" ")}`);
    rest = needs.filter((n) => !viaPackages.includes(n) && !(family === "darwin" && n === "c++"));
  }
  if (rest.includes("cmake")) commands.push(`${python} -m pip install --user cmake`);
  if (rest.includes("libtorch")) {
    commands.push(
      `${python} -m pip install torch${facts.torch?.cuda || rest.includes("cuda-toolkit") ? "" : " --index-url https://download.pytorch.org/whl/cpu"}`,
    );
  }
  if (rest.includes("cuda-toolkit")) commands.push("# the CUDA toolkit matching your PyTorch: https://developer.nvidia.com/cuda-downloads");
  const unnamed = rest.filter((n) => !["cmake", "libtorch", "cuda-toolkit"].includes(n));
  if (unnamed.length > 0) commands.push(`# with your system's package manager: ${unnamed.map(describe).join(", ")}`);
  return commands;
}

/** One message: what is missing on which host, and the commands that install it. */
export function missingMessage(facts: BuildFacts, where: string, python?: string): string {
  const what = facts.missing.map(describe);
  const list = what.length === 1 ? what[0]! : `${what.slice(0, -1).join(", ")} and ${what.at(-1)!}`;
  return [
    `bprof-runner must be built on ${where} from the sources that came with Benchmark Profiler, and ${list} ${what.length === 1 ? "is" : "are"} missing there. Install with:`,
    ...installCommands(facts, python).map((c) => `  ${c}`),
    "then try again; or point benchmarkProfiler.runnerPath (or BPROF_RUNNER, --runner, target.*.runner) at a runner you built.",
  ].join("\n");
}
