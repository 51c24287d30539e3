#!/usr/bin/env python3
"""Self-test of the layer check: small made-up packages that must pass or fail, so a
check that passed everything would fail here. Run by `make layer-check`."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import layer_check  # noqa: E402  (the path above first)

TABLE = """\
# A made-up architecture page

<!-- layer-table -->
| Layer | Targets | Portable | Imports within the layer |
|---|---|---|---|
| 0 base | `Base` | yes | |
| 1 shims | `CPlatform` | no | |
| 2 formats | `Wire` `Frames` | yes | `Frames` → `Wire` |
| 3 runtime | `Loop` | no | |
| 4 product | `App` | no | |
| 5 tests | `*Tests` | no | |
<!-- /layer-table -->

<!-- never-links -->
| Target | Never links |
|---|---|
| `Frames` | `Loop` `CPlatform` |
<!-- /never-links -->
"""


def target(name: str, dependencies: tuple[str, ...] = (), kind: str = "regular") -> dict:
    return {"name": name, "type": kind, "dependencies": [{"byName": [d, None]} for d in dependencies],
            "exclude": [], "resources": [], "settings": [], "packageAccess": True}


def good_targets() -> list[dict]:
    return [
        target("Base"),
        target("CPlatform", kind="system"),
        target("Wire", ("Base",)),
        target("Frames", ("Wire", "Base")),
        target("Loop", ("CPlatform", "Wire")),
        target("App", ("Loop", "Frames")),
        target("AppTests", ("App", "Wire"), kind="test"),
    ]


GOOD_FILES = {
    "Sources/Base/Bytes.swift": "public struct Bytes {}\n",
    "Sources/Wire/Codec.swift": textwrap.dedent("""\
        public import Base
        #if canImport(Glibc)
        import Glibc
        #elseif canImport(Darwin)
        import Darwin
        #else
        import ucrt
        #endif
        // import Loop  (a comment is no import)
        /* nested /* block */ import Loop */
        let help = "import Loop"
        let script = \"\"\"
            import Loop
            \"\"\"
        let raw = #"a "quoted" \\(x) import Loop"#
        let interpolated = "value \\(f("import Loop)")) done"
        """),
    "Sources/Frames/Frame.swift": "internal import struct Wire.Codec\n@preconcurrency import Base\n",
    "Sources/Loop/Poll.swift": "import CPlatform\nimport Glibc\npublic import Wire; import Synchronization\n",
    "Sources/App/App.swift": "@_spi(Testing) public import Loop\nimport Frames\nimport Foundation\n",
    "Tests/AppTests/AppTests.swift": "@testable import App\nimport Wire\nimport Testing\n",
}

MANIFEST = "\n".join(f'        .target(name: "{t["name"]}"),' for t in good_targets()) + "\n"


class LayerCheckCase(unittest.TestCase):
    def run_check(self, targets: list[dict], files: dict[str, str], table: str = TABLE,
                  manifest: str = MANIFEST) -> list[layer_check.Problem]:
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            for relative, text in files.items():
                path = root / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            for description in targets:
                folder = "Tests" if description["type"] == "test" else "Sources"
                (root / folder / description["name"]).mkdir(parents=True, exist_ok=True)
            parsed = layer_check.parse_layer_table(table, "docs/architecture.md")
            problems, _ = layer_check.check({"targets": targets}, root, parsed, manifest)
            return problems

    def assert_problem(self, problems: list[layer_check.Problem], path: str, line: int, *words: str) -> None:
        for problem in problems:
            if problem.path == path and problem.line == line and all(word in problem.message for word in words):
                return
        self.fail(f"no problem at {path}:{line} with {words}; got:\n" + "\n".join(map(str, problems)))

    def with_file(self, relative: str, text: str) -> dict[str, str]:
        files = dict(GOOD_FILES)
        files[relative] = text
        return files


class PassingPackageTests(LayerCheckCase):
    def test_a_package_that_keeps_to_the_table_passes(self) -> None:
        self.assertEqual(self.run_check(good_targets(), GOOD_FILES), [])


class LayerRuleTests(LayerCheckCase):
    def test_an_import_from_a_higher_layer_fails_at_its_line(self) -> None:
        targets = good_targets()
        targets[2] = target("Wire", ("Base", "Loop"))
        problems = self.run_check(targets, self.with_file("Sources/Wire/Codec.swift", "import Base\n\nimport Loop\n"))
        self.assert_problem(problems, "Sources/Wire/Codec.swift", 3, "Wire (layer 2", "may not import Loop", "higher layer")
        self.assert_problem(problems, "Package.swift", 3, "declared dependency crosses the layer table")

    def test_an_import_within_a_layer_needs_its_pair_in_the_table(self) -> None:
        targets = good_targets()
        targets[2] = target("Wire", ("Base", "Frames"))
        targets[3] = target("Frames", ("Base",))
        files = self.with_file("Sources/Wire/Codec.swift", "import Base\nimport Frames\n")
        files["Sources/Frames/Frame.swift"] = "import Base\n"
        problems = self.run_check(targets, files)
        self.assert_problem(problems, "Sources/Wire/Codec.swift", 2, "may not import Frames", "its own layer")
        self.assert_problem(problems, "docs/architecture.md", 8, "Frames → Wire", "does not depend on Wire")

    def test_a_testable_import_is_checked_like_any_other(self) -> None:
        targets = good_targets()
        targets[5] = target("App", ("Loop", "Frames", "AppTests"))
        problems = self.run_check(targets, self.with_file("Sources/App/App.swift",
                                                          "import Loop\nimport Frames\n@testable import AppTests\n"))
        self.assert_problem(problems, "Sources/App/App.swift", 3, "may not import AppTests")


class DependencyRuleTests(LayerCheckCase):
    def test_a_declared_dependency_that_no_file_imports_fails(self) -> None:
        targets = good_targets()
        targets[5] = target("App", ("Loop", "Frames", "Base"))
        problems = self.run_check(targets, GOOD_FILES)
        self.assert_problem(problems, "Package.swift", 6, "App declares the dependency Base", "remove it")

    def test_an_import_of_an_undeclared_target_fails(self) -> None:
        problems = self.run_check(good_targets(), self.with_file("Tests/AppTests/AppTests.swift",
                                                                 "@testable import App\nimport Wire\nimport Loop\n"))
        self.assert_problem(problems, "Tests/AppTests/AppTests.swift", 3, "imports Loop", "not a declared dependency")

    def test_a_dependency_on_no_target_of_the_package_fails(self) -> None:
        targets = good_targets()
        targets[0] = target("Base", ("Missing",))
        problems = self.run_check(targets, GOOD_FILES)
        self.assert_problem(problems, "Package.swift", 1, "Base depends on Missing")

    def test_a_product_of_another_package_stops_the_check(self) -> None:
        targets = good_targets()
        targets[0]["dependencies"] = [{"product": ["NIOCore", "swift-nio", None, None]}]
        with self.assertRaises(layer_check.CheckError):
            self.run_check(targets, GOOD_FILES)


class PortabilityRuleTests(LayerCheckCase):
    def test_an_unguarded_platform_import_in_a_portable_target_fails(self) -> None:
        problems = self.run_check(good_targets(), self.with_file("Sources/Wire/Codec.swift",
                                                                 "import Base\nimport Glibc\n"))
        self.assert_problem(problems, "Sources/Wire/Codec.swift", 2, "Wire is portable", "platform module Glibc")

    def test_a_platform_import_under_an_unrelated_condition_is_not_guarded(self) -> None:
        problems = self.run_check(good_targets(), self.with_file(
            "Sources/Wire/Codec.swift", "import Base\n#if DEBUG\nimport Darwin\n#endif\n"))
        self.assert_problem(problems, "Sources/Wire/Codec.swift", 3, "platform module Darwin")

    def test_a_guard_ends_with_its_block(self) -> None:
        problems = self.run_check(good_targets(), self.with_file(
            "Sources/Wire/Codec.swift", "import Base\n#if os(Linux)\nimport Glibc\n#endif\nimport Glibc\n"))
        self.assertEqual([(p.path, p.line) for p in problems], [("Sources/Wire/Codec.swift", 5)])

    def test_a_portable_target_may_not_import_a_platform_target(self) -> None:
        targets = good_targets()
        targets[2] = target("Wire", ("Base", "CPlatform"))
        problems = self.run_check(targets, self.with_file(
            "Sources/Wire/Codec.swift", "import Base\n#if canImport(Glibc)\nimport CPlatform\n#endif\n"))
        self.assert_problem(problems, "Sources/Wire/Codec.swift", 3, "Wire is portable but imports CPlatform")

    def test_a_platform_target_may_import_the_platform(self) -> None:
        problems = self.run_check(good_targets(), self.with_file("Sources/App/App.swift",
                                                                 "import Loop\nimport Frames\nimport Glibc\nimport CallKit\n"))
        self.assertEqual(problems, [])


class NeverLinksRuleTests(LayerCheckCase):
    def test_a_forbidden_target_reached_through_a_dependency_fails_with_the_chain(self) -> None:
        targets = good_targets()
        # Frames -> Wire -> Loop would be an upward import too; make Loop a layer-2 peer
        # reached legally, to see the never-links rule alone.
        table = TABLE.replace("| 2 formats | `Wire` `Frames` | yes | `Frames` → `Wire` |",
                              "| 2 formats | `Wire` `Frames` `Helper` | yes | `Frames` → `Wire`, `Wire` → `Helper` |")
        table = table.replace("| `Frames` | `Loop` `CPlatform` |", "| `Frames` | `Helper` |")
        targets[2] = target("Wire", ("Base", "Helper"))
        targets.insert(2, target("Helper"))
        files = self.with_file("Sources/Wire/Codec.swift", "import Base\nimport Helper\n")
        files["Sources/Helper/Helper.swift"] = "struct Helper {}\n"
        problems = self.run_check(targets, files, table=table, manifest=MANIFEST + '        .target(name: "Helper"),\n')
        self.assert_problem(problems, "Package.swift", 4, "Frames links Helper (Frames → Wire → Helper)", "must not")
        self.assertEqual(len(problems), 1, "\n".join(map(str, problems)))

    def test_a_never_links_row_naming_no_target_stops_the_check(self) -> None:
        with self.assertRaises(layer_check.CheckError):
            layer_check.parse_layer_table(TABLE.replace("| `Frames` | `Loop` `CPlatform` |", "| `Frames` | `Nowhere` |"),
                                          "docs/architecture.md")
        with self.assertRaises(layer_check.CheckError):
            layer_check.parse_layer_table(TABLE.replace("<!-- never-links -->", ""), "docs/architecture.md")


class TableRuleTests(LayerCheckCase):
    def test_a_target_missing_from_the_table_fails(self) -> None:
        targets = good_targets() + [target("Stray")]
        problems = self.run_check(targets, GOOD_FILES, manifest=MANIFEST + '        .target(name: "Stray"),\n')
        self.assert_problem(problems, "Package.swift", 8, "Stray is not in the layer table")

    def test_a_table_entry_that_is_no_target_fails(self) -> None:
        table = TABLE.replace("`Loop` |", "`Loop` `Gone` |")
        problems = self.run_check(good_targets(), GOOD_FILES, table=table)
        self.assert_problem(problems, "docs/architecture.md", 9, "Gone is in the layer table but is no target")

    def test_a_manifest_out_of_layer_order_fails(self) -> None:
        targets = good_targets()
        targets[1], targets[4] = targets[4], targets[1]
        problems = self.run_check(targets, GOOD_FILES)
        self.assert_problem(problems, "Package.swift", 2, "manifest order: CPlatform (layer 1) comes after Loop (layer 3)")

    def test_a_malformed_table_stops_the_check(self) -> None:
        cases = {
            "no markers": TABLE.replace("<!-- layer-table -->", ""),
            "name twice": TABLE.replace("`Loop` |", "`Loop` `Wire` |"),
            "portable maybe": TABLE.replace("| 3 runtime | `Loop` | no |", "| 3 runtime | `Loop` | maybe |"),
            "no layer number": TABLE.replace("| 3 runtime |", "| runtime |"),
            "pair across layers": TABLE.replace("`Frames` → `Wire`", "`Frames` → `Loop`"),
            "pair without arrow": TABLE.replace("`Frames` → `Wire`", "`Frames` `Wire`"),
        }
        for name, table in cases.items():
            with self.subTest(name), self.assertRaises(layer_check.CheckError):
                layer_check.parse_layer_table(table, "docs/architecture.md")


class SwiftImportTests(unittest.TestCase):
    def test_every_import_form_is_read_with_its_line(self) -> None:
        source = textwrap.dedent("""\
            import A
            public import B
            @testable import C
            @_spi(X) @preconcurrency internal import D
            import struct E.Thing
            import F.Submodule; import G
            @_implementationOnly import H
            """)
        self.assertEqual([(i.module, i.line) for i in layer_check.swift_imports(source)],
                         [("A", 1), ("B", 2), ("C", 3), ("D", 4), ("E", 5), ("F", 6), ("G", 6), ("H", 7)])

    def test_comments_and_strings_hold_no_imports(self) -> None:
        source = GOOD_FILES["Sources/Wire/Codec.swift"]
        modules = [i.module for i in layer_check.swift_imports(source)]
        self.assertEqual(modules, ["Base", "Glibc", "Darwin", "ucrt"])
        self.assertTrue(all(i.guarded for i in layer_check.swift_imports(source) if i.module != "Base"))

    def test_code_after_a_string_with_a_nested_interpolation_is_still_read(self) -> None:
        source = 'let s = "a \\(g("b\\(h(")"))")) c"\nimport After\n'
        self.assertEqual([i.module for i in layer_check.swift_imports(source)], ["After"])


class CommandLineTests(unittest.TestCase):
    def run_main(self, table: str, files: dict[str, str]) -> tuple[int, str]:
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            for relative, text in files.items():
                (root / relative).parent.mkdir(parents=True, exist_ok=True)
                (root / relative).write_text(text)
            (root / "docs").mkdir()
            (root / "docs" / "architecture.md").write_text(table)
            (root / "package.json").write_text(json.dumps({"targets": good_targets()}))
            (root / "Package.swift").write_text(MANIFEST)
            errors = io.StringIO()
            with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
                status = layer_check.main(["--root", str(root), "--package-json", str(root / "package.json")])
            return status, errors.getvalue()

    def test_exit_status_says_pass_fail_or_cannot_run(self) -> None:
        self.assertEqual(self.run_main(TABLE, GOOD_FILES), (0, ""))
        status, errors = self.run_main(TABLE, {**GOOD_FILES, "Sources/Wire/Codec.swift": "import Base\nimport Glibc\n"})
        self.assertEqual(status, 1)
        self.assertIn("Sources/Wire/Codec.swift:2: error: Wire is portable", errors)
        status, errors = self.run_main("no table here\n", GOOD_FILES)
        self.assertEqual(status, 2)
        self.assertIn("no layer table", errors)


if __name__ == "__main__":
    unittest.main(verbosity=1)
