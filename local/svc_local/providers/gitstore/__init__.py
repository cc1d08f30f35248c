"""Bare git repositories on disk, written object by object in Python (loose objects, the format git itself
reads) so the repo_host sandbox can build a 600-file tree in one request without a process per file; the git
CLI serves what is rarer (diffs, packed objects) and `git http-backend` serves clones."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHA_RE = re.compile(r"^[0-9a-f]{40}$")
EMPTY = "Git Repository is empty."


class GitError(Exception):
    """An object or ref that is not there, or input git would refuse."""


@dataclass(frozen=True)
class Entry:
    mode: str  # "100644", "100755", "40000", "160000", "120000"
    name: str
    sha: str

    @property
    def kind(self) -> str:
        if self.mode in ("40000", "040000"):
            return "tree"
        if self.mode == "160000":
            return "commit"
        return "blob"


@dataclass(frozen=True)
class Commit:
    sha: str
    tree: str
    parents: list[str]
    author: tuple[str, str, int]
    committer: tuple[str, str, int]
    message: str


def _person(line: str) -> tuple[str, str, int]:
    match = re.match(r"^(.*) <(.*)> (\d+) [+-]\d{4}$", line)
    if not match:
        return line, "", 0
    return match.group(1), match.group(2), int(match.group(3))


class GitRepo:
    """One bare repository. Writes take the repository's lock; objects are content addressed."""

    def __init__(self, path: Path, on_set_ref: Callable[[str, str], None] | None = None) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.on_set_ref = on_set_ref  # told of every ref update (a site host's continuous deployment)

    # ---- life cycle

    @classmethod
    def init(cls, path: Path, branch: str = "main") -> GitRepo:
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "init", "--quiet", "--bare", f"--initial-branch={branch}", str(path)],
            check=True,
            capture_output=True,
        )
        (path / "git-daemon-export-ok").touch()
        return cls(path)

    def git(self, *args: str, stdin: bytes | None = None) -> bytes:
        result = subprocess.run(
            ["git", f"--git-dir={self.path}", *args], input=stdin, capture_output=True, check=False
        )
        if result.returncode != 0:
            raise GitError(result.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
        return result.stdout

    # ---- objects

    def _loose(self, sha: str) -> Path:
        return self.path / "objects" / sha[:2] / sha[2:]

    def write(self, kind: str, data: bytes) -> str:
        raw = f"{kind} {len(data)}\0".encode() + data
        sha = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        target = self._loose(sha)
        if not target.exists():
            target.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-obj-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(zlib.compress(raw, 1))
            os.chmod(tmp, 0o444)
            os.replace(tmp, target)
        return sha

    def read(self, sha: str) -> tuple[str, bytes]:
        if not SHA_RE.match(sha):
            raise GitError(f"not an object id: {sha}")
        target = self._loose(sha)
        if target.is_file():
            raw = zlib.decompress(target.read_bytes())
            header, _, data = raw.partition(b"\0")
            kind, _, _size = header.decode().partition(" ")
            return kind, data
        try:  # packed (a clone never packs the source, but a developer's `git gc` might)
            kind = self.git("cat-file", "-t", sha).decode().strip()
            return kind, self.git("cat-file", kind, sha)
        except GitError:
            raise GitError(f"no object {sha}") from None

    def exists(self, sha: str) -> bool:
        try:
            self.read(sha)
        except GitError:
            return False
        return True

    def kind(self, sha: str) -> str | None:
        try:
            return self.read(sha)[0]
        except GitError:
            return None

    def tree_entries(self, sha: str) -> list[Entry]:
        kind, data = self.read(sha)
        if kind != "tree":
            raise GitError(f"{sha} is a {kind}, not a tree")
        entries: list[Entry] = []
        position = 0
        while position < len(data):
            space = data.index(b" ", position)
            nul = data.index(b"\0", space)
            mode = data[position:space].decode()
            name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
            entries.append(Entry(mode, name, data[nul + 1 : nul + 21].hex()))
            position = nul + 21
        return entries

    def write_tree(self, entries: list[Entry]) -> str:
        def order(entry: Entry) -> bytes:
            name = entry.name.encode("utf-8", "surrogateescape")
            return name + b"/" if entry.kind == "tree" else name

        data = b"".join(
            f"{'40000' if e.kind == 'tree' else e.mode} ".encode()
            + e.name.encode("utf-8", "surrogateescape")
            + b"\0"
            + bytes.fromhex(e.sha)
            for e in sorted(entries, key=order)
        )
        return self.write("tree", data)

    def commit(self, sha: str) -> Commit:
        kind, data = self.read(sha)
        if kind != "commit":
            raise GitError(f"{sha} is a {kind}, not a commit")
        head, _, message = data.decode("utf-8", "replace").partition("\n\n")
        fields: dict[str, list[str]] = {}
        for line in head.split("\n"):
            key, _, value = line.partition(" ")
            fields.setdefault(key, []).append(value)
        return Commit(
            sha=sha,
            tree=fields["tree"][0],
            parents=fields.get("parent", []),
            author=_person(fields.get("author", [""])[0]),
            committer=_person(fields.get("committer", [""])[0]),
            message=message,
        )

    def write_commit(
        self,
        tree: str,
        parents: list[str],
        message: str,
        author: tuple[str, str, int],
        committer: tuple[str, str, int] | None = None,
    ) -> str:
        committer = committer or author
        lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
        lines.append(f"author {author[0]} <{author[1]}> {author[2]} +0000")
        lines.append(f"committer {committer[0]} <{committer[1]}> {committer[2]} +0000")
        return self.write("commit", ("\n".join(lines) + "\n\n" + message).encode("utf-8"))

    # ---- trees by path

    def flatten(self, tree: str, prefix: str = "") -> list[tuple[str, Entry]]:
        """Every entry below `tree`, depth first, with its full path (trees listed before their content)."""
        found: list[tuple[str, Entry]] = []
        for entry in self.tree_entries(tree):
            path = f"{prefix}{entry.name}"
            found.append((path, entry))
            if entry.kind == "tree":
                found.extend(self.flatten(entry.sha, f"{path}/"))
        return found

    def lookup(self, tree: str, path: str) -> Entry | None:
        current = Entry("40000", "", tree)
        for part in [p for p in path.split("/") if p]:
            if current.kind != "tree":
                return None
            current = next((e for e in self.tree_entries(current.sha) if e.name == part), None)  # type: ignore[assignment]
            if current is None:
                return None
        return current

    def apply(self, base: str | None, changes: dict[str, tuple[str, str] | None]) -> str:
        """The tree `base` with `changes` applied: path -> (mode, blob sha), or None to delete the path.
        Directories left empty disappear, as in git."""
        entries = {e.name: e for e in self.tree_entries(base)} if base else {}
        nested: dict[str, dict[str, tuple[str, str] | None]] = {}
        for path, change in changes.items():
            head, _, rest = path.strip("/").partition("/")
            if rest:
                nested.setdefault(head, {})[rest] = change
            elif change is None:
                entries.pop(head, None)
            else:
                entries[head] = Entry(change[0], head, change[1])
        for name, sub in nested.items():
            existing = entries.get(name)
            subtree = self.apply(existing.sha if existing and existing.kind == "tree" else None, sub)
            if self.tree_entries(subtree):
                entries[name] = Entry("40000", name, subtree)
            else:
                entries.pop(name, None)
        return self.write_tree(list(entries.values()))

    # ---- refs

    def ref(self, name: str) -> str | None:
        """The sha a full ref name (refs/heads/main) points at, or None."""
        if ".." in name or not name.startswith("refs/"):
            return None
        loose = self.path / name
        if loose.is_file():
            return loose.read_text().strip()
        packed = self.path / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                sha, _, ref = line.partition(" ")
                if ref == name:
                    return sha
        return None

    def set_ref(self, name: str, sha: str) -> None:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-ref-")
        with os.fdopen(fd, "w") as handle:
            handle.write(sha + "\n")
        os.replace(tmp, target)
        if self.on_set_ref is not None:
            self.on_set_ref(name, sha)

    def is_empty(self) -> bool:
        return not self.branches()

    def branches(self) -> dict[str, str]:
        found: dict[str, str] = {}
        heads = self.path / "refs" / "heads"
        packed = self.path / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                sha, _, ref = line.partition(" ")
                if ref.startswith("refs/heads/"):
                    found[ref[len("refs/heads/") :]] = sha
        if heads.is_dir():
            for file in heads.rglob("*"):
                if file.is_file() and not file.name.startswith("."):
                    found[file.relative_to(heads).as_posix()] = file.read_text().strip()
        return found

    def resolve(self, ref: str) -> str | None:
        """A commit sha from a branch, tag, full ref or (abbreviated) sha."""
        for candidate in (f"refs/heads/{ref}", f"refs/tags/{ref}", ref if ref.startswith("refs/") else ""):
            if candidate:
                sha = self.ref(candidate)
                if sha:
                    return sha
        if ref.startswith("heads/") or ref.startswith("tags/"):
            return self.ref(f"refs/{ref}")
        if SHA_RE.match(ref):
            return ref if self.kind(ref) == "commit" else None
        if re.match(r"^[0-9a-f]{4,39}$", ref):
            try:
                sha = self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()
            except GitError:
                return None
            return sha or None
        return None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        seen: set[str] = set()
        pending = [descendant]
        while pending:
            sha = pending.pop()
            if sha == ancestor:
                return True
            if sha in seen:
                continue
            seen.add(sha)
            try:
                pending.extend(self.commit(sha).parents)
            except GitError:
                continue
        return False

    def diff_files(self, base: str, head: str) -> list[dict[str, Any]]:
        """GitHub's compare `files`: status, line counts and the patch (hunks only) per file."""
        names = self.git("diff", "--name-status", "-M", "-z", base, head).split(b"\0")
        numstat = self.git("diff", "--numstat", "-M", "-z", base, head).split(b"\0")
        patch_text = self.git("diff", "-M", "--no-color", "--no-ext-diff", base, head).decode(
            "utf-8", "replace"
        )
        files: list[dict[str, Any]] = []
        index = 0
        while index < len(names) and names[index]:
            status = names[index].decode()
            if status.startswith(("R", "C")):
                old, new = names[index + 1].decode(), names[index + 2].decode()
                index += 3
            else:
                old = new = names[index + 1].decode()
                index += 2
            word = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied"}.get(
                status[0], "changed"
            )
            item: dict[str, Any] = {"filename": new, "status": word}
            if word == "renamed":
                item["previous_filename"] = old
            files.append(item)
        counts = _numstat(numstat)
        patches = _split_patch(patch_text)
        for item in files:
            added, deleted = counts.get(item["filename"], (0, 0))
            item.update({"additions": added, "deletions": deleted, "changes": added + deleted})
            if item["filename"] in patches:
                item["patch"] = patches[item["filename"]]
            entry = (
                self.lookup(self.commit(head).tree, item["filename"]) if item["status"] != "removed" else None
            )
            item["sha"] = entry.sha if entry else None
        return files


def _numstat(parts: list[bytes]) -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    index = 0
    while index < len(parts) and parts[index]:
        added, deleted, path = parts[index].decode().split("\t", 2)
        index += 1
        if not path:  # a rename: old and new path follow
            path = parts[index + 1].decode()
            index += 2
        counts[path] = (int(added) if added.isdigit() else 0, int(deleted) if deleted.isdigit() else 0)
    return counts


def _split_patch(text: str) -> dict[str, str]:
    """Per-file hunks from a `git diff`, keyed by the new path; binary files have no hunks and no patch."""
    patches: dict[str, str] = {}
    for block in re.split(r"(?m)^diff --git ", text)[1:]:
        lines = block.split("\n")
        path = None
        for line in lines:
            if line.startswith("+++ "):
                path = line[6:] if line.startswith("+++ b/") else None
            elif line.startswith("rename to "):
                path = line[len("rename to ") :]
            if line.startswith("@@"):
                break
        if path is None:
            match = re.match(r"a/(.*) b/(.*)$", lines[0])
            path = match.group(2) if match else None
        if path is None:
            continue
        start = next((i for i, line in enumerate(lines) if line.startswith("@@")), None)
        if start is not None:
            patches[path] = "\n".join(lines[start:]).rstrip("\n")
    return patches
