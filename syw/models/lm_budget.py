"""The parameter budget of Melis et al. (2018, section 5, "Parameter budget"): from a budget of trainable
weights, the cell, the depth, the input embedding ratio, tying and the down-projection, the hidden size.

The paper compares models at 10M and 24M weights and lets "the cells' hidden size and the embedding size"
follow from the budget, the depth and the input embedding ratio; it does not publish the solver. This
one (the suite's) returns the LARGEST hidden size h whose model has at most ``budget`` weights, counted
exactly as :class:`syw.models.lm.LanguageModel` builds them (:func:`parameter_count`; the count grows
strictly with h, so bisection finds it). Sizes, with V words:

- embedding e = max(1, round(ratio·h)) with a down-projection, else e = h when the embeddings are tied
  (the softmax reads the h-wide output) and round(ratio·h) when they are not;
- the softmax reads o = e with a down-projection (an h x o matrix without bias), else o = h;
- LSTM layer (G = 4 gates, 3 with tied gates, Eq. 2): G·h·(in + h + 1), in = e for the first layer, h above;
- NAS layer (TensorFlow's NASCell, no bias): 8·h·(in + h);
- RHN of ``depth`` micro-steps (one column, coupled carry gate): 2·h·e + depth·(2·h·h + 2·h);
- embedding V·e; softmax bias V, plus V·o weights when not tied.
"""
from __future__ import annotations

from dataclasses import dataclass

CELLS = ("lstm", "rhn", "nas")
LSTM_GATES = {"capped": 4, "untied": 4, "tied": 3}  # Eq. (3), (1), (2)


@dataclass(frozen=True)
class LmShape:
    """Every size of a language model: vocabulary, embedding, hidden and softmax-input widths, depth."""

    cell: str
    vocab: int
    embedding: int
    hidden: int
    output: int
    depth: int
    down_projection: bool
    tied: bool
    lstm_gates: str = "capped"


def shape_for(hidden: int, *, cell: str, vocab: int, depth: int, ratio: float, down_projection: bool,
              tied: bool = True, lstm_gates: str = "capped") -> LmShape:
    """The model's sizes at hidden size ``hidden`` (module docstring)."""
    if cell not in CELLS:
        raise ValueError(f"cell must be one of {', '.join(CELLS)}, got {cell!r}")
    if lstm_gates not in LSTM_GATES:
        raise ValueError(f"lstm_gates must be one of {', '.join(LSTM_GATES)}, got {lstm_gates!r}")
    if not 0.0 < ratio <= 1.0:
        raise ValueError(f"the input embedding ratio must be in (0, 1], got {ratio}")
    if hidden < 1 or vocab < 1 or depth < 1:
        raise ValueError(f"hidden size, vocabulary and depth must be at least 1, got {hidden}, {vocab}, {depth}")
    scaled = max(1, round(ratio * hidden))
    embedding = scaled if down_projection or not tied else hidden
    output = scaled if down_projection else hidden
    return LmShape(cell, vocab, embedding, hidden, output, depth, down_projection, tied, lstm_gates)


def cell_parameters(shape: LmShape) -> int:
    """Weights of the recurrent part alone (module docstring)."""
    h, e, depth = shape.hidden, shape.embedding, shape.depth
    if shape.cell == "rhn":
        return 2 * h * e + depth * (2 * h * h + 2 * h)
    inputs = [e] + [h] * (depth - 1)
    if shape.cell == "nas":
        return sum(8 * h * (n + h) for n in inputs)
    gates = LSTM_GATES[shape.lstm_gates]
    return sum(gates * h * (n + h + 1) for n in inputs)


def parameter_count(shape: LmShape) -> int:
    """Trainable weights of the model of ``shape``, a tied embedding counted once."""
    softmax = shape.vocab + (0 if shape.tied else shape.vocab * shape.output)
    projection = shape.hidden * shape.output if shape.down_projection else 0
    return shape.vocab * shape.embedding + cell_parameters(shape) + projection + softmax


def solve(budget: int, *, cell: str, vocab: int, depth: int, ratio: float, down_projection: bool,
          tied: bool = True, lstm_gates: str = "capped") -> LmShape:
    """The shape with the largest hidden size whose :func:`parameter_count` is at most ``budget``."""
    def shape(hidden: int) -> LmShape:
        return shape_for(hidden, cell=cell, vocab=vocab, depth=depth, ratio=ratio, down_projection=down_projection,
                         tied=tied, lstm_gates=lstm_gates)

    smallest = parameter_count(shape(1))
    if smallest > budget:
        raise ValueError(f"a parameter budget of {budget:,} is below the smallest such model ({smallest:,} weights "
                         f"at hidden size 1 with {vocab:,} words)")
    low, high = 1, 2  # parameter_count(shape(low)) <= budget < parameter_count(shape(high)) once bracketed
    while parameter_count(shape(high)) <= budget:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if parameter_count(shape(middle)) <= budget else (low, middle)
    return shape(low)
