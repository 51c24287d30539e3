#!/usr/bin/env python3
"""Parley's layer check: the package graph and every import against the layer table.

The layer table lives in docs/architecture.md, between the markers
`<!-- layer-table -->` and `<!-- /layer-table -->`, and nowhere else: this script reads
it from there, so the page and the check cannot drift apart.

It reads the package graph with `swift package dump-package` and the `import` lines of
every Swift file of every target (attributes and access levels such as `@testable`,
`public`, `internal` included; `#if` blocks tracked; comments and string literals
skipped), and reports, each with its file and line:

- a target missing from the table, or a table entry that is no target;
- a manifest whose targets are not in layer order (lowest layer first);
- an import of a target of the package that is not a declared dependency;
- an import (or declared dependency) of a target in a higher layer, or in the same layer
  when the table does not list that pair;
- a declared dependency that no file of the target imports;
- in a target the table marks portable: an import of a target that is not portable, or
  of a platform module (Glibc, Darwin, CallKit...) outside an `#if canImport(...)` or
  `#if os(...)` block;
- a target that links, directly or through its dependencies, a target the never-links
  table (between `<!-- never-links -->` and `<!-- /never-links -->`, on the same page)
  says it must not link: a client linking the server's listener.

Exit status 0 when the package keeps to the table, 1 when it does not (every problem is
printed), 2 when the check itself cannot run (no table, no package description).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

TABLE_BEGIN = "<!-- layer-table -->"
TABLE_END = "<!-- /layer-table -->"
NEVER_LINKS_BEGIN = "<!-- never-links -->"
NEVER_LINKS_END = "<!-- /never-links -->"

# Modules every Swift toolchain ships on every platform the package targets. Any other
# module that is not a target of the package counts as platform-specific: a portable
# target may import it only inside `#if canImport(...)` or `#if os(...)`.
PORTABLE_TOOLCHAIN_MODULES = frozenset({
    "Swift", "_Concurrency", "_StringProcessing", "RegexBuilder", "Observation",
    "Foundation", "FoundationEssentials", "FoundationInternationalization",
    "Dispatch", "Synchronization", "Distributed", "Testing", "XCTest",
})

# Conditions that make an import platform-specific on purpose.
GUARD_CONDITION = re.compile(r"\b(canImport|os|targetEnvironment)\s*\(")

IMPORT_KINDS = ("typealias", "struct", "class", "enum", "protocol", "let", "var", "func")
IMPORT_DECLARATION = re.compile(
    r"^\s*(?P<attributes>(?:@[A-Za-z_]\w*(?:\([^)]*\))?\s+)*)"
    r"(?P<modifiers>(?:(?:public|package|internal|fileprivate|private|open)\s+)*)"
    r"import\s+(?:(?:" + "|".join(IMPORT_KINDS) + r")\s+)?"
    r"(?P<module>[A-Za-z_]\w*)"
)
DIRECTIVE = re.compile(r"^\s*#(?P<keyword>if|elseif|else|endif)\b(?P<condition>.*)$")


class CheckError(Exception):
    """The check cannot run: a missing or malformed table or package description."""


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: error: {self.message}"


@dataclass(frozen=True)
class Import:
    module: str
    line: int
    guarded: bool
    declaration: str


@dataclass
class LayerRow:
    rank: int
    label: str
    names: list[str]
    portable: bool
    line: int


@dataclass
class LayerTable:
    path: str
    rows: list[LayerRow]
    same_layer: set[tuple[str, str]] = field(default_factory=set)
    same_layer_lines: dict[tuple[str, str], int] = field(default_factory=dict)
    # Target -> the targets it must never link, each with its table line.
    never_links: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def row_for(self, target: str) -> LayerRow | None:
        """The row naming `target`; explicit names win over patterns such as `*Tests`."""
        for row in self.rows:
            if target in row.names:
                return row
        for row in self.rows:
            if any(_is_pattern(name) and fnmatch.fnmatchcase(target, name) for name in row.names):
                return row
        return None


def _is_pattern(name: str) -> bool:
    return any(c in name for c in "*?[")


# MARK: Swift source: comments and string literals out, then imports and #if blocks


class _SwiftBlanker:
    """Replaces comments and string literals (interpolations included) with spaces,
    keeping every newline, so what is left is code on its original lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.count = len(text)
        self.out = list(text)

    def run(self) -> str:
        self._code(0, in_interpolation=False)
        return "".join(self.out)

    def _blank(self, start: int, end: int) -> None:
        for k in range(start, min(end, self.count)):
            if self.out[k] != "\n":
                self.out[k] = " "

    def _code(self, i: int, in_interpolation: bool) -> int:
        text = self.text
        depth = 0
        while i < self.count:
            c = text[i]
            if c == "/" and text.startswith("//", i):
                end = text.find("\n", i)
                end = self.count if end < 0 else end
                self._blank(i, end)
                i = end
            elif c == "/" and text.startswith("/*", i):
                end = self._block_comment(i)
                self._blank(i, end)
                i = end
            elif c == '"' or (c == "#" and self._raw_string_starts(i)):
                end = self._string(i)
                self._blank(i, end)
                i = end
            elif in_interpolation and c == "(":
                depth += 1
                i += 1
            elif in_interpolation and c == ")":
                if depth == 0:
                    return i + 1
                depth -= 1
                i += 1
            else:
                i += 1
        return i

    def _raw_string_starts(self, i: int) -> bool:
        j = i
        while j < self.count and self.text[j] == "#":
            j += 1
        return j < self.count and self.text[j] == '"'

    def _block_comment(self, i: int) -> int:
        depth = 0
        text = self.text
        while i < self.count:
            if text.startswith("/*", i):
                depth += 1
                i += 2
            elif text.startswith("*/", i):
                depth -= 1
                i += 2
                if depth == 0:
                    return i
            else:
                i += 1
        return self.count

    def _string(self, i: int) -> int:
        text = self.text
        hashes = 0
        while text[i] == "#":
            hashes += 1
            i += 1
        multiline = text.startswith('"""', i)
        i += 3 if multiline else 1
        close = ('"""' if multiline else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        while i < self.count:
            if text.startswith(close, i):
                return i + len(close)
            if text.startswith(escape, i):
                after = i + len(escape)
                if after < self.count and text[after] == "(":
                    i = self._code(after + 1, in_interpolation=True)
                else:
                    i = after + 1
                continue
            if not multiline and text[i] == "\n":
                return i  # unterminated: the compiler reports it; stop at the line's end
            i += 1
        return self.count


def swift_imports(text: str) -> list[Import]:
    """Every import declaration of a Swift file, with its line and whether it sits inside
    an `#if` block whose conditions name a platform (`canImport`, `os`, `targetEnvironment`)."""
    code = _SwiftBlanker(text).run()
    imports: list[Import] = []
    # One entry per open #if block: every condition of its branches so far.
    blocks: list[list[str]] = []
    for number, line in enumerate(code.split("\n"), start=1):
        directive = DIRECTIVE.match(line)
        if directive:
            keyword = directive.group("keyword")
            condition = directive.group("condition").strip()
            if keyword == "if":
                blocks.append([condition])
            elif keyword == "elseif" and blocks:
                blocks[-1].append(condition)
            elif keyword == "endif" and blocks:
                blocks.pop()
            continue
        if "import" not in line:
            continue
        for statement in line.split(";"):
            match = IMPORT_DECLARATION.match(statement)
            if not match:
                continue
            guarded = any(GUARD_CONDITION.search(c) for block in blocks for c in block)
            imports.append(Import(match.group("module"), number, guarded, " ".join(statement.split())))
    return imports


# MARK: The layer table in docs/architecture.md


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [cell.strip() for cell in body.split("|")]


def _names(cell: str) -> list[str]:
    return [name for name in re.split(r"[\s,`]+", cell) if name]


def _marked_table(lines: list[str], path: str, begin_marker: str, end_marker: str,
                  what: str) -> tuple[list[tuple[int, str]], list[str]]:
    """The rows (with their 1-based lines) and lower-cased header of the Markdown table
    between two marker lines."""
    try:
        begin = next(i for i, line in enumerate(lines) if line.strip() == begin_marker)
        end = next(i for i, line in enumerate(lines) if i > begin and line.strip() == end_marker)
    except StopIteration:
        raise CheckError(f"{path}: no {what} between {begin_marker} and {end_marker}") from None
    table_lines = [(i + 1, line) for i, line in enumerate(lines[begin + 1:end], start=begin + 1)
                   if line.strip().startswith("|")]
    if len(table_lines) < 3:
        raise CheckError(f"{path}:{begin + 1}: the {what} needs a header, a separator and rows")
    return table_lines, [cell.lower() for cell in _cells(table_lines[0][1])]


def parse_layer_table(text: str, path: str) -> LayerTable:
    """Reads the layer table and the never-links table between their markers in `text`
    (a Markdown page)."""
    lines = text.split("\n")
    table_lines, header = _marked_table(lines, path, TABLE_BEGIN, TABLE_END, "layer table")

    def column(prefix: str) -> int:
        for index, title in enumerate(header):
            if title.startswith(prefix):
                return index
        raise CheckError(f"{path}:{table_lines[0][0]}: the layer table has no column starting with '{prefix}'")

    layer_column, targets_column = column("layer"), column("targets")
    portable_column, same_layer_column = column("portable"), column("imports within")
    table = LayerTable(path=path, rows=[])
    edges: list[tuple[str, str, int]] = []
    for number, line in table_lines[2:]:
        cells = _cells(line)
        if len(cells) != len(header):
            raise CheckError(f"{path}:{number}: {len(cells)} cells where the header has {len(header)}")
        layer = re.match(r"^\W*(\d+)\W*\s*(.*)$", cells[layer_column])
        if not layer:
            raise CheckError(f"{path}:{number}: the layer cell must start with the layer's number: '{cells[layer_column]}'")
        portable = cells[portable_column].strip("*_ ").lower()
        if portable not in ("yes", "no"):
            raise CheckError(f"{path}:{number}: portable must be yes or no, not '{cells[portable_column]}'")
        names = _names(cells[targets_column])
        if not names:
            raise CheckError(f"{path}:{number}: a layer row names no target")
        table.rows.append(LayerRow(int(layer.group(1)), layer.group(2).strip(), names, portable == "yes", number))
        for pair in re.split(r"[;,]", cells[same_layer_column]):
            if not pair.strip():
                continue
            ends = re.split(r"\s*(?:→|->)\s*", pair.replace("`", "").strip())
            if len(ends) != 2 or not all(ends):
                raise CheckError(f"{path}:{number}: same-layer imports are written 'A → B', not '{pair.strip()}'")
            edges.append((ends[0], ends[1], number))
    seen: dict[str, int] = {}
    for row in table.rows:
        for name in row.names:
            if name in seen:
                raise CheckError(f"{path}:{row.line}: {name} is already listed on line {seen[name]}")
            seen[name] = row.line
    for importer, imported, number in edges:
        rows = [table.row_for(importer), table.row_for(imported)]
        if None in rows:
            missing = importer if rows[0] is None else imported
            raise CheckError(f"{path}:{number}: same-layer import names {missing}, which the table does not list")
        if rows[0].rank != rows[1].rank:
            raise CheckError(f"{path}:{number}: {importer} → {imported} joins two layers; only imports within one layer are listed")
        table.same_layer.add((importer, imported))
        table.same_layer_lines[(importer, imported)] = number
    never_lines, never_header = _marked_table(lines, path, NEVER_LINKS_BEGIN, NEVER_LINKS_END, "never-links table")
    if len(never_header) != 2:
        raise CheckError(f"{path}:{never_lines[0][0]}: the never-links table has two columns: a target and what it never links")
    for number, line in never_lines[2:]:
        cells = _cells(line)
        if len(cells) != 2:
            raise CheckError(f"{path}:{number}: {len(cells)} cells where the never-links header has 2")
        owners, forbidden = _names(cells[0]), _names(cells[1])
        if len(owners) != 1 or not forbidden:
            raise CheckError(f"{path}:{number}: a never-links row names one target and at least one it never links")
        for name in owners + forbidden:
            if table.row_for(name) is None:
                raise CheckError(f"{path}:{number}: never-links names {name}, which the layer table does not list")
        table.never_links.setdefault(owners[0], []).extend((name, number) for name in forbidden)
    return table


# MARK: The package graph


@dataclass
class Target:
    name: str
    kind: str
    directory: Path
    dependencies: list[str]
    excluded: list[Path]
    sources: list[Path] | None


def _dependency_name(entry: dict) -> str:
    for key in ("byName", "target"):
        if key in entry:
            return entry[key][0]
    if "product" in entry:
        product, package = entry["product"][0], entry["product"][1]
        raise CheckError(f"the package depends on product {product} of {package}: the layer table has no row "
                         "for another package's modules yet; add them to the table and to scripts/layer-check")
    raise CheckError(f"unknown dependency form in the package description: {entry}")


def load_targets(package: dict, root: Path) -> list[Target]:
    targets = []
    for description in package["targets"]:
        kind = description["type"]
        name = description["name"]
        if description.get("path"):
            directory = root / description["path"]
        else:
            directory = root / ("Tests" if kind == "test" else "Sources") / name
        sources = description.get("sources")
        targets.append(Target(
            name=name,
            kind=kind,
            directory=directory,
            dependencies=[_dependency_name(entry) for entry in description.get("dependencies", [])],
            excluded=[directory / path for path in description.get("exclude", [])],
            sources=[directory / path for path in sources] if sources else None,
        ))
    return targets


def swift_files(target: Target) -> list[Path]:
    roots = target.sources if target.sources is not None else [target.directory]
    files = []
    for start in roots:
        if start.is_file():
            candidates = [start]
        else:
            candidates = [Path(base) / name for base, _, names in os.walk(start) for name in names]
        for path in candidates:
            if path.suffix != ".swift":
                continue
            if any(path == excluded or excluded in path.parents for excluded in target.excluded):
                continue
            files.append(path)
    return sorted(files)


def _manifest_lines(manifest: str | None) -> dict[str, int]:
    """The line of each target's declaration in Package.swift, for messages."""
    lines: dict[str, int] = {}
    if manifest is None:
        return lines
    declaration = re.compile(r'\.(?:target|testTarget|executableTarget|systemLibrary|binaryTarget|plugin|macro)'
                             r'\(\s*name:\s*"([^"]+)"')
    for match in declaration.finditer(manifest):
        lines.setdefault(match.group(1), manifest.count("\n", 0, match.start()) + 1)
    return lines


# MARK: The rules


def check(package: dict, root: Path, table: LayerTable, manifest: str | None = None,
          manifest_path: str = "Package.swift") -> tuple[list[Problem], int]:
    """Every way the package leaves the table, and how many imports were read."""
    problems: list[Problem] = []
    targets = load_targets(package, root)
    by_name = {target.name: target for target in targets}
    target_line = _manifest_lines(manifest)

    def at_manifest(target: str, message: str) -> None:
        problems.append(Problem(manifest_path, target_line.get(target, 1), message))

    rows: dict[str, LayerRow] = {}
    for target in targets:
        row = table.row_for(target.name)
        if row is None:
            at_manifest(target.name, f"target {target.name} is not in the layer table ({table.path}); "
                                     "add it to the row of its layer")
        else:
            rows[target.name] = row
    for row in table.rows:
        for name in row.names:
            if _is_pattern(name):
                if not any(fnmatch.fnmatchcase(target.name, name) for target in targets):
                    problems.append(Problem(table.path, row.line, f"pattern {name} matches no target"))
            elif name not in by_name:
                problems.append(Problem(table.path, row.line, f"{name} is in the layer table but is no target of the package"))
    for (importer, imported), line in sorted(table.same_layer_lines.items()):
        if importer in by_name and imported not in by_name[importer].dependencies:
            problems.append(Problem(table.path, line, f"same-layer import {importer} → {imported} is listed but "
                                                      f"{importer} does not depend on {imported}; remove it"))

    # The manifest lists targets lowest layer first.
    highest: tuple[int, str] | None = None
    for target in targets:
        row = rows.get(target.name)
        if row is None:
            continue
        if highest is not None and row.rank < highest[0]:
            at_manifest(target.name, f"manifest order: {target.name} (layer {row.rank}) comes after "
                                     f"{highest[1]} (layer {highest[0]}); list targets lowest layer first")
        if highest is None or row.rank >= highest[0]:
            highest = (row.rank, target.name)

    def crossing(importer: str, imported: str) -> str | None:
        """Why `importer` may not use `imported`, or None when the table allows it."""
        mine, theirs = rows.get(importer), rows.get(imported)
        if mine is None or theirs is None:
            return None  # reported above
        if theirs.rank < mine.rank:
            return None
        if theirs.rank == mine.rank and (importer, imported) in table.same_layer:
            return None
        where = "its own layer" if theirs.rank == mine.rank else "a higher layer"
        return (f"{importer} (layer {mine.rank}, {mine.label}) may not import {imported}, "
                f"which is in {where} (layer {theirs.rank}, {theirs.label})")

    import_count = 0
    for target in targets:
        row = rows.get(target.name)
        for dependency in target.dependencies:
            if dependency not in by_name:
                at_manifest(target.name, f"{target.name} depends on {dependency}, which is no target of this package")
            elif (reason := crossing(target.name, dependency)) is not None:
                at_manifest(target.name, f"declared dependency crosses the layer table: {reason}")
        if target.kind == "system":
            continue
        imported: set[str] = set()
        for path in swift_files(target):
            shown = os.path.relpath(path, root)
            for declaration in swift_imports(path.read_text(encoding="utf-8")):
                import_count += 1
                module = declaration.module
                imported.add(module)
                if module == target.name:
                    continue
                if module in by_name:
                    if module not in target.dependencies:
                        problems.append(Problem(shown, declaration.line,
                                                f"{target.name} imports {module}, which is not a declared dependency "
                                                f"of {target.name} in {manifest_path}"))
                    reason = crossing(target.name, module)
                    if reason is not None:
                        problems.append(Problem(shown, declaration.line, f"import crosses the layer table: {reason}"))
                    elif row is not None and row.portable and module in rows and not rows[module].portable:
                        problems.append(Problem(shown, declaration.line,
                                                f"{target.name} is portable but imports {module}, which is not"))
                elif row is not None and row.portable and module not in PORTABLE_TOOLCHAIN_MODULES and not declaration.guarded:
                    problems.append(Problem(shown, declaration.line,
                                            f"{target.name} is portable but imports the platform module {module} "
                                            f"outside an #if canImport({module}) or #if os(...) block"))
        for dependency in target.dependencies:
            if dependency in by_name and dependency not in imported:
                at_manifest(target.name, f"{target.name} declares the dependency {dependency} but no file of it "
                                         f"imports {dependency}; remove it")
    problems += _never_linked(targets, by_name, table, at_manifest)
    return problems, import_count


def _never_linked(targets: list[Target], by_name: dict[str, Target], table: LayerTable, at_manifest) -> list[Problem]:
    """A target that links, through any chain of declared dependencies, one it must not."""
    problems: list[Problem] = []
    for owner, forbidden in sorted(table.never_links.items()):
        if owner not in by_name:
            problems.append(Problem(table.path, forbidden[0][1], f"never-links names {owner}, which is no target of the package"))
            continue
        # Breadth first, remembering how each target was reached, for the message.
        reached_from: dict[str, str | None] = {owner: None}
        queue = [owner]
        while queue:
            current = queue.pop(0)
            for dependency in by_name[current].dependencies if current in by_name else []:
                if dependency not in reached_from:
                    reached_from[dependency] = current
                    queue.append(dependency)
        for name, line in forbidden:
            if name not in by_name:
                problems.append(Problem(table.path, line, f"never-links names {name}, which is no target of the package"))
            elif name in reached_from:
                chain = [name]
                while reached_from[chain[-1]] is not None:
                    chain.append(reached_from[chain[-1]])
                at_manifest(owner, f"{owner} links {name} ({' → '.join(reversed(chain))}), which the never-links "
                                   f"table in {table.path} (line {line}) says it must not")
    return problems


# MARK: Command line


def dump_package(root: Path) -> dict:
    try:
        result = subprocess.run(["swift", "package", "dump-package"], cwd=root, capture_output=True, text=True,
                                timeout=300)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CheckError(f"swift package dump-package did not run: {error}") from None
    if result.returncode != 0:
        raise CheckError(f"swift package dump-package failed:\n{result.stderr}")
    return json.loads(result.stdout)


def listing(package: dict, table: LayerTable) -> str:
    """Every target with its layer and portability, lowest layer first."""
    lines = []
    for description in sorted(package["targets"], key=lambda t: (getattr(table.row_for(t["name"]), "rank", 99), t["name"])):
        row = table.row_for(description["name"])
        if row is None:
            lines.append(f"  ?  {description['name']}  (not in the table)")
        else:
            lines.append(f"{row.rank:>3}  {description['name']:<28} {'portable' if row.portable else 'platform':<9} {row.label}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the package's directory (default: this repository)")
    parser.add_argument("--package-json", type=Path,
                        help="read this dump-package output instead of running swift package dump-package")
    parser.add_argument("--table", type=Path, help="the page holding the layer table (default: docs/architecture.md)")
    parser.add_argument("--list", action="store_true", help="print every target with its layer, then check")
    arguments = parser.parse_args(argv)
    root = arguments.root.resolve()
    table_path = arguments.table or root / "docs" / "architecture.md"
    try:
        table = parse_layer_table(table_path.read_text(encoding="utf-8"), os.path.relpath(table_path, root))
        if arguments.package_json:
            package = json.loads(arguments.package_json.read_text(encoding="utf-8"))
        else:
            package = dump_package(root)
        manifest_file = root / "Package.swift"
        manifest = manifest_file.read_text(encoding="utf-8") if manifest_file.exists() else None
        if arguments.list:
            print(listing(package, table))
        problems, import_count = check(package, root, table, manifest)
    except (CheckError, OSError, json.JSONDecodeError) as error:
        print(f"layer check: cannot run: {error}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"layer check: {len(problems)} problem(s); the layer table is in {table.path}", file=sys.stderr)
        return 1
    print(f"layer check: {len(package['targets'])} targets, {import_count} imports, all within the table in {table.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
