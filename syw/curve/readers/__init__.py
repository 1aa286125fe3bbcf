"""One module per kind of source ``syw curve`` reads; ``syw.curve.sources.SOURCES`` is their table."""
