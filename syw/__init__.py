"""Show Your Work (Dodge et al., EMNLP 2019): expected validation performance against search budget.

The import package of the suite. Its subpackages are the repository's folders: ``syw.analysis``
(the estimators; all the light install needs with ``syw.figures`` for ``syw curve``),
``syw.data``, ``syw.models``, ``syw.experiments``, ``syw.figures``; beside them the core modules of
this folder (errors, paths, units, records, settings, the trial context) that every layer may
import. An installed wheel holds those folders under ``syw/``; in a checkout they stand beside this
folder, and the package's path takes in the repository root so that ``syw.analysis`` is
``analysis/`` there too (docs/architecture.md).
"""
from pathlib import Path as _Path

_HERE = _Path(__file__).resolve().parent
if not (_HERE / "analysis").is_dir() and (_HERE.parent / "analysis" / "__init__.py").is_file():
    __path__.append(str(_HERE.parent))  # a checkout: the subpackages are the folders beside this one
