"""``python -m syw <command>``: the ``syw`` command (:mod:`syw.cli`)."""
import sys

from syw.cli import main

sys.exit(main())
