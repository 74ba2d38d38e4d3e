// The Python side of lm-eval's `!function` helpers (helpers.ts runs it as `python3 -c`). It reads
// one request as JSON on stdin, imports each helper as lm-eval does (the module file beside the
// task YAML that names it), runs `process_docs` once on all documents and each per-document helper
// on every document, and writes one JSON answer on stdout. When the `datasets` package is not
// installed, a small stand-in takes its place with the methods task helpers use.
//
// Kept as a string (String.raw: no backslash is interpreted) so that the bundles carry it with no
// file to find at run time; it must contain no backtick and no dollar-brace.

export const BRIDGE_SOURCE = String.raw`
import importlib.util, json, os, random, sys, traceback, types


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


def datasets_module():
    try:
        import datasets
        return datasets
    except ImportError:
        module = stand_in_datasets()
        sys.modules["datasets"] = module
        return module


def helper(spec):
    path = os.path.join(spec["dir"], spec["module"].replace(".", os.sep) + ".py")
    if not os.path.isfile(path):
        raise LookupError("no module file " + path)
    name = "bprof_helper_" + spec["module"].replace(".", "_")
    module = sys.modules.get(name)
    if module is None:
        sys.path.insert(0, spec["dir"])
        loader_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        loader_spec.loader.exec_module(module)
    if not hasattr(module, spec["name"]):
        raise LookupError(path + " has no " + spec["name"])
    return getattr(module, spec["name"])


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
    out.write(json.dumps(answer))


main()
`;
