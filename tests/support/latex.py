"""Compile a LaTeX fragment with pdflatex in a test's folder (the tests that call it skip without pdflatex)."""
import shutil
import subprocess
from pathlib import Path

import pytest

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed here")


def compiles(folder: Path, fragment: str, packages: tuple[str, ...] = ("booktabs",)) -> None:
    """Assert that ``fragment`` in an article with ``packages`` compiles to a PDF of some content."""
    preamble = "".join(f"\\usepackage{{{p}}}\n" for p in packages)
    (folder / "doc.tex").write_text(f"\\documentclass{{article}}\n{preamble}\\begin{{document}}\n{fragment}\n\\end{{document}}\n")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=folder,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (folder / "doc.pdf").stat().st_size > 1000
