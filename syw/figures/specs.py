"""What each of the paper's Figures 1-4 shows, and where its trials come from."""
from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class PaperFile:
    """One of the authors' published trial files (camera-ready results of Dodge et al. 2019)."""

    name: str
    sha256: str
    group_column: str
    groups: dict[str, str]  # value in group_column -> our family short name
    metric_column: str
    duration_column: str = "training_duration"


@dataclass(frozen=True)
class FigureSpec:
    number: int
    dataset: str  # as titles name it: "SST-5", not "sst5"
    study: str  # our study (conf/study/<study>.yaml)
    paper: PaperFile
    x: str  # "trials" or "time"
    log_x: bool
    ylabel: str
    shade: bool  # +-1 SD, clipped to each family's observed range (section 3.3): every figure, the same rule
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    time_ticks: dict[str, float] = field(default_factory=dict)  # label -> seconds
    references: dict[str, float] = field(default_factory=dict)  # family -> reported value (dashed line)
    guide: tuple[str, float] | None = None  # (family, target): dotted budget-inference guide
    guide_source: str = ""  # where the guide's target comes from, as its label says
    budget_targets: dict[str, tuple[float, ...]] = field(default_factory=dict)  # family -> extra targets
    labels: dict[str, str] = field(default_factory=dict)  # family -> legend label (default: the family file's)
    reduced: str | None = None  # the study that fits a 2-core CPU, drawn when the full study has no records

    def on_own_axes(self) -> FigureSpec:
        """This figure without the paper's fixed limits and time ticks, for a study whose scores and
        durations lie elsewhere (a reduced study on a CPU: minutes to hours, not GPU days); a
        trials axis keeps its range so that n reads as in the paper."""
        if self.x == "time":
            return replace(self, xlim=None, ylim=None, time_ticks={})
        return replace(self, ylim=None)


URL = "https://raw.githubusercontent.com/dodgejesse/reproducibility/suchin/camera_ready_results/{name}"
HOUR, DAY = 3600.0, 86400.0

FIGURES: dict[int, FigureSpec] = {
    1: FigureSpec(
        number=1, dataset="SST-5", study="sst5", x="trials", log_x=False, ylabel="Expected validation accuracy", shade=True,
        xlim=(1, 50),
        paper=PaperFile("sst5_cnn_lr_search.tsv", "3cbe1ae7a50c8dc6fb55fd4f7c80e6b133b35f0ce3bb45bcae5e35d926ade6c9",
                        "model.encoder.architecture.type", {"LR": "lr", "CNN": "cnn"}, "best_validation_accuracy"),
        guide=("cnn", 0.395), guide_source="the paper's example target, Fig. 1 caption",
    ),
    2: FigureSpec(
        number=2, dataset="SST-2", study="sst2_bcn", reduced="sst2_bcn_reduced_7_epochs", x="time", log_x=True,
        ylabel="Expected validation accuracy", shade=True,
        paper=PaperFile("sst2_biattentive_classifier_search.tsv", "8140813ee6c36d383e325327ec759a876189f643265f0e051396a0d483feddfd",
                        "embedding", {"glove": "glove", "elmo frozen": "elmo_frozen", "elmo fine-tuned": "elmo_finetuned"},
                        "best_validation_accuracy"),
        time_ticks={"30min": 0.5 * HOUR, "1h": HOUR, "6h": 6 * HOUR, "1d": DAY, "3d": 3 * DAY, "10d": 10 * DAY},
        labels={"glove": "GloVe", "elmo_frozen": "GloVe + ELMo (FR)", "elmo_finetuned": "GloVe + ELMo (FT)"},
    ),
    3: FigureSpec(
        number=3, dataset="SciTail", study="scitail", reduced="scitail_cpu", x="trials", log_x=True,
        ylabel="Expected validation accuracy", shade=True,
        xlim=(1, 100),
        paper=PaperFile("scitail_search.tsv", "77910330af590e4da89730a6bb92c7fa10e0b87e9c10ce0a0435a234798f8640",
                        "model.encoder.architecture.type",
                        {"word overlap": "ngram", "dam": "dam", "esim": "esim", "DGEM": "dgem"}, "best_validation_accuracy"),
        references={"ngram": 0.65, "dam": 0.754, "esim": 0.705, "dgem": 0.796},
    ),
    4: FigureSpec(
        number=4, dataset="SQuAD", study="squad", reduced="squad_reduced", x="time", log_x=True, ylabel="Expected validation EM", shade=True,
        xlim=(8 * HOUR, 40 * DAY), ylim=(0.3, 0.7),
        paper=PaperFile("bidaf_search.tsv", "d0adccb869428f72912edda72b34e9c5fed5ae993934f53199639b6a28a28aea",
                        "embedding", {"glove": "bidaf"}, "best_validation_em"),
        time_ticks={"8h": 8 * HOUR, "1d": DAY, "3d": 3 * DAY, "10d": 10 * DAY, "40d": 40 * DAY},
        references={"bidaf": 0.677},
    ),
}
