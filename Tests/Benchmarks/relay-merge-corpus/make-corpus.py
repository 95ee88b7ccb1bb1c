#!/usr/bin/env python3
"""Builds a corpus of real concurrent edits from the merge commits of git repositories, for
`relay-merge-corpus` (Relay's text merge against `git merge-file` on the same three versions).

Usage: make-corpus.py OUTPUT REPO.git [REPO.git ...] [--max-per-repo N]

For every merge commit with two parents and one merge base, every file of a kind Relay merges
as text (by extension, as MergeKind) that both parents changed differently since the base is one
case: OUTPUT/NNNNN/{base,ours,theirs} (ours = the first parent), git.out (`git merge-file -p`'s
result) and git.status (its exit status: 0 clean, N conflicts, negative an error), and `origin`
(repository, merge commit, path). Identical triples are kept once. Files over 1 MB or not UTF-8
are skipped. The corpus is not committed (it is large and made of other projects' files); the
script makes it again from any repositories with history.
"""
import hashlib, os, subprocess, sys, tempfile

TEXT = {"md", "markdown", "txt", "text", "rst", "org", "adoc", "csv", "tsv", "yaml", "yml", "toml", "ini", "cfg",
        "html", "htm", "xml", "css", "js", "ts", "py", "swift", "rs", "go", "c", "h", "sh", "tex", "bib"}

def git(repo, *args, input=None, check=True):
    return subprocess.run(["git", "--git-dir", repo, *args], input=input, capture_output=True, check=check).stdout

def blob(repo, commit, path):
    r = subprocess.run(["git", "--git-dir", repo, "cat-file", "blob", f"{commit}:{path}"], capture_output=True)
    return r.stdout if r.returncode == 0 else None

def changed(repo, a, b):
    out = git(repo, "diff", "--no-renames", "--name-only", "-z", a, b)
    return set(p.decode() for p in out.split(b"\0") if p)

def main():
    args = sys.argv[1:]
    limit = None
    if "--max-per-repo" in args:
        i = args.index("--max-per-repo"); limit = int(args[i + 1]); del args[i:i + 2]
    if len(args) < 2:
        sys.exit("usage: make-corpus.py OUTPUT REPO.git [REPO.git ...] [--max-per-repo N]")
    output, repos = args[0], args[1:]
    os.makedirs(output, exist_ok=True)
    seen, count = set(), len(os.listdir(output))
    for repo in repos:
        taken = 0
        merges = git(repo, "rev-list", "--all", "--merges", "--parents").decode().split("\n")
        for line in merges:
            parts = line.split()
            if len(parts) != 3: continue
            merge, p1, p2 = parts
            bases = git(repo, "merge-base", "--all", p1, p2, check=False).decode().split()
            if len(bases) != 1: continue
            base = bases[0]
            for path in sorted(changed(repo, base, p1) & changed(repo, base, p2)):
                ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
                if ext not in TEXT: continue
                versions = [blob(repo, c, path) for c in (base, p1, p2)]
                if any(v is None or len(v) > 1_000_000 for v in versions): continue
                b, o, t = versions
                if o == t or b == o or b == t: continue
                try: [v.decode("utf-8") for v in versions]
                except UnicodeDecodeError: continue
                key = hashlib.sha256(b + b"\0" + o + b"\0" + t).hexdigest()
                if key in seen: continue
                seen.add(key)
                folder = os.path.join(output, f"{count:05d}")
                os.makedirs(folder, exist_ok=True)
                for name, data in (("base", b), ("ours", o), ("theirs", t)):
                    with open(os.path.join(folder, name), "wb") as f: f.write(data)
                r = subprocess.run(["git", "merge-file", "-p", os.path.join(folder, "ours"), os.path.join(folder, "base"),
                                    os.path.join(folder, "theirs")], capture_output=True)
                with open(os.path.join(folder, "git.out"), "wb") as f: f.write(r.stdout)
                with open(os.path.join(folder, "git.status"), "w") as f: f.write(f"{r.returncode if r.returncode < 128 else -r.returncode}\n")
                with open(os.path.join(folder, "origin"), "w") as f: f.write(f"{os.path.basename(os.path.dirname(repo.rstrip('/')))} {merge} {path}\n")
                count += 1; taken += 1
            if limit and taken >= limit: break
        print(f"{repo}: {taken} cases", file=sys.stderr)
    print(f"{count} cases in {output}", file=sys.stderr)

main()
