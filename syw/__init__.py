"""Show Your Work (Dodge et al., EMNLP 2019): expected validation performance against search budget.

The import package of the suite; every module's dotted name is its file's path (docs/architecture.md).
Its layers, bottom up: ``syw.core`` (errors, paths, units, records, settings, the trial context),
``syw.data`` and ``syw.models``, ``syw.experiments`` (the runner), ``syw.analysis`` (the estimators;
with ``syw.figures`` all the light install needs for ``syw curve``), ``syw.figures``, and on top
``syw.cli``, the ``syw`` command. Its configs are ``syw/conf``. In a checkout the folders
``analysis/``, ``conf/``, ``data/``, ``experiments/``, ``figures/`` and ``models/`` at the repository
root are links to these folders, so they stand where users look for them.
"""
