#!/usr/bin/env python3
"""scripts/update_proofs.py [PAGE.md ...] — re-run the examples of proofs/
pages with ./vsched and paste their output into the pages' stderr/stdout
blocks (after a deliberate change to a report's wording). The test suite
(suite report, proofs_pages) checks the pages; this only rewrites them.
Without arguments, every page under proofs/ is updated."""
import os
import re
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!-- vsched-example: (\S+) exit=(\d+) -->$")
TIME = re.compile(r"\d+\.\d{3}s( \(cached\))?")


def same(a, b):
    """Equal but for solver times and cache hits (the test ignores them)."""
    return [TIME.sub("T", x) for x in a] == [TIME.sub("T", x) for x in b]


def run(vsched, name, kernel, schedule):
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, name + ".tir"), "w") as f:
            f.write(kernel)
        with open(os.path.join(tmp, name + ".sched"), "w") as f:
            f.write(schedule)
        p = subprocess.run([vsched, "run", name + ".tir", "--schedule", name + ".sched"],
                           cwd=tmp, capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr


def update(page, vsched):
    lines = open(page).read().split("\n")
    out, i, changed = [], 0, False
    cur = None  # name, exit, kernel, schedule
    while i < len(lines):
        line = lines[i]
        m = MARK.match(line)
        if m:
            cur = {"name": m.group(1), "exit": int(m.group(2)), "kernel": None, "schedule": None,
                   "result": None}
        fence = line.strip()
        if cur and fence in ("```python kernel", "```python schedule"):
            j = i + 1
            while lines[j] != "```":
                j += 1
            cur[fence.split()[1]] = "\n".join(lines[i + 1:j]) + "\n"
            out.extend(lines[i:j + 1])
            i = j + 1
            continue
        if cur and fence in ("```text stderr", "```python stdout"):
            if cur["result"] is None:
                rc, so, se = run(vsched, cur["name"], cur["kernel"], cur["schedule"])
                if rc != cur["exit"]:
                    sys.exit("%s: example %s now exits %d, the page says %d:\n%s"
                             % (page, cur["name"], rc, cur["exit"], se))
                cur["result"] = (so, se)
            text = cur["result"][1] if fence == "```text stderr" else cur["result"][0]
            j = i + 1
            while lines[j] != "```":
                j += 1
            new = text.rstrip("\n").split("\n")
            if same(new, lines[i + 1:j]):
                new = lines[i + 1:j]
            changed |= new != lines[i + 1:j]
            out.append(line)
            out.extend(new)
            out.append("```")
            i = j + 1
            continue
        out.append(line)
        i += 1
    if changed:
        open(page, "w").write("\n".join(out))
        print("updated", page)


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    vsched = os.path.join(top, "vsched")
    pages = sys.argv[1:] or sorted(os.path.join(top, "proofs", p)
                                   for p in os.listdir(os.path.join(top, "proofs"))
                                   if p.endswith(".md") and p != "README.md")
    for p in pages:
        update(p, vsched)


if __name__ == "__main__":
    main()
