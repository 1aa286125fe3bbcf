"""The biLM as a language model (models/elmo/pretrain.py trains it): both directions' next-word loss
through one shared softmax, full or sampled, the sentences encoded once as word and character ids,
and held-out perplexity."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from syw.models.elmo.bilm import BiLm, BiLmOptions
from syw.models.elmo.chars import MAX_WORD_LENGTH, word_to_char_ids


class LanguageModel(nn.Module):
    """A :class:`BiLm` with a softmax over ``vocab_size`` words shared by both directions."""

    def __init__(self, options: BiLmOptions, vocab_size: int, dropout: float = 0.1):
        super().__init__()
        self.bilm = BiLm(options)
        self.softmax = nn.Linear(options.projection_dim, vocab_size)
        self.dropout = nn.Dropout(dropout)

    def states(self, char_ids: torch.Tensor, word_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Chars (B,T,50), word ids (B,T) -> top-layer states (N, P) and the word each predicts (N,)."""
        layers, mask = self.bilm(char_ids)
        top, half = layers[-1], self.bilm.options.projection_dim
        edge = torch.zeros_like(word_ids[:, :1])  # <S> is word 0
        targets = torch.cat([edge, word_ids, edge], dim=1)
        targets[torch.arange(len(targets)), mask.sum(dim=1) - 1] = 1  # </S>
        ahead = mask[:, 1:]  # position t+1 exists: forward at t predicts it, backward at t+1 predicts t
        states = torch.cat([top[:, :-1, :half][ahead], top[:, 1:, half:][ahead]])
        return self.dropout(states), torch.cat([targets[:, 1:][ahead], targets[:, :-1][ahead]])

    def loss(self, char_ids: torch.Tensor, word_ids: torch.Tensor, samples: int = 0,
             generator: torch.Generator | None = None) -> torch.Tensor:
        """Mean negative log-likelihood of both directions' next words: full softmax, or sampled."""
        states, targets = self.states(char_ids, word_ids)
        if samples == 0 or samples >= self.softmax.out_features:
            return F.cross_entropy(self.softmax(states), targets)
        return sampled_softmax_loss(states, targets, self.softmax.weight, self.softmax.bias, samples, generator)


def log_uniform_log_q(ids: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """log P(id) under the log-uniform (Zipf) sampler: (log(id+2) − log(id+1)) / log(V+1)."""
    ids = ids.to(torch.float32)
    return torch.log((torch.log(ids + 2) - torch.log(ids + 1)) / math.log(vocab_size + 1))


def sampled_softmax_loss(states: torch.Tensor, targets: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                         samples: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Sampled softmax (Jean et al., 2015) with ``samples`` candidates drawn with replacement, shared
    by the batch; logits minus log(expected count), candidates equal to the target masked out."""
    vocab = weight.shape[0]
    u = torch.rand(samples, generator=generator)
    candidates = (torch.exp(u * math.log(vocab + 1)) - 1).long().clamp_(0, vocab - 1)
    shift = math.log(samples)
    true = (states * weight[targets]).sum(-1) + bias[targets] - log_uniform_log_q(targets, vocab) - shift
    sampled = states @ weight[candidates].T + bias[candidates] - log_uniform_log_q(candidates, vocab) - shift
    sampled = sampled.masked_fill(candidates.unsqueeze(0) == targets.unsqueeze(1), -math.inf)
    logits = torch.cat([true.unsqueeze(1), sampled], dim=1)
    return F.cross_entropy(logits, torch.zeros_like(targets))


def batches(sentences: list[list[str]], batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    """Sentence indices in length-sorted batches (ties in random order), the batches shuffled by epoch."""
    g = torch.Generator().manual_seed(seed * 100_003 + epoch)
    lengths = torch.tensor([len(s) for s in sentences], dtype=torch.float64)
    order = torch.argsort(lengths + torch.rand(len(sentences), generator=g, dtype=torch.float64)).split(batch_size)
    return [order[i].tolist() for i in torch.randperm(len(order), generator=g).tolist()]


class Encoded:
    """Sentences as word ids (<UNK> = 2) and rows of one character-id table (row 0: padding),
    computed once: a batch is then two gathers."""

    def __init__(self, sentences: list[list[str]], word_index: dict[str, int]):
        rows: dict[str, int] = {}
        self.spellings = [[rows.setdefault(w, len(rows) + 1) for w in s] for s in sentences]
        self.words = [[word_index.get(w, 2) for w in s] for s in sentences]
        self.table = torch.zeros(len(rows) + 1, MAX_WORD_LENGTH, dtype=torch.long)
        for word, row in rows.items():
            self.table[row] = torch.tensor(word_to_char_ids(word))

    def __len__(self) -> int:
        return len(self.words)

    def batch(self, indices: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """Character ids (B,T,50) and word ids (B,T) of the sentences ``indices``."""
        longest = max(len(self.words[i]) for i in indices)
        spellings, words = (torch.zeros(len(indices), longest, dtype=torch.long) for _ in range(2))
        for row, i in enumerate(indices):
            spellings[row, :len(self.words[i])] = torch.tensor(self.spellings[i])
            words[row, :len(self.words[i])] = torch.tensor(self.words[i])
        return self.table[spellings], words


@torch.no_grad()
def perplexity(model: LanguageModel, sentences: Encoded, batch_size: int = 64) -> float:
    """exp(mean NLL) of both directions over ``sentences``, full softmax, in eval mode, the LSTM
    starting from zero states; training's carried states are put back afterwards."""
    carried = model.bilm.lstm.carried_states()
    model.bilm.reset_states()
    model.eval()
    total = count = 0.0
    for start in range(0, len(sentences), batch_size):
        states, targets = model.states(*sentences.batch(list(range(start, min(start + batch_size, len(sentences))))))
        total += F.cross_entropy(model.softmax(states), targets, reduction="sum").item()
        count += len(targets)
    model.train()
    model.bilm.lstm.restore_states(carried)
    return math.exp(total / count)
