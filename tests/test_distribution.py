"""
The package as it would be published: an sdist and a wheel built from the source tree (offline,
with the environment's setuptools), the sdist installing cleanly into an empty folder, with the
whole contrib and honest metadata (licence as an SPDX expression, the Evennia versions
supported).

"""

import email
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A copy of what the sdist is made from, and the sdist and wheel built from it."""
    source = tmp_path_factory.mktemp("source")
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    shutil.copy(ROOT / "LICENSE", source)
    shutil.copytree(
        ROOT / "contrib",
        source / "contrib",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    dist = tmp_path_factory.mktemp("dist")
    built = []
    for hook in ("build_sdist", "build_wheel"):
        # each in a process of its own, as a build frontend calls them
        code = (
            f"import sys; from setuptools import build_meta; print(build_meta.{hook}(sys.argv[1]))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(dist)],
            cwd=source,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        # a deprecated licence table or classifier would warn here
        assert "deprecat" not in done.stderr.lower(), done.stderr[-3000:]
        built.append(dist / done.stdout.split()[-1])
    return built


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


def test_the_wheel_metadata(built):
    _, wheel = built
    meta = _metadata(wheel)
    assert meta["Name"] == "evennia-ai-assistant"
    assert meta["License-Expression"] == "BSD-3-Clause" and meta["License"] is None
    assert meta["Requires-Python"] == ">=3.11"
    requires = meta.get_all("Requires-Dist")
    assert any(r.replace(" ", "").startswith("evennia<7,>=5.0") for r in requires), requires
    assert "Programming Language :: Python :: 3.13" in meta.get_all("Classifier")
    assert meta.get_all("License-File") == ["LICENSE"]
    with zipfile.ZipFile(wheel) as archive:
        licence = next(n for n in archive.namelist() if n.endswith("licenses/LICENSE"))
        assert "BSD 3-Clause License" in archive.read(licence).decode()


def test_the_sdist_installs_into_an_empty_folder_with_every_subpackage(built, tmp_path):
    sdist, wheel = built
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(n.endswith("/README.md") for n in names)
    assert any(n.endswith("/contrib/ai_assistant/sleep/__init__.py") for n in names)
    target = tmp_path / "site"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--target",
            str(target),
            str(sdist),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    installed = {".".join(p.parent.relative_to(target).parts) for p in target.rglob("__init__.py")}
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = {
            ".".join(Path(n).parent.parts) for n in archive.namelist() if n.endswith("__init__.py")
        }
    for package in (
        "ai_assistant",
        "ai_assistant.shell",
        "ai_assistant.sleep",
        "ai_assistant.llm",
        "ai_assistant.tools",
        "ai_assistant.memory.kinds",
    ):
        assert package in installed and package in in_wheel, package
    assert (target / "ai_assistant" / "shell" / "compat.py").exists()


def test_the_dashboard_templates_are_in_the_wheel_and_the_sdist(built, tmp_path):
    sdist, wheel = built
    on_disk = {
        p.name for p in (ROOT / "contrib/ai_assistant/web/templates/ai_assistant").glob("*.html")
    }
    assert {"list.html", "detail.html"} <= on_disk
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = {
            Path(n).name
            for n in archive.namelist()
            if n.startswith("ai_assistant/web/templates/ai_assistant/")
        }
    with tarfile.open(sdist) as archive:
        in_sdist = {Path(n).name for n in archive.getnames() if "/web/templates/ai_assistant/" in n}
    assert in_wheel == on_disk and in_sdist == on_disk
    # the menu's link for builders, which the pages' layout extends
    with zipfile.ZipFile(wheel) as archive:
        assert "ai_assistant/web/templates/website/_menu.html" in archive.namelist()
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("/web/templates/website/_menu.html") for n in archive.getnames())
