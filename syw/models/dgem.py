"""DGEM, the decomposed graph entailment model, on SciTail (Table 10 of Dodge et al., 2019; docs/models.md §G).

Frozen lowercased GloVe -> linear projection (xavier-normal) of the premise and of every node's
words. Node-premise attention: each node word attends over the premise (masked softmax), averaged
over the node's words; a phrase feedforward on [ã; n̄; ã−n̄; ã⊙n̄] gives each node two logit
contributions, averaged over the nodes (φ). A premise LSTM encodes the premise; each node's context
is its attention-weighted sum of the encodings; an edge feedforward on [c_source; edge-label
embedding; c_target] gives each edge two contributions, averaged over the edges (ψ; 0 without
edges). logits = φ + ψ.

Table 10's settings mapped onto the model (the authors never published the config that produced
their trials; docs/models.md §G): ``phrase_probability_*`` is a feedforward of ``layers`` layers, the last 2
wide and every hidden one ``hidden_dims`` wide, with the activation and dropout on every layer
(the last included, as AllenNLP's FeedForward); ``edge_probability_*`` likewise, its hidden width
being the phrase feedforward's (Table 10 has none of its own). Graphs come from ``dgem_format``
structures (``structures: dgem_format``) or are approximated by rule (``structures: approximate``;
see :mod:`syw.data.dgem_structure`). ``ignore_edges`` keeps only the phrase term (the ablation).

Initialisation as the authors' configs (allenai/scitail's ``training_config/dgem.json``, as
allenai/show-your-work's ``dgem.jsonnet``): every feedforward weight xavier-normal (their initializer
``.*linear_layers.*weight``), biases torch's default, the edge-label embedding xavier-uniform
(AllenNLP's ``Embedding`` without a pretrained file; padded edges are left out of the mean).

A dead state the model shares with the authors': both feedforwards end in their activation (their
config: one 2-wide ReLU layer each). With ReLU, where every node's and edge's two pre-activations
are ≤ 0, both logits are exactly 0, the loss is ln 2 and every gradient is exactly 0, so no step
moves the model unless dropout on a hidden layer lifts a pre-activation above 0. A tanh end
saturated to ±1 in float32 (pre-activations beyond about ±9) passes no gradient either, whatever
it predicts. Adam's steps of about ``lr`` per weight can drive a model there within its first steps.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from syw.core.context import TrialContext, TrialOutcome
from syw.core.errors import DataError
from syw.core.settings import RATE, SIZE, resolve
from syw.data.dgem_structure import EDGE_LABELS, approximate_structures, parse_structure
from syw.models.modules import FeedForward, LstmEncoder, init_linear_, masked_mean, masked_softmax
from syw.models.tasks import pair as TASK
from syw.models.tasks.pair import PAIR_SETTINGS, IndexedPairs, PairData
from syw.models.trainer import TRAINING_SETTINGS, classification_output

_ACTIVATION = {"values": ["relu", "tanh"]}
SETTINGS = {
    **TRAINING_SETTINGS,
    **PAIR_SETTINGS,
    "embedding": {"type": "str"},
    "structures": {"values": ["dgem_format", "approximate"], "default": "dgem_format"},
    "ignore_edges": {"type": "bool", "default": False},
    "embedding_projection_dim": SIZE,
    "edge_embedding_size": SIZE,
    "premise_encoder_hidden_size": SIZE,
    "premise_encoder_layers": SIZE,
    "premise_encoder_bidirectional": {"type": "bool"},
    "phrase_probability_layers": SIZE,
    "phrase_probability_hidden_dims": SIZE,
    "phrase_probability_dropout": RATE,
    "phrase_probability_activation": _ACTIVATION,
    "edge_probability_layers": SIZE,
    "edge_probability_dropout": RATE,
    "edge_probability_activation": _ACTIVATION,
}
EDGE_IDS = {label: i + 2 for i, label in enumerate(EDGE_LABELS)}  # 0 padding, 1 unknown


def graph_tensors(pairs: IndexedPairs, vocab: list[str], structures: str,
                  cache_dir: Path | None = None) -> dict[str, torch.Tensor]:
    """Each pair's hypothesis graph as ``nodes`` (n, N, W) word ids and ``edges`` (n, M, 3)
    (source, label id, target; padded edges have source -1); approximate structures are cached in
    ``cache_dir`` when given."""
    token_ids = {word: i for i, word in enumerate(vocab)}
    approximate = (approximate_structures([ex.hypothesis for ex in pairs.examples], cache_dir)
                   if structures != "dgem_format" else None)
    graphs = []
    for i, ex in enumerate(pairs.examples):
        if structures == "dgem_format" and not ex.structure:
            raise DataError(f"a pair has no hypothesis structure ({' '.join(ex.hypothesis)[:60]!r}): DGEM reads "
                            "dgem_format files, or set structures: approximate")
        graphs.append(parse_structure(ex.structure if approximate is None else approximate[i]))
    n_nodes = max(len(nodes) for nodes, _ in graphs)
    n_words = max(len(node) for nodes, _ in graphs for node in nodes)
    n_edges = max(1, max(len(edges) for _, edges in graphs))
    nodes = torch.zeros(len(graphs), n_nodes, n_words, dtype=torch.long)
    edges = torch.full((len(graphs), n_edges, 3), -1, dtype=torch.long)
    for i, (graph_nodes, graph_edges) in enumerate(graphs):
        for j, node in enumerate(graph_nodes):
            nodes[i, j, : len(node)] = torch.tensor([token_ids.get(word.lower(), 1) for word in node])
        for k, (source, label, target) in enumerate(graph_edges):
            edges[i, k] = torch.tensor([source, EDGE_IDS.get(label, 1), target])
    return {"nodes": nodes, "edges": edges}


def prepare(data: PairData, structures: str = "approximate", cache_dir: Path | None = None) -> PairData:
    """``data`` with each split's hypothesis graphs (see :func:`graph_tensors`)."""
    def with_graphs(pairs: IndexedPairs) -> IndexedPairs:
        return dataclasses.replace(pairs, extras={**pairs.extras, **graph_tensors(pairs, data.vocab, structures, cache_dir)})

    return data.map_splits(with_graphs)


def _two_wide(params: Mapping[str, Any], prefix: str, input_dim: int, hidden: int) -> FeedForward:
    layers = int(params[f"{prefix}_layers"])
    return FeedForward(input_dim, layers, [hidden] * (layers - 1) + [2], params[f"{prefix}_activation"],
                       float(params[f"{prefix}_dropout"]))


class Dgem(nn.Module):
    """Phrase (node) and edge entailment probabilities of a hypothesis graph against a premise."""

    def __init__(self, vectors: torch.Tensor, params: Mapping[str, Any]):
        super().__init__()
        dim = int(params["embedding_projection_dim"])
        self.embedding = nn.Embedding.from_pretrained(vectors, freeze=True)
        self.projection = nn.Linear(vectors.shape[1], dim)
        nn.init.xavier_normal_(self.projection.weight)
        hidden = int(params["phrase_probability_hidden_dims"])
        self.phrase = _two_wide(params, "phrase_probability", 4 * dim, hidden)
        self.encoder = LstmEncoder(dim, int(params["premise_encoder_hidden_size"]), int(params["premise_encoder_layers"]),
                                   bidirectional=bool(params["premise_encoder_bidirectional"]))
        self.edge_embedding = nn.Embedding(len(EDGE_IDS) + 2, int(params["edge_embedding_size"]))
        self.edge = _two_wide(params, "edge_probability", 2 * self.encoder.output_dim + self.edge_embedding.embedding_dim, hidden)
        init_linear_(self.phrase, "xavier_normal")
        init_linear_(self.edge, "xavier_normal")
        nn.init.xavier_uniform_(self.edge_embedding.weight)
        self.ignore_edges = bool(params["ignore_edges"])

    def forward(self, premise: torch.Tensor, nodes: torch.Tensor, edges: torch.Tensor,
                label: torch.Tensor | None = None, **_: torch.Tensor) -> dict[str, torch.Tensor]:
        """premise (B,Lp), nodes (B,N,W), edges (B,M,3) -> logits (B,2), and the loss given labels."""
        # graphs are padded to the largest of the data set; this batch needs only its own largest
        nodes = nodes[:, : int((nodes != 0).any(-1).sum(1).max()), : int((nodes != 0).sum(-1).max())]
        edges = edges[:, : max(1, int((edges[..., 0] >= 0).sum(1).max()))]
        p_mask, w_mask = premise != 0, nodes != 0
        n_mask = w_mask.any(dim=-1)
        p = self.projection(self.embedding(premise))  # (B,Lp,P)
        words = self.projection(self.embedding(nodes))  # (B,N,W,P)
        batch, n, w, dim = words.shape
        scores = words.view(batch, n * w, dim).bmm(p.transpose(1, 2))  # (B,N·W,Lp)
        per_word = masked_softmax(scores, p_mask).view(batch, n, w, -1)
        weights = (per_word * w_mask.unsqueeze(-1)).sum(2) / w_mask.sum(2, keepdim=True).clamp(min=1)  # (B,N,Lp)
        aligned = weights.bmm(p)  # (B,N,P)
        node = masked_mean(words.view(batch * n, w, dim), w_mask.view(batch * n, w)).view(batch, n, dim)
        phrase = self.phrase(torch.cat([aligned, node, aligned - node, aligned * node], dim=-1))
        logits = masked_mean(phrase, n_mask)
        if not self.ignore_edges:
            context = weights.bmm(self.encoder(p, p_mask))  # (B,N,D)
            e_mask = edges[..., 0] >= 0
            source = context.gather(1, edges[..., 0].clamp(min=0).unsqueeze(-1).expand(-1, -1, context.shape[-1]))
            target = context.gather(1, edges[..., 2].clamp(min=0).unsqueeze(-1).expand(-1, -1, context.shape[-1]))
            edge = self.edge(torch.cat([source, self.edge_embedding(edges[..., 1].clamp(min=0)), target], dim=-1))
            logits = logits + masked_mean(edge, e_mask)  # a graph without edges adds 0
        return classification_output(logits, label)


def build(params: Mapping[str, Any], data: PairData) -> Dgem:
    """The Table 10 model for one assignment, over ``data``'s vocabulary and vectors."""
    return Dgem(torch.from_numpy(data.vectors), params)


def train(params: Mapping[str, Any], ctx: TrialContext) -> TrialOutcome:
    """Train one DGEM trial and return its best dev accuracy."""
    params = resolve(params, SETTINGS)
    if params["structures"] == "dgem_format":  # the official release's structure files (23,088 train pairs)
        ctx = dataclasses.replace(ctx, dataset={**ctx.dataset, "format": "dgem_format"})
    data = prepare(TASK.load(ctx, params), params["structures"], ctx.cache_dir)
    return TASK.run(params, ctx, data, lambda: build(params, data))
