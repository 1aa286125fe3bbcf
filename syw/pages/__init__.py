"""The results pages: README.md, docs/ and results/<study>/README.md rewritten from the records where markers stand
(``syw readme``), and docs/verdicts.md (``syw verdicts``)."""
