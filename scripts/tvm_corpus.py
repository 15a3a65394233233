#!/usr/bin/env python3
"""scripts/tvm_corpus.py — a corpus of TVM's test kernels and vsched's parse rate on it.

A dev tool (not run by make test); python3, standard library only.

  tvm_corpus.py extract OUTDIR FILE.py...
      Every literal TVMScript kernel of the TVM test files, one .tir file each in OUTDIR:
      every function decorated @T.prim_func (module level, or nested inside a test
      function or class), every class decorated @I.ir_module / @tvm.script.ir_module,
      and the undecorated `before` / `expected` methods of tvm.testing.CompareBeforeAfter
      classes (the framework makes them prim_funcs; the file gets an @T.prim_func line).
      Each is dedented and otherwise verbatim; its first line says where it came from.
      A kernel that names a Python variable it does not bind itself (a module constant,
      a parameter of the enclosing test function, a T.macro) is not literal TVMScript:
      it is counted as "python-dependent" and not written. Kernels built by Python code
      (te.create_prim_func, tir.PrimFunc(...)) are counted as "built by python".
      Writes OUTDIR/MANIFEST (one line per written kernel: file, origin).

  tvm_corpus.py run VSCHED DIR [--timeout S] [--list]
      Runs `VSCHED run FILE` (no schedule: parse, verify, print) on every .tir in DIR,
      prints the parse rate and the first error line of every failure, grouped by its
      message (positions and quoted names folded), largest group first. --list also
      lists every failing file under its group.
"""
import ast
import builtins
import collections
import os
import re
import shutil
import subprocess
import tempfile
import sys
import textwrap

PRIM_DECOS = {"T.prim_func", "tvm.script.tir.prim_func", "tir.prim_func", "prim_func",
              "tvm.script.prim_func", "T.prim_func(private=True)"}
MOD_DECOS = {"I.ir_module", "tvm.script.ir_module", "ir_module", "tvm.script.ir.ir_module",
             "ir.ir_module", "tvm.ir_module"}
# names TVMScript resolves itself (besides builtins)
ALLOWED = {"T", "I", "tvm", "tir", "cls", "R"} | set(dir(builtins))


def deco_kind(node):
    for d in getattr(node, "decorator_list", []):
        base = d.func if isinstance(d, ast.Call) else d
        s = ast.unparse(base)
        if s in PRIM_DECOS or s.endswith("prim_func"):
            return "prim_func"
        if s in MOD_DECOS or s.endswith("ir_module"):
            return "ir_module"
    return None


def bound_and_loaded(node):
    bound, loaded = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loaded if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
    return bound, loaded


def free_names(node):
    bound, loaded = bound_and_loaded(node)
    return sorted(loaded - bound - ALLOWED)


def compare_classes(tree):
    """Names of classes in this file that derive (transitively) from CompareBeforeAfter."""
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    memo = {}

    def is_cmp(name, depth=0):
        if name in memo:
            return memo[name]
        c = classes.get(name)
        r = False
        if c is not None and depth < 20:
            for b in c.bases:
                s = ast.unparse(b)
                if s.endswith("CompareBeforeAfter") or is_cmp(s.split(".")[-1], depth + 1):
                    r = True
        memo[name] = r
        return r

    return {n for n in classes if is_cmp(n)}


class Extractor:
    def __init__(self, path, text):
        self.path, self.lines = path, text.splitlines()
        self.tree = ast.parse(text, filename=path)
        self.cmp = compare_classes(self.tree)
        self.found = []        # (qualname, kind, lineno, source)
        self.python_dep = []   # (qualname, free names)
        self.built = 0

    def source_of(self, node):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        return textwrap.dedent("\n".join(self.lines[first - 1:node.end_lineno])) + "\n", first

    def walk(self, node, qual, in_cmp_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call):
                f = ast.unparse(child.func)
                if f.endswith("create_prim_func") or f.endswith("tir.PrimFunc"):
                    self.built += 1
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)):
                q = qual + [child.name]
                kind = deco_kind(child)
                undecorated_cmp = (kind is None and in_cmp_class and isinstance(child, ast.FunctionDef)
                                   and child.name in ("before", "expected")
                                   and not (child.args.args and child.args.args[0].arg == "self"))
                if kind or undecorated_cmp:
                    self.take(child, ".".join(q), kind or "compare_before_after")
                    continue
                self.walk(child, q, isinstance(child, ast.ClassDef) and child.name in self.cmp)
            else:
                self.walk(child, qual, in_cmp_class)

    def take(self, node, qual, kind):
        free = free_names(node)
        if free:
            self.python_dep.append((qual, free))
            return
        src, first = self.source_of(node)
        if kind == "compare_before_after":
            src = "@T.prim_func\n" + src
        self.found.append((qual, kind, first, src))


def short_stem(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    for p in ("test_tir_schedule_", "test_tir_transform_", "test_"):
        if stem.startswith(p):
            return stem[len(p):]
    return stem


def rel_origin(path):
    m = re.search(r"(tests/python/.*)$", os.path.abspath(path))
    return m.group(1) if m else path


def extract(outdir, files):
    os.makedirs(outdir, exist_ok=True)
    manifest, tot_written, tot_dep, tot_built, bad = [], 0, 0, 0, []
    per_file = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                ex = Extractor(path, f.read())
        except (SyntaxError, UnicodeDecodeError) as e:
            bad.append((path, str(e)))
            continue
        ex.walk(ex.tree, [], False)
        used = set()
        for qual, kind, line, src in ex.found:
            name = f"{short_stem(path)}__{qual}"
            if name in used:
                name = f"{name}_L{line}"
            used.add(name)
            origin = f"{rel_origin(path)}::{qual} (line {line})"
            with open(os.path.join(outdir, name + ".tir"), "w", encoding="utf-8") as f:
                f.write(f"# from TVM v0.21 {origin}\n{src}")
            manifest.append(f"{name}.tir\t{kind}\t{origin}")
        tot_written += len(ex.found)
        tot_dep += len(ex.python_dep)
        tot_built += ex.built
        per_file.append((path, len(ex.found), ex.python_dep, ex.built))
    with open(os.path.join(outdir, "MANIFEST"), "w", encoding="utf-8") as f:
        f.write("\n".join(manifest) + "\n")
    print(f"{len(files)} files: {tot_written} literal kernels written to {outdir}, "
          f"{tot_dep} python-dependent kernels skipped, {tot_built} kernels built by python "
          f"(te.create_prim_func / tir.PrimFunc) not extracted")
    for path, n, dep, built in per_file:
        extra = ""
        if dep:
            extra = "  skipped: " + ", ".join(f"{q} ({', '.join(fr[:3])})" for q, fr in dep[:4])
            if len(dep) > 4:
                extra += f", ... {len(dep) - 4} more"
        print(f"  {rel_origin(path)}: {n} written, {len(dep)} python-dependent, {built} built{extra}")
    for path, err in bad:
        print(f"  {path}: not parsed by python: {err}")


GPU = re.compile(r"thread_binding|launch_thread|env_thread|vscale|tvm_thread_allreduce|threadIdx|blockIdx")
POS = re.compile(r"^\S+?:\d+:\d+:\s*")


def first_error(stderr):
    for line in stderr.splitlines():
        if "error" in line or POS.match(line):
            return line.strip()
    lines = [l for l in stderr.splitlines() if l.strip()]
    return lines[0].strip() if lines else "(no message)"


def fold(msg):
    msg = POS.sub("", msg)
    # fold the user's own names (a buffer, a variable, ...) and numbers; keep the rest
    # (T.xxx forms, dtypes, keyword names, scopes say which form is missing)
    msg = re.sub(r"\b(buffer|variable|name|loop|block|parameter|function|var|iter var) '(?!T\.)[^']*'",
                 r"\1 '_'", msg)
    msg = re.sub(r"\b\d+\b", "N", msg)
    return msg


def run(vsched, d, timeout, listing):
    # run a private copy: the binary may be rebuilt (and briefly absent) while the corpus runs
    tmp = tempfile.mkdtemp(prefix="tvm-corpus-")
    snap = os.path.join(tmp, "vsched")
    shutil.copy2(vsched, snap)
    try:
        run_with(snap, vsched, d, timeout, listing)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_with(snap, vsched, d, timeout, listing):
    files = sorted(f for f in os.listdir(d) if f.endswith(".tir"))
    groups = collections.defaultdict(list)
    ok = 0
    for name in files:
        path = os.path.join(d, name)
        try:
            p = subprocess.run([snap, "run", path], capture_output=True, text=True,
                               timeout=timeout, errors="replace")
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = -1, f"timeout after {timeout}s"
        if rc == 0:
            ok += 1
            continue
        msg = first_error(err)
        if rc not in (1, 2):
            msg = f"exit {rc} (crash?): {msg}"
        groups[fold(msg)].append((name, msg))
    n = len(files)
    gpu = sum(1 for items in groups.values() for _, m in items if GPU.search(m))
    print(f"parse rate: {ok}/{n} = {100.0 * ok / max(n, 1):.1f}% "
          f"(`{os.path.basename(vsched)} run FILE` exits 0)")
    print(f"of the failures, {gpu} stop first on a GPU/SVE-only form ({GPU.pattern}); "
          f"without those kernels: {ok}/{n - gpu} = {100.0 * ok / max(n - gpu, 1):.1f}%")
    print(f"failures: {n - ok} in {len(groups)} groups (first error line, positions and quoted "
          f"names folded), largest first:\n")
    for key, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"{len(items):4d}  {key}")
        shown = items if listing else items[:2]
        for name, msg in shown:
            print(f"        e.g. {name}: {POS.sub('', msg)}" if not listing else f"        {name}: {POS.sub('', msg)}")
        if not listing and len(items) > 2:
            print(f"        ... and {len(items) - 2} more")


def main(argv):
    if len(argv) >= 3 and argv[1] == "extract":
        extract(argv[2], argv[3:])
        return 0
    if len(argv) >= 4 and argv[1] == "run":
        timeout, listing = 60, False
        rest = argv[4:]
        while rest:
            if rest[0] == "--timeout" and len(rest) > 1:
                timeout, rest = float(rest[1]), rest[2:]
            elif rest[0] == "--list":
                listing, rest = True, rest[1:]
            else:
                print(f"unknown option {rest[0]}", file=sys.stderr)
                return 2
        run(argv[2], argv[3], timeout, listing)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
