"""
The distribution ships the whole contrib: every subpackage of `contrib/ai_assistant` is one that
setuptools finds with the configuration in `pyproject.toml` (an explicit list once left out
`ai_assistant.sleep`, which an editable install hides and `pip install` does not).

"""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from setuptools.discovery import PackageFinder

ROOT = Path(__file__).resolve().parent.parent


def _packages_on_disk() -> set[str]:
    base = ROOT / "contrib"
    return {
        ".".join(folder.relative_to(base).parts)
        for folder in (base / "ai_assistant").rglob("*")
        if folder.is_dir() and any(folder.glob("*.py"))
    } | {"ai_assistant"}


def _packages_in_distribution() -> set[str]:
    setuptools_conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = setuptools_conf.get("packages")
    if isinstance(packages, list):
        return set(packages)
    find = packages["find"] if isinstance(packages, dict) else {}
    where = find.get("where", ["."])
    found = set()
    for folder in where:
        found |= set(
            PackageFinder.find(
                str(ROOT / folder),
                exclude=tuple(find.get("exclude", ())),
                include=tuple(find.get("include", ("*",))),
            )
        )
    return found


def test_every_subpackage_is_in_the_distribution():
    on_disk = _packages_on_disk()
    assert {"ai_assistant.sleep", "ai_assistant.tools"} <= on_disk
    missing = on_disk - _packages_in_distribution()
    assert not missing, f"pyproject.toml leaves these out of the wheel: {sorted(missing)}"


def test_every_subpackage_has_an_init():
    # setuptools finds only regular packages: a folder of modules without __init__.py is skipped
    for package in _packages_on_disk():
        init = ROOT / "contrib" / Path(*package.split(".")) / "__init__.py"
        assert init.exists(), f"{package} has no __init__.py"


def test_public_api_is_lazy_and_complete():
    # importing the package alone touches nothing of Evennia (settings files import it early)
    code = (
        "import sys, ai_assistant; "
        "assert not any(m.startswith('evennia') for m in sys.modules), 'evennia imported'; "
        "print(sorted(ai_assistant.__all__))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "AssistantHandler" in done.stdout and "AssistantCmdSet" in done.stdout
    import ai_assistant

    assert ai_assistant.AssistantHandler.__module__ == "ai_assistant.handler"
    assert ai_assistant.AssistantConfig().tick_rate == 5
    with pytest.raises(AttributeError):
        ai_assistant.NoSuchThing
