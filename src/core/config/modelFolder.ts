// A model's folder in a run folder, named from the config's `models[].name`: the config's checks
// refuse two models that would share one, and the plan and the run folder put each model's files there.

/** The folder of a model's files in a run folder: `models/<this>/` (its name, made safe for paths). */
export function modelFolderName(model: string): string {
  const safe = model.replace(/[^A-Za-z0-9._-]+/g, "_");
  // "", "." and ".." would be the models folder itself or the run's.
  return /^\.*$/.test(safe) ? `_${safe}` : safe;
}
