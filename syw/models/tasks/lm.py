"""Word-level language modelling (Melis et al., 2018: PTB, Wikitext-2): reading, batching, perplexity,
and one trial's run on the shared trainer (:func:`syw.models.trainer.fit`).

Batching (section 4): each split is one stream; next-word pairs (input, target) start with ``<eos>`` as
the input of the first word, so every token of the split is predicted. The stream is cut into
``batch_size`` equal columns (the last ``len % batch_size`` tokens dropped) read ``bptt`` steps at a
time; the final state of one window is the initial state of the next. Training starts each pass over the
corpus from a zero state and, with probability ``zero_state_probability`` (0.01), starts a window from
one (drawn from a generator seeded by the trial's seed, apart from the dropout masks').

Training (section 4): Adam with beta1 0, beta2 0.999, eps 1e-9; a checkpoint every ``checkpoint_every``
optimisation steps (PTB 100, Wikitext-2 200) scores validation perplexity; the learning rate is
multiplied by ``lr_drop_factor`` (0.1) when validation has not improved for ``lr_drop_patience`` (30)
consecutive checkpoints. One round of the shared trainer is one checkpoint, so a record's ``best_epoch``,
``epochs_run``, ``epoch_seconds`` and ``epoch_metrics`` count checkpoints; each entry of
``epoch_metrics`` carries its ``step``, its ``epoch`` (passes over the training split, fractional) and
the ``lr`` it trained at. The trial's metric is the best checkpoint's validation perplexity (direction
``min``); validation runs at ``eval_batch_size``. Evaluation (section 4): the best checkpoint's weights
are kept in memory and, after training, scored once on test at ``test_batch_size`` (the paper's 1),
recorded as ``test_perplexity``, with mean-field dropout (eval mode), a zero initial state.
Perplexity = exp(mean negative log-likelihood per predicted token, ``<eos>`` included).
"""
from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from syw.core.context import TrialContext, TrialFailed, TrialOutcome
from syw.core.settings import SIZE
from syw.data.inputs import cache_noting_inputs
from syw.data.lm import EOS, read_split, split_paths, token_ids, vocabulary
from syw.models.trainer import choose_device, configure_torch, fit, seed_everything

LM_SETTINGS = {
    "epochs": SIZE,  # passes over the training split
    "patience": {"type": "int", "min": 1, "null": True, "default": None},  # checkpoints without improvement before stopping
    "batch_size": SIZE,
    "bptt": SIZE,
    "optimizer": {"values": ["adam"]},
    "lr": {"type": "float", "min": 0.0},
    "adam_beta1": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.0},
    "adam_beta2": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.999},
    "adam_eps": {"type": "float", "min": 0.0, "default": 1e-9},
    "weight_decay": {"type": "float", "min": 0.0, "default": 0.0},  # L2 penalty in the loss (models.lm)
    "grad_norm": {"type": "float", "min": 0.0, "null": True, "default": None},
    "checkpoint_every": SIZE,
    "lr_drop_patience": {"type": "int", "min": 1, "default": 30},
    "lr_drop_factor": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.1},
    "zero_state_probability": {"type": "float", "min": 0.0, "max": 1.0, "default": 0.01},
    "eval_batch_size": {"type": "int", "min": 1, "default": 64},
    "test_batch_size": {"type": "int", "min": 1, "default": 1},
    "flush_denormal": {"type": "bool", "default": False},
}


@dataclass(frozen=True)
class TokenStream:
    """A split as next-word pairs: ``targets`` is the split's token ids, ``inputs`` the same shifted right by
    one behind ``<eos>``."""

    inputs: torch.Tensor
    targets: torch.Tensor

    def __len__(self) -> int:
        return len(self.targets)


def stream_of(ids: torch.Tensor, eos: int) -> TokenStream:
    """The next-word pairs of a split's ids (module docstring)."""
    return TokenStream(torch.cat([ids.new_tensor([eos]), ids[:-1]]), ids)


@dataclass(frozen=True)
class LmData:
    """Vocabulary (id order) and the streams of the splits: ``dev`` is the validation file (checkpoint
    selection), ``test`` the test file (the selected checkpoint's score)."""

    vocab: list[str]
    train: TokenStream
    dev: TokenStream
    test: TokenStream | None = None


@cache_noting_inputs(maxsize=2)
def load_corpus(data_dir: Path, name: str) -> LmData:
    """The three splits of corpus ``name`` indexed with the training split's vocabulary; cached per process."""
    splits = {split: read_split(data_dir, name, split) for split in ("train", "valid", "test")}
    vocab = vocabulary(splits["train"])
    ids = {word: i for i, word in enumerate(vocab)}
    paths = split_paths(data_dir, name)
    streams = {split: stream_of(torch.tensor(token_ids(tokens, ids, paths[split])), ids[EOS]) for split, tokens in splits.items()}
    return LmData(vocab, streams["train"], streams["valid"], streams["test"])


def load(ctx: TrialContext, params: Mapping[str, Any]) -> LmData:
    """The corpus the study's ``dataset`` block names (``{name: ptb}`` or ``{name: wikitext-2}``)."""
    return load_corpus(Path(ctx.data_dir), str(ctx.dataset.get("name")))


def columns(stream: TokenStream, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets cut into ``batch_size`` rows of equal length (the remainder dropped)."""
    length = len(stream) // batch_size
    if length < 1:
        raise ValueError(f"a stream of {len(stream)} tokens cannot fill {batch_size} columns")
    return (stream.inputs[: batch_size * length].view(batch_size, length),
            stream.targets[: batch_size * length].view(batch_size, length))


def windows(stream: TokenStream, batch_size: int, bptt: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """(inputs, targets) of (batch_size, ≤ bptt) ids, in reading order."""
    inputs, targets = columns(stream, batch_size)
    for start in range(0, inputs.shape[1], bptt):
        yield inputs[:, start:start + bptt], targets[:, start:start + bptt]


def steps_per_epoch(stream: TokenStream, batch_size: int, bptt: int) -> int:
    """Training windows in one pass over ``stream``."""
    return math.ceil((len(stream) // batch_size) / bptt)


def training_batches(stream: TokenStream, params: Mapping[str, Any], generator: torch.Generator) -> Iterator[dict[str, torch.Tensor]]:
    """One pass of training windows; ``reset`` is true for the first and, with probability
    ``zero_state_probability``, for any other (a zero initial state instead of the carried one)."""
    chance = float(params.get("zero_state_probability", 0.01))
    for index, (inputs, targets) in enumerate(windows(stream, params["batch_size"], params["bptt"])):
        reset = index == 0 or bool(torch.rand((), generator=generator) < chance)
        yield {"inputs": inputs, "targets": targets, "reset": torch.tensor(reset)}


def perplexity(model: nn.Module, stream: TokenStream, batch_size: int, bptt: int, device: torch.device | str = "cpu") -> float:
    """exp(mean NLL) of every target in the ``batch_size`` columns, from a zero state carried across
    windows; the model in its current mode (evaluation: eval mode, under no_grad)."""
    total, count, state = torch.zeros((), dtype=torch.float64), 0, None
    for inputs, targets in windows(stream, batch_size, bptt):
        nll, state = model.nll(inputs.to(device), targets.to(device), state)
        total += nll.sum().double().cpu()
        count += nll.numel()
    return math.exp(total.item() / count)


def plateau_schedule(optimizer: torch.optim.Optimizer, params: Mapping[str, Any]) -> torch.optim.lr_scheduler.ReduceLROnPlateau:
    """The learning rate times ``lr_drop_factor`` once validation perplexity has not improved for
    ``lr_drop_patience`` consecutive checkpoints (section 4), counting again from the drop."""
    # torch counts a checkpoint bad unless it is below the best by more than `threshold` (0: any
    # improvement counts) and drops when more than `patience` bad ones have passed
    return torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=float(params["lr_drop_factor"]),
                                                      patience=int(params["lr_drop_patience"]) - 1, threshold=0.0)


class BestState:
    """The weights at the lowest validation perplexity seen (strictly lower replaces, as the trainer selects)."""

    def __init__(self) -> None:
        self.value, self.state = math.inf, None

    def offer(self, model: nn.Module, value: float) -> None:
        if value < self.value:
            self.value, self.state = value, copy.deepcopy(model.state_dict())


def run(params: Mapping[str, Any], ctx: TrialContext, data: LmData, build: Callable[[], nn.Module]) -> TrialOutcome:
    """Train the model ``build()`` returns (module docstring) and return its best validation perplexity."""
    device = choose_device(ctx.device)
    configure_torch(device, bool(params["flush_denormal"]))
    seed_everything(ctx.seed)
    model = build().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=float(params["lr"]), eps=float(params["adam_eps"]),
                                 betas=(float(params["adam_beta1"]), float(params["adam_beta2"])), fused=True)
    scheduler = plateau_schedule(optimizer, params)
    per_epoch = steps_per_epoch(data.train, params["batch_size"], params["bptt"])
    every = int(params["checkpoint_every"])
    resets = torch.Generator().manual_seed(ctx.seed)
    steps = itertools.chain.from_iterable(training_batches(data.train, params, resets) for _ in range(params["epochs"]))
    best, done = BestState(), [0]

    def train_round(_: int) -> Iterator[dict[str, torch.Tensor]]:
        for batch in itertools.islice(steps, every):
            done[0] += 1
            yield batch

    def evaluate(trained: nn.Module) -> dict[str, float]:
        value = perplexity(trained, data.dev, params["eval_batch_size"], params["bptt"], device)
        best.offer(trained, value)
        return {"perplexity": value, "step": done[0], "epoch": done[0] / per_epoch, "lr": optimizer.param_groups[0]["lr"]}

    result = fit(model, train_round, evaluate, epochs=math.ceil(params["epochs"] * per_epoch / every),
                 patience=params["patience"], optimizer=optimizer, scheduler=scheduler, grad_norm=params["grad_norm"],
                 device=device, seed=ctx.seed, metric="perplexity", maximize=False)
    if best.state is None:
        raise TrialFailed(f"validation perplexity was never finite (last: {result.epoch_metrics[-1]['perplexity']})")
    model.load_state_dict(best.state)
    model.eval()
    with torch.no_grad():
        test = perplexity(model, data.test, params["test_batch_size"], params["bptt"], device) if data.test is not None else None
    extra = {"parameters": float(sum(p.numel() for p in model.parameters()))}
    shape = getattr(model, "shape", None)  # the sizes a budget gave (models.lm_budget.LmShape)
    if shape is not None:
        extra |= {"hidden_size": float(shape.hidden), "embedding_size": float(shape.embedding)}
    if test is not None:
        extra["test_perplexity"] = test
    return TrialOutcome(metric=result.best_metric, best_epoch=result.best_epoch, epochs_run=result.epochs_run,
                        epoch_seconds=result.epoch_seconds, epoch_metrics=result.epoch_metrics, extra_metrics=extra)


def synthetic(n_train: int = 2000, n_dev: int = 400, vocab_size: int = 30, seed: int = 0) -> LmData:
    """A generated corpus (contract tests): "sentences" that count up from a random word and end with
    ``<eos>``, so the next word is nearly determined and any working model learns it."""
    generator = torch.Generator().manual_seed(seed)
    vocab = [EOS] + [f"w{i}" for i in range(vocab_size - 1)]

    def split(n: int) -> torch.Tensor:
        ids: list[int] = []
        while len(ids) < n:
            start, length = torch.randint(1, vocab_size, (2,), generator=generator).tolist()
            ids += [1 + (start - 1 + k) % (vocab_size - 1) for k in range(2 + length % 6)] + [0]
        return torch.tensor(ids[:n])

    return LmData(vocab, stream_of(split(n_train), 0), stream_of(split(n_dev), 0), stream_of(split(n_dev), 0))
