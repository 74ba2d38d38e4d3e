// The config's `shards` and `devices` (docs/targets.md, "Shards"): how each model's profile is
// split into runners that run side by side, and what in the config keeps it from splitting.
import type { Target } from "./target";
import type { Problem } from "../base/problems";
import type { YamlSource } from "../base/yamlSource";
import type { ProfileConfig } from "./types";

/** How a model's profile splits: `count` shards (`auto`: one per visible GPU), on `devices` when given. */
export interface ShardSetting {
  count: number | "auto";
  /** One per shard; absent: every shard on the profile's `device`. */
  devices?: string[];
}

/** The split the config asks for; undefined for one runner per model (the default). */
export function shardSetting(config: ProfileConfig): ShardSetting | undefined {
  const slurm = slurmShards(config);
  if (slurm !== undefined) return slurm > 1 ? { count: slurm } : undefined;
  if (config.devices !== undefined) return { count: config.devices.length, devices: [...config.devices] };
  if (config.shards === undefined || config.shards === 1) return undefined;
  return { count: config.shards };
}

/** `target.slurm.shards`, where the config has it. */
function slurmShards(config: ProfileConfig): number | undefined {
  const target = config.target;
  return typeof target === "object" && "slurm" in target ? target.slurm.shards : undefined;
}

/** What keeps `shards` and `devices` from meaning one split, each at its key. */
export function shardProblems(config: ProfileConfig, source: YamlSource, target: Target): Problem[] {
  const problems: Problem[] = [];
  const { shards, devices } = config;
  if (devices !== undefined && config.device !== undefined) {
    problems.push(
      source.at(["devices"], "config.shards", "give `device` or `devices`, not both: with `devices` each shard runs on its own device"),
    );
  }
  if (devices !== undefined && typeof shards === "number" && shards !== devices.length) {
    problems.push(
      source.at(
        ["shards"],
        "config.shards",
        `\`shards: ${shards}\` but \`devices\` names ${devices.length}: one shard runs per device (leave \`shards\` out)`,
      ),
    );
  }
  if (shards === "auto" && devices === undefined && config.device !== "cuda") {
    problems.push(
      source.at(
        ["shards"],
        "config.shards",
        "`shards: auto` runs one shard per visible GPU: it needs `device: cuda` (or `devices`); on the CPU give a number",
      ),
    );
  }
  const splits = devices !== undefined || (shards !== undefined && shards !== 1);
  if (splits && target.kind === "slurm") {
    problems.push(
      source.at(
        shards !== undefined ? ["shards"] : ["devices"],
        "config.shards",
        "on a Slurm target the shards are `target.slurm.shards` (a task of one array job each, with the job's resources): move the count there",
      ),
    );
  }
  const slurm = slurmShards(config);
  if ((splits || (slurm ?? 1) > 1) && (config.abilities === undefined || config.abilities.length === 0)) {
    const key = shards !== undefined ? ["shards"] : devices !== undefined ? ["devices"] : ["target", "slurm", "shards"];
    problems.push(
      source.at(
        key,
        "config.no-effect",
        "shards split a profile's abilities: without `abilities` the run scores the benchmarks in one runner",
      ),
    );
  }
  return problems;
}
