// The Python side of lm-eval's `!function` helpers (helpers.ts runs it as `python3 -I -B -c`). It
// reads one request as JSON on stdin, imports each helper as lm-eval does (the module file beside
// the task YAML that names it), runs `process_docs` once on all documents and each per-document
// helper on every document, or one filter class (lm-eval's Filter API: built with the YAML's
// keyword arguments, apply(resps, docs)) on every response, and writes one JSON answer on stdout.
// When the `datasets` or `lm_eval` packages are not installed, small stand-ins take their place
// with what task helpers use: Dataset's methods, and lm-eval's Filter and RegexFilter.
//
// The task folders' modules (the helpers and what they import from their folder) are loaded by
// the bridge itself, from their source bytes, each only if its SHA-256 is one the request's
// `consent` allows for that file: no bytecode cache is read or written, no folder of the task's
// is on sys.path for Python's own finders, and a module file whose real path leaves its folder
// is refused. The answer's `loaded` names every module file that ran.
//
// Kept as a string (String.raw: no backslash is interpreted) so that the bundles carry it with no
// file to find at run time; it must contain no backtick and no dollar-brace.

export const BRIDGE_SOURCE = String.raw`
import hashlib, importlib.abc, importlib.machinery, importlib.util, json, os, random, site, sys, traceback, types

# -I keeps the working folder and the script's off sys.path; nothing of a repository is added back.
sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
sys.dont_write_bytecode = True
# -I also leaves out the user's own folders: PYTHONPATH and site-packages (pip install --user), where
# lm_eval or datasets may be. They are the user's, not the repository's, and come back, but for a
# relative PYTHONPATH entry, which would mean the working folder
# (first, as Python puts PYTHONPATH before the standard library)
sys.path[0:0] = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if os.path.isabs(e)]
if os.path.isdir(site.getusersitepackages()):
    site.addsitedir(site.getusersitepackages())


class NotConsented(ImportError):
    pass


class TaskFolders(importlib.abc.MetaPathFinder):
    # Finds modules in the task folders only (first, as the folders were first on sys.path under
    # lm-eval's own imports of helpers), and loads each from the bytes a check consented to.
    def __init__(self, dirs, allowed):
        self.dirs = [os.path.abspath(d) for d in dirs]
        self.real_dirs = [os.path.realpath(d) for d in dirs]
        self.allowed = {os.path.abspath(f): set(h) for f, h in allowed.items()}
        self.loaded = []

    def inside(self, path):
        real = os.path.realpath(path)
        return any(real == d or real.startswith(d + os.sep) for d in self.real_dirs)

    def find_spec(self, fullname, path=None, target=None):
        leaf = fullname.rpartition(".")[2]
        if path is None:
            places = self.dirs
        else:
            places = [p for p in path if self.inside(p)]
        for place in places:
            folder = os.path.join(place, leaf)
            init = os.path.join(folder, "__init__.py")
            if os.path.isfile(init):
                return importlib.util.spec_from_file_location(fullname, init, loader=ConsentedSource(self, init), submodule_search_locations=[folder])
            single = folder + ".py"
            if os.path.isfile(single):
                return importlib.util.spec_from_file_location(fullname, single, loader=ConsentedSource(self, single))
            if os.path.isdir(folder) and path is not None:
                spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
                spec.submodule_search_locations = [folder]
                return spec
        return None

    def source(self, path):
        path = os.path.abspath(path)
        if not self.inside(path):
            raise NotConsented(path + " leads out of the task's folder: it is not run")
        with open(path, "rb") as f:
            source = f.read()
        if hashlib.sha256(source).hexdigest() not in self.allowed.get(path, ()):
            raise NotConsented(path + " is not among the task's Python files allowed to run, or changed since: check the task again to be asked about it")
        self.loaded.append(path)
        return source


class ConsentedSource(importlib.abc.Loader):
    def __init__(self, folders, path):
        self.folders = folders
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        source = self.folders.source(self.path)
        exec(compile(source, self.path, "exec", dont_inherit=True), module.__dict__)


folders = TaskFolders([], {})


def stand_in_datasets():
    class Dataset:
        def __init__(self, rows):
            self._rows = [dict(r) for r in rows]

        @classmethod
        def from_list(cls, rows):
            return cls(rows)

        def __len__(self):
            return len(self._rows)

        def __iter__(self):
            return iter([dict(r) for r in self._rows])

        def __getitem__(self, key):
            if isinstance(key, str):
                return [r.get(key) for r in self._rows]
            if isinstance(key, slice):
                rows = self._rows[key]
                return {c: [r.get(c) for r in rows] for c in self.column_names}
            return dict(self._rows[key])

        @property
        def column_names(self):
            names = []
            for r in self._rows:
                for k in r:
                    if k not in names:
                        names.append(k)
            return names

        @property
        def num_rows(self):
            return len(self._rows)

        def map(self, function=None, with_indices=False, batched=False, remove_columns=None, **_ignored):
            if function is None:
                return Dataset(self._rows)
            removed = [remove_columns] if isinstance(remove_columns, str) else (remove_columns or [])
            if batched:
                columns = {c: [r.get(c) for r in self._rows] for c in self.column_names}
                out = function(columns, list(range(len(self._rows)))) if with_indices else function(columns)
                merged = {**{c: v for c, v in columns.items() if c not in removed}, **out}
                count = len(next(iter(merged.values()))) if merged else 0
                return Dataset([{c: merged[c][i] for c in merged} for i in range(count)])
            rows = []
            for i, row in enumerate(self._rows):
                update = function(dict(row), i) if with_indices else function(dict(row))
                kept = {k: v for k, v in row.items() if k not in removed}
                rows.append({**kept, **(update or {})})
            return Dataset(rows)

        def filter(self, function, with_indices=False, **_ignored):
            return Dataset([r for i, r in enumerate(self._rows) if (function(dict(r), i) if with_indices else function(dict(r)))])

        def select(self, indices):
            return Dataset([self._rows[i] for i in indices])

        def shuffle(self, seed=None, **_ignored):
            rows = list(self._rows)
            random.Random(seed).shuffle(rows)
            return Dataset(rows)

        def rename_column(self, old, new):
            return Dataset([{(new if k == old else k): v for k, v in r.items()} for r in self._rows])

        def rename_columns(self, mapping):
            return Dataset([{mapping.get(k, k): v for k, v in r.items()} for r in self._rows])

        def remove_columns(self, columns):
            gone = [columns] if isinstance(columns, str) else columns
            return Dataset([{k: v for k, v in r.items() if k not in gone} for r in self._rows])

        def to_list(self):
            return [dict(r) for r in self._rows]

    module = types.ModuleType("datasets")
    module.Dataset = Dataset
    module.__bprof_stand_in__ = True
    return module


def stand_in_lm_eval():
    import re

    class Filter:
        def __init__(self, **kwargs):
            pass

        def apply(self, resps, docs):
            return resps

    class RegexFilter(Filter):
        # lm-eval's "regex" filter: the group_select-th match of the pattern in each response
        # (the first non-empty group of a match with groups), stripped; fallback when none.
        def __init__(self, regex_pattern=r"#### (\-?[0-9\.\,]+)", group_select=0, fallback="[invalid]"):
            self.regex_pattern = regex_pattern
            self.regex = re.compile(regex_pattern)
            self.group_select = group_select
            self.fallback = fallback

        def apply(self, resps, docs):
            out = []
            for responses in resps:
                kept = []
                for response in responses:
                    found = self.regex.findall(response)
                    if not found:
                        kept.append(self.fallback)
                        continue
                    match = found[self.group_select]
                    if isinstance(match, tuple):
                        match = [group for group in match if group][0]
                    kept.append(match.strip())
                out.append(kept)
            return out

    modules = {}
    for name in ["lm_eval", "lm_eval.api", "lm_eval.api.filter", "lm_eval.filters", "lm_eval.filters.extraction"]:
        modules[name] = types.ModuleType(name)
        modules[name].__bprof_stand_in__ = True
    modules["lm_eval.api.filter"].Filter = Filter
    modules["lm_eval.filters.extraction"].Filter = Filter
    modules["lm_eval.filters.extraction"].RegexFilter = RegexFilter
    modules["lm_eval"].api = modules["lm_eval.api"]
    modules["lm_eval"].filters = modules["lm_eval.filters"]
    modules["lm_eval.api"].filter = modules["lm_eval.api.filter"]
    modules["lm_eval.filters"].extraction = modules["lm_eval.filters.extraction"]
    sys.modules.update(modules)


def lm_eval_modules():
    try:
        import lm_eval.filters.extraction  # noqa: F401
    except ImportError:
        stand_in_lm_eval()


def datasets_module():
    try:
        import datasets
        return datasets
    except ImportError:
        module = stand_in_datasets()
        sys.modules["datasets"] = module
        return module


def helper(spec):
    path = os.path.abspath(os.path.join(spec["dir"], spec["module"].replace(".", os.sep) + ".py"))
    if not os.path.isfile(path):
        raise LookupError("no module file " + path)
    name = "bprof_helper_" + spec["module"].replace(".", "_")
    module = sys.modules.get(name)
    if module is None:
        loader_spec = importlib.util.spec_from_file_location(name, path, loader=ConsentedSource(folders, path))
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        try:
            loader_spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    if not hasattr(module, spec["name"]):
        raise LookupError(path + " has no " + spec["name"])
    return getattr(module, spec["name"])


def answered(out, answer):
    answer["loaded"] = folders.loaded
    out.write(json.dumps(answer))


def plain(value, where):
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        raise TypeError(where + " returned a " + type(value).__name__ + ", which is not plain data (text, numbers, lists, dicts)")


def as_rows(value):
    if isinstance(value, list):
        return value
    if hasattr(value, "to_list"):
        return value.to_list()
    return [dict(row) for row in value]


def last_line(error):
    lines = traceback.format_exception_only(type(error), error)
    return lines[-1].strip() if lines else type(error).__name__


def main():
    # What helpers print goes to stderr: stdout carries the answer alone.
    out, sys.stdout = sys.stdout, sys.stderr
    request = json.load(sys.stdin)
    global folders
    consent = request.get("consent", {})
    folders = TaskFolders(consent.get("dirs", []), consent.get("allowed", {}))
    sys.meta_path.insert(0, folders)
    if "filter" in request:
        return run_filter(request, out)
    if "score" in request:
        return run_scorer(request, out)
    docs = request["docs"]
    answer = {"docs": None, "values": {}}
    step, document = "import", None
    try:
        if request.get("process_docs"):
            step = "process_docs"
            dataset = datasets_module().Dataset.from_list(docs)
            docs = plain(as_rows(helper(request["process_docs"])(dataset)), "process_docs")
            if not all(isinstance(d, dict) for d in docs):
                raise TypeError("process_docs must return documents (dicts)")
            answer["docs"] = docs
        for key, spec in request.get("per_document", {}).items():
            step = key
            function = helper(spec)
            values = []
            for document, doc in enumerate(docs):
                values.append(plain(function(doc), key))
            document = None
            answer["values"][key] = values
    except BaseException as error:
        answer = {"error": {"step": step, "document": document, "message": last_line(error)}}
    answered(out, answer)


def run_filter(request, out):
    try:
        datasets_module()
        lm_eval_modules()
        step = request["filter"]
        if step.get("call") == "function":
            filtered = helper(step)(request["resps"], request["docs"])
        else:
            filtered = helper(step)(**step.get("kwargs", {})).apply(request["resps"], request["docs"])
        resps = plain([list(r) for r in filtered], "the filter")
        answer = {"resps": resps}
    except BaseException as error:
        answer = {"error": {"step": "filter", "document": None, "message": last_line(error)}}
    answered(out, answer)


def score_value(value, metric, where):
    # A dict holds the score under the metric's name, or is a dict of one score (pass@1).
    if isinstance(value, dict):
        if metric in value:
            value = value[metric]
        elif len(value) == 1:
            value = next(iter(value.values()))
        else:
            raise KeyError(where + " returned no " + repr(metric) + " among " + ", ".join(repr(k) for k in value))
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(where + " returned a " + type(value).__name__ + ", not a number")
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(where + " returned " + repr(number))
    return number


def run_scorer(request, out):
    step = request["score"]
    answer = {"values": [], "chance": []}
    document = None
    try:
        datasets_module()
        function = helper(step)
        name = step["module"] + "." + step["name"]
        for document, item in enumerate(request["inputs"]):
            if step["kind"] == "process_results":
                results = [tuple(r) if isinstance(r, list) else r for r in item["results"]]
                answer["values"].append(score_value(function(item["doc"], results), step["metric"], name))
                uniform = [(0.0, False)] * len(results)
                answer["chance"].append(score_value(function(item["doc"], uniform), step["metric"], name) if item.get("chance") else None)
            else:
                value = function(references=[item["reference"]], predictions=[item["prediction"]], **step.get("kwargs", {}))
                answer["values"].append(score_value(value, step["metric"], name))
                answer["chance"].append(None)
    except BaseException as error:
        answer = {"error": {"step": "score", "document": document, "message": last_line(error)}}
    answered(out, answer)


main()
`;
