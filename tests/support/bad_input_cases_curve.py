"""The bad-input cases of ``syw curve``, ``syw report`` and ``syw table`` from issue 75: what they read silently,
said without the line, wrote over an input or ended with a traceback. Rows as in tests/support/bad_input_cases.py,
which appends them to CASES."""
from __future__ import annotations

import json

from tests.support.bad_input_support import Case, cli, record_lines, shell, sqlite_bytes

CSV = "family,value\na,0.5\n"

CURVE_CASES: list[Case] = [
    # what syw curve read silently, or said without the line
    Case("syw-text-in-the-picked-score-column", {"r.csv": "model,val_acc\n" + "a,0.5\n" * 6 + "a,high\n"},
         lambda t: cli("curve", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: line 8: column 'val_acc' holds 'high', not a finite number$"),
    Case("syw-text-in-the-picked-time-column", {"r.csv": "model,val_acc,train_time_s\n" + "a,0.5,3\n" * 5 + "a,0.6,10 min\n"},
         lambda t: cli("curve", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: line 7: column 'train_time_s' holds '10 min', not a finite number$"),
    Case("syw-negative-training-time", {"r.csv": "model,val_acc,train_time_s\na,0.5,3\na,0.6,-5\n"},
         lambda t: cli("curve", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: line 3: column 'train_time_s' holds -5, a negative training time$"),
    Case("analysis-negative-duration", {"r.tsv": "family\tvalue\tsecs\na\t0.5\t1\na\t0.6\t-2.5\n"},
         lambda t: cli("table", f"{t}/r.tsv", "--duration", "secs"),
         2, r"^error: {t}/r\.tsv: line 3: column 'secs' holds -2\.5, a negative training time$"),
    Case("syw-floor-off-the-fractions-scale", {"r.csv": "model,val_acc\na,0.5\na,0.7\n"},
         lambda t: cli("curve", f"{t}/r.csv", "--floor", "2"),
         2, r"^error: {t}/r\.csv: --floor 2 lies outside \[0, 1\], where every score lies \(scores from 0\.5 to 0\.7 in "
            r"column 'val_acc'\): give the floor on the scores' scale$"),
    Case("syw-floor-beyond-every-score", {"r.csv": "model,val_acc\na,50\na,70\n"},
         lambda t: cli("curve", f"{t}/r.csv", "--floor", "80"),
         2, r"^error: {t}/r\.csv: --floor 80 lies above every score, so every trial would count at 80 \(scores from 50 to 70 "
            r"in column 'val_acc'\): give the floor on the scores' scale$"),
    Case("syw-bad-option-value", {"r.csv": CSV}, lambda t: cli("curve", f"{t}/r.csv", "--forecast", "-5"),
         2, r"^error: syw curve: argument --forecast: -5 is not a budget: it must be at least 1"),
    Case("syw-bad-option-value-subprocess", {"r.csv": CSV}, lambda t: shell("curve", f"{t}/r.csv", "--forecast", "-5"),
         2, r"^error: syw curve: argument --forecast: -5 is not a budget: it must be at least 1"),
    # an SQLite file with a 'studies' table that is not Optuna's: read without writing (the snapshot: same bytes)
    Case("syw-studies-table-not-optunas", {"fake.db": lambda: sqlite_bytes("CREATE TABLE studies (id INTEGER, name TEXT)")},
         lambda t: cli("curve", f"{t}/fake.db"),
         2, r"^error: {t}/fake\.db: not an Optuna storage: a 'studies' table without Optuna's columns \(study_id, "
            r"study_name\) and no alembic_version, trials, version_info table; export the trials as CSV$"),
    Case("syw-studies-table-not-optunas-url", {"fake.db": lambda: sqlite_bytes(
        "CREATE TABLE studies (study_id INTEGER, study_name TEXT)")},
         lambda t: cli("curve", f"sqlite:///{t}/fake.db"),
         2, r"^error: sqlite:///{t}/fake\.db: not an Optuna storage: no alembic_version, trials, version_info table beside "
            r"'studies'; export the trials as CSV$"),
    Case("syw-studies-table-not-optunas-subprocess", {"fake.db": lambda: sqlite_bytes("CREATE TABLE studies (x REAL)")},
         lambda t: shell("curve", f"{t}/fake.db"),
         2, r"^error: {t}/fake\.db: not an Optuna storage: a 'studies' table without Optuna's columns"),
    *[Case(f"syw-storage-url-{kind}", {}, lambda t, url=url: cli("curve", url, "--out", f"{t}/out"), 2, message)
      for kind, url, message in [
          ("postgresql-without-its-driver", "postgresql://u@127.0.0.1:1/db",
           r"^error: postgresql://u@127\.0\.0\.1:1/db: reading this database needs its Python driver \(No module named "
           r"'psycopg2?'\); or export the trials as CSV$"),
          ("mysql-without-its-driver", "mysql://u@127.0.0.1:1/db",
           r"^error: mysql://u@127\.0\.0\.1:1/db: reading this database needs its Python driver \(No module named "
           r"'MySQLdb'\); or export the trials as CSV$"),
          ("unknown-scheme", "foo://bar",
           r"^error: foo://bar: not a storage URL: SQLAlchemy knows no database 'foo'; give a file, a folder or an "
           r"sqlite:/// URL$"),
      ]],
    # --out that holds (or is, or lies in) an input: the input would be replaced or changed
    Case("syw-out-holds-the-input", {"ow/expected_max.csv": "family,value\na,0.5\na,0.7\n"},
         lambda t: cli("curve", f"{t}/ow/expected_max.csv", "--out", f"{t}/ow"),
         2, r"^error: {t}/ow: --out holds the input {t}/ow/expected_max\.csv, which writing there could replace or "
            r"change; give another folder$"),
    Case("syw-out-is-the-input-folder", {"exp/t1/result.json": json.dumps({"val_acc": 0.5}) + "\n"},
         lambda t: cli("curve", f"{t}/exp", "--out", f"{t}/exp"),
         2, r"^error: {t}/exp: --out is the input {t}/exp, which writing there could replace or change; give another folder$"),
    Case("syw-out-inside-the-input-folder", {"exp/t1/result.json": json.dumps({"val_acc": 0.5}) + "\n"},
         lambda t: cli("curve", f"{t}/exp", "--out", f"{t}/exp/t1"),
         2, r"^error: {t}/exp/t1: --out lies inside the input {t}/exp, which writing there could replace or change; "
            r"give another folder$"),
    Case("syw-report-out-holds-the-input-csv", {"ow/trials.csv": "family,value\na,0.5\na,0.7\n"},
         lambda t: cli("report", f"{t}/ow/trials.csv", "--out", f"{t}/ow"),
         2, r"^error: {t}/ow: --out holds the input {t}/ow/trials\.csv, which writing there could replace or change; "
            r"give another folder$"),
    Case("syw-out-holds-the-storage", {"ow/s.db": lambda: sqlite_bytes("CREATE TABLE runs (x REAL)")},
         lambda t: cli("curve", f"sqlite:///{t}/ow/s.db", "--out", f"{t}/ow"),
         2, r"^error: {t}/ow: --out holds the input {t}/ow/s\.db, which writing there could replace or change; give "
            r"another folder$"),
    # JSON Python cannot read and numbers too large to compute with (issue 75, item 19): one line, nothing written
    *[Case(f"{kind}-jsonl-{name}", {"r.jsonl": lambda line=line: record_lines() + line},
           lambda t, command=command: cli(command, f"{t}/r.jsonl", *(["--out", f"{t}/out"] if command == "curve" else [])),
           2, rf"^error: {{t}}/r\.jsonl:2: {message}")
      for kind, command in (("syw", "curve"), ("analysis", "table")) for name, line, message in [
          ("nested-too-deeply", '{"family": "a", "value": 0.6, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
           r"JSON nested too deeply for Python to read$"),
          ("integer-of-5000-digits", '{"family": "a", "value": ' + "7" * 5000 + "}\n",
           r"a number too long for Python to read \(Exceeds the limit \(4300 digits\) for integer string conversion: "
           r"value has 5000 digits\)$"),
      ]],
    Case("syw-ray-params-nested-too-deeply", {"exp/t1/result.json": json.dumps({"val_acc": 0.5}) + "\n",
                                             "exp/t1/params.json": "[" * 100_000 + "]" * 100_000},
         lambda t: cli("curve", f"{t}/exp"),
         2, r"^error: {t}/exp/t1/params\.json: not JSON \(nested too deeply for Python to read\)$"),
    Case("syw-journal-line-nested-too-deeply", {"j.log": json.dumps({"op_code": 0, "study_name": "s", "directions": [2]})
                                                + "\n" + '{"op_code": 2, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"},
         lambda t: cli("curve", f"{t}/j.log"),
         2, r"^error: {t}/j\.log: line 2: not a JSON journal operation \(nested too deeply for Python to read\)$"),
    *[Case(f"{kind}-{name}-too-large", {"r.csv": f"family,value,secs\na,0.5,1\n{row}\na,0.7,2\n"},
           lambda t, command=command: cli(command, f"{t}/r.csv", "--duration", "secs",
                                          *(["--out", f"{t}/out"] if command == "curve" else [])),
           2, rf"^error: {{t}}/r\.csv: line 3: column '{column}' holds {shown}, too large to compute with \(the curves need "
              r"numbers of at most 1e\+50\)")
      for kind, command in (("syw", "curve"), ("analysis", "table")) for name, row, column, shown in [
          ("score", "a,1.7e308,1", "value", r"1\.7e\+308"), ("negative-score", "a,-1e200,1", "value", r"-1e\+200"),
          ("duration", "a,0.6,1e300", "secs", r"1e\+300")]],
    Case("syw-diverged-score-without-a-floor", {"r.csv": "model,ppl\na,80\na,1e60\na,95\n"},
         lambda t: cli("curve", f"{t}/r.csv", "--metric", "ppl", "--direction", "min", "--out", f"{t}/out"),
         2, r"^error: {t}/r\.csv: line 3: column 'ppl' holds 1e\+60, too large to compute with \(the curves need numbers "
            r"of at most 1e\+50\); a diverged run\? --floor X counts it at X$"),
    Case("syw-duplicated-header", {"r.csv": "family,accuracy,accuracy\na,0.5,0.6\n"}, lambda t: cli("curve", f"{t}/r.csv"),
         2, r"^error: {t}/r\.csv: line 1: columns 2 and 3 are both named 'accuracy'; rename one$"),
    Case("analysis-duplicated-header", {"r.tsv": "family\tvalue\tsecs\tvalue\na\t0.5\t1\t0.6\n"},
         lambda t: cli("table", f"{t}/r.tsv"),
         2, r"^error: {t}/r\.tsv: line 1: columns 2 and 4 are both named 'value'; rename one$"),
]
