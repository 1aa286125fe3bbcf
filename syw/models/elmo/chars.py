"""ELMo character ids and sentence boundary tokens (docs/models.md §C "Character ids").

A word is 50 ids: begin-word, its UTF-8 bytes (at most 48), end-word, padding; every id is
shifted by +1 so that 0 is free for padding tokens, which are all-zero rows. The sentence
boundary tokens are added by the model (:func:`add_sentence_boundaries`), not here.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

MAX_WORD_LENGTH = 50
BOS_CHAR, EOS_CHAR, BOW_CHAR, EOW_CHAR, PAD_CHAR = 256, 257, 258, 259, 260
BOS_WORD, EOS_WORD = "<S>", "</S>"  # the words bilm-tf and AllenNLP map to the boundary tokens


def _shifted(raw: Sequence[int]) -> list[int]:
    """Begin-word, ``raw``, end-word, padding to 50, all +1."""
    ids = [BOW_CHAR, *raw, EOW_CHAR] + [PAD_CHAR] * (MAX_WORD_LENGTH - len(raw) - 2)
    return [i + 1 for i in ids]


BOS_IDS = _shifted([BOS_CHAR])
EOS_IDS = _shifted([EOS_CHAR])


def word_to_char_ids(word: str) -> list[int]:
    """The 50 character ids of one word; ``<S>`` and ``</S>`` give the boundary tokens."""
    if word == BOS_WORD:
        return list(BOS_IDS)
    if word == EOS_WORD:
        return list(EOS_IDS)
    return _shifted(word.encode("utf-8", "ignore")[:MAX_WORD_LENGTH - 2])


def batch_to_ids(sentences: Sequence[Sequence[str]]) -> torch.Tensor:
    """Tokenized sentences -> character ids (B, T, 50), T the longest; shorter rows padded with 0."""
    longest = max((len(sentence) for sentence in sentences), default=0)
    ids = torch.zeros(len(sentences), longest, MAX_WORD_LENGTH, dtype=torch.long)
    for row, sentence in enumerate(sentences):
        for position, word in enumerate(sentence):
            ids[row, position] = torch.tensor(word_to_char_ids(word))
    return ids


def add_sentence_boundaries(char_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T, 50) -> ids (B, T+2, 50) with BOS first and EOS after each row's last token, mask (B, T+2).

    Tokens must be each row's leading positions. Like the original, a row with no token
    still gets BOS and EOS, so it has two unmasked positions.
    """
    batch, length, width = char_ids.shape
    lengths = (char_ids > 0).any(dim=-1).sum(dim=1)
    ids = char_ids.new_zeros(batch, length + 2, width)
    ids[:, 1:-1] = char_ids
    ids[:, 0] = char_ids.new_tensor(BOS_IDS)
    ids[torch.arange(batch), lengths + 1] = char_ids.new_tensor(EOS_IDS)
    return ids, (ids > 0).any(dim=-1)


def remove_sentence_boundaries(x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x (B, T+2, D) and its mask -> (B, T, D) without BOS and EOS, padded positions 0; mask (B, T)."""
    lengths = mask.sum(dim=1, keepdim=True) - 2
    new_mask = torch.arange(x.shape[1] - 2, device=x.device).unsqueeze(0) < lengths
    return x[:, 1:-1] * new_mask.unsqueeze(-1).to(x.dtype), new_mask
