"""``syw pretrain-bilm [--out DIR] [--minutes M] ...``: pretrain a small ELMo biLM.

The architecture of the official ELMo (docs/models.md §C: character CNN with highway layers and projection,
a 2-layer LSTM with projection, clipping and the residual on layer 2), smaller, trained as a
forward and a backward language model over sentences (the top layer's forward half at position t
predicts token t+1, its backward half token t-1, boundary tokens included) with one softmax
shared by both directions: sampled (log-uniform candidates over the frequency-ordered vocabulary,
with the expected-count correction and accidental hits removed) or full (``--samples 0``). Dropout
0.1 on the top layer before the softmax; Adam; gradient norm clipped at 5. The LSTM keeps its
states across batches as it will downstream. Text: :mod:`data.bilm_corpus` (SQuAD paragraphs and SST
sentences; with ``--text FILE [--language CODE]`` your own, for an ELMo of your domain or language).

It writes ``options.json`` and ``weights.hdf5`` with :func:`syw.models.elmo.checkpoint.save_bilm` (the
official layout, read by the same loader), ``weights.hdf5.sha256`` (the BCN trials check and
record it), ``vocab.txt`` and ``metrics.json`` (held-out perplexity, tokens, time) into
``--out`` (default ``$SYW_CACHE_DIR/bilm/<name>``, else ``.cache/bilm/<name>``, outside git).
A checkpoint (weights, optimizer, position, the random states and the LSTM's carried states) is
kept there every ``--checkpoint-minutes``; running the same command again goes on from it and stops
at ``--tokens`` or after ``--minutes``. On one machine, one thread and the same torch, training is
deterministic, so a run stopped and resumed writes the very weights an uninterrupted one does, and
a study can name the biLM it reads by its sha256 (the BCN's ``elmo_sha256``) and have it rebuilt.

Default size. ``benchmarks/bilm_timing.py`` (whole training steps: forward, backward and Adam on
64 sentences of 25 words, 20k-word vocabulary, 1,024 sampled candidates; one thread), measured
while a 2-trial study held both cores, so tokens per CPU second stand for an idle core's speed:

    cell 512, projection 128, 512 char filters: 1,471 tokens per CPU s (844 tokens/s wall)
    cell 256, projection  64, 256 char filters: 3,447 tokens per CPU s (1,995 tokens/s wall)
    cell 128, projection  32, 128 char filters: 5,286 tokens per CPU s (2,906 tokens/s wall)

(two threads on the busy machine fell to 237-578 tokens/s: the threads wait on each other, so the
default is one thread, which also leaves the second core free). Subnormal floats are flushed to zero
(``--no-flush-denormal`` keeps them): after 825 steps with them kept, 14-16% of the highway layers'
Adam averages and 0.2% of the softmax's were subnormal and the rate had fallen from ~3,000 to
~2,100 tokens/s beside a BiDAF trial. The default is the middle size:
the official char CNN's 7 widths at 1/8 of its filters (256) with 2 highway layers, cell 256,
projection 64 (ELMo vectors of 128), 0.9M biLM weights plus a 39,466-word softmax (2.5M). Alone
on the machine it trained at ~3,340 tokens/s on the full corpus, its held-out perplexity 630 after
10 minutes and 456 after 20. Its default 8M tokens (2.9 passes over the 2,721,669 training tokens)
take ~40 minutes: short enough that a 3-hour working session can rebuild it (the cache does not
outlive a fresh checkout) and still run trials; ``--minutes 120`` stops any run at 2 hours (run it
again to go on). Cell 512 would need ~2.3 times as long for the same tokens. Downstream, over an epoch of the 6,920 SST-2 training sentences, this
biLM costs ~10 CPU seconds frozen and ~29 fine-tuned (benchmarks/bcn_timing.py), which is what
lets the ELMo families of study sst2_bcn_reduced fit.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from syw.data.bilm_corpus import build_vocabulary, read_corpus, read_text_corpus
from syw.data.fetch import file_digest
from syw.entry import run_main
from syw.models.elmo.bilm import BiLm, BiLmOptions
from syw.models.elmo.chars import MAX_WORD_LENGTH, word_to_char_ids
from syw.models.elmo.checkpoint import save_bilm
from syw.models.elmo.options import options_to_json
from syw.models.resume import rng_state, set_rng_state

# Part of a checkpoint's settings, so that one saved in another layout is refused in one line, not misread.
CHECKPOINT_FORMAT = 2
OFFICIAL_FILTERS = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512), (7, 1024))


def bilm_options(cell_dim: int = 256, projection_dim: int = 64, filter_divisor: int = 8) -> BiLmOptions:
    """The official options (docs/models.md §C) with the LSTM resized and the char filters divided."""
    filters = tuple((width, max(1, n // filter_divisor)) for width, n in OFFICIAL_FILTERS)
    return BiLmOptions(char_dim=16, filters=filters, n_highway=2, n_characters=262, max_characters_per_token=50,
                       cell_dim=cell_dim, projection_dim=projection_dim, n_layers=2, cell_clip=3.0, proj_clip=3.0,
                       use_skip_connections=True)


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


class CheckpointMismatch(ValueError):
    """The checkpoint in ``--out`` belongs to another model, corpus or training setting."""


def default_out(options: BiLmOptions, corpus: str = "sst_squad") -> Path:
    """``$SYW_CACHE_DIR/bilm/<name>`` (else ``.cache/...``), the name saying the data and the size."""
    name = f"{corpus}_c{options.cell_dim}_p{options.projection_dim}_f{options.n_filters}"
    return Path(os.environ.get("SYW_CACHE_DIR") or ".cache") / "bilm" / name


def write_bilm(model: LanguageModel, vocab: list[str], out: Path, metrics: dict) -> str:
    """The biLM in the official layout, its sha256 beside it, the vocabulary and the metrics; returns the sha256."""
    _, weights = save_bilm(model.bilm, options_to_json(model.bilm.options), out)
    sha256 = file_digest(weights, "sha256")
    (out / "weights.hdf5.sha256").write_text(f"{sha256}  weights.hdf5\n", encoding="utf-8")
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (out / "metrics.json").write_text(json.dumps({**metrics, "weights_sha256": sha256}, indent=2) + "\n", encoding="utf-8")
    return sha256


def pretrain(args: argparse.Namespace) -> Path:
    """Train (or go on training) the biLM that ``args`` describe; write it; return its folder."""
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(args.flush_denormal)
    options = bilm_options(args.cell_dim, args.projection_dim, args.filter_divisor)
    if args.text is not None:
        out = Path(args.out or default_out(options, args.text.stem))
        corpus = read_text_corpus(args.text, args.heldout_articles, args.max_length, args.language)
    else:
        out = Path(args.out or default_out(options))
        corpus = read_corpus(args.data_dir, args.heldout_articles, args.max_length, args.squad_file)
    out.mkdir(parents=True, exist_ok=True)
    vocab = build_vocabulary(corpus.train, args.min_count)
    word_index = {word: i for i, word in enumerate(vocab)}
    train, heldout = Encoded(corpus.train, word_index), Encoded(corpus.heldout[:args.heldout_sentences], word_index)
    torch.manual_seed(args.seed)
    model = LanguageModel(options, len(vocab))
    with torch.no_grad():
        model.bilm.token_embedder.char_embedding[0] = 0.0  # the padding row, as the loader sets it
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    config = {"options": options_to_json(options), "corpus_sha256": corpus.sha256, "vocab_size": len(vocab),
              "batch_size": args.batch_size, "samples": args.samples, "lr": args.lr, "seed": args.seed,
              "flush_denormal": args.flush_denormal, "checkpoint_format": CHECKPOINT_FORMAT}
    state = {"step": 0, "tokens": 0, "epoch": 0, "position": 0, "seconds": 0.0}
    checkpoint = out / "checkpoint.pt"
    generator = torch.Generator().manual_seed(args.seed * 7919)  # the softmax's candidates
    if checkpoint.is_file():
        saved = torch.load(checkpoint, weights_only=False)
        if saved["config"] != config:
            differ = ", ".join(f"{k} {saved['config'].get(k)!r} there, {v!r} now" for k, v in config.items()
                               if saved["config"].get(k) != v)
            raise CheckpointMismatch(f"{checkpoint} was trained with other settings ({differ}): choose another "
                                     "--out or delete it")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        state = saved["state"]
        set_rng_state(saved["rng"], generator)
        model.bilm.lstm.restore_states(saved["lstm_states"])
        print(f"going on from {checkpoint}: step {state['step']}, {state['tokens']:,} tokens", flush=True)
    print(f"corpus: {'; '.join(corpus.sources)}: {corpus.train_tokens:,} training tokens, {len(heldout)} held-out "
          f"sentences; vocabulary {len(vocab):,}; biLM {sum(p.numel() for p in model.bilm.parameters()):,} weights "
          f"+ softmax {model.softmax.weight.numel():,}; target {args.tokens:,} tokens; {args.threads} threads", flush=True)
    run_start = last_save = window_start = time.perf_counter()
    seconds_before, window_tokens, window_loss, window_steps, order = state["seconds"], 0, 0.0, 0, None

    def save() -> None:
        state["seconds"] = seconds_before + time.perf_counter() - run_start
        torch.save({"config": config, "model": model.state_dict(), "optimizer": optimizer.state_dict(), "state": state,
                    "rng": rng_state(generator),
                    "lstm_states": model.bilm.lstm.carried_states()}, checkpoint.with_suffix(".tmp"))
        checkpoint.with_suffix(".tmp").replace(checkpoint)

    model.train()
    while state["tokens"] < args.tokens and (args.minutes is None or time.perf_counter() - run_start < 60 * args.minutes):
        if order is None or state["position"] >= len(order):
            if order is not None:
                state["epoch"], state["position"] = state["epoch"] + 1, 0
            order = batches(corpus.train, args.batch_size, args.seed, state["epoch"])
        indices = order[state["position"]]
        loss = model.loss(*train.batch(indices), args.samples, generator)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        tokens = sum(len(train.words[i]) for i in indices)
        state["step"], state["position"], state["tokens"] = state["step"] + 1, state["position"] + 1, state["tokens"] + tokens
        window_tokens, window_loss, window_steps = window_tokens + tokens, window_loss + loss.item(), window_steps + 1
        if state["step"] % args.log_every == 0:
            now = time.perf_counter()
            rate = window_tokens / (now - window_start)
            eta = (args.tokens - state["tokens"]) / rate
            if args.minutes is not None:
                eta = min(eta, 60 * args.minutes - (now - run_start))
            mean = window_loss / window_steps
            print(f"step {state['step']:,} | epoch {state['epoch'] + state['position'] / len(order):.2f} | "
                  f"{state['tokens']:,} tokens | {rate:,.0f} tokens/s | loss {mean:.3f} "
                  f"({'sampled' if args.samples else 'full'}; perplexity {math.exp(min(mean, 50)):,.1f}) | "
                  f"{(seconds_before + now - run_start) / 60:.1f} min, ETA {max(eta, 0) / 60:.1f} min", flush=True)
            window_start, window_tokens, window_loss, window_steps = now, 0, 0.0, 0
        if time.perf_counter() - last_save > 60 * args.checkpoint_minutes:
            save()
            last_save = time.perf_counter()
            print(f"checkpoint {checkpoint}; held-out perplexity {perplexity(model, heldout):,.1f}", flush=True)
    save()
    heldout_perplexity = perplexity(model, heldout)
    metrics = {"heldout_perplexity": heldout_perplexity, "heldout_sentences": len(heldout), "steps": state["step"],
               "tokens": state["tokens"], "finished": state["tokens"] >= args.tokens, "epochs": state["epoch"],
               "training_minutes": state["seconds"] / 60, "corpus": corpus.sources, "corpus_sha256": corpus.sha256,
               "training_tokens_per_epoch": corpus.train_tokens, "config": config}
    sha256 = write_bilm(model, vocab, out, metrics)
    print(f"wrote {out}/options.json and weights.hdf5 (sha256 {sha256}); held-out perplexity {heldout_perplexity:,.1f} "
          f"after {state['tokens']:,} tokens{'' if metrics['finished'] else ' (stopped early: run again to go on)'}",
          flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="syw pretrain-bilm", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for the biLM (default .cache/bilm/sst_squad_c<cell>_p<proj>_f<filters>)")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("SYW_DATA_DIR") or ".data"))
    parser.add_argument("--cell-dim", type=int, default=256)
    parser.add_argument("--projection-dim", type=int, default=64)
    parser.add_argument("--filter-divisor", type=int, default=8, help="char filters: the official ones divided by this")
    parser.add_argument("--tokens", type=int, default=8_000_000, help="training tokens in all")
    parser.add_argument("--minutes", type=float, default=120.0, help="stop (and write the biLM) after this many minutes")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--samples", type=int, default=1024, help="sampled-softmax candidates (0: full softmax)")
    parser.add_argument("--min-count", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=50)
    parser.add_argument("--heldout-articles", type=int, default=4)
    parser.add_argument("--heldout-sentences", type=int, default=500)
    parser.add_argument("--squad-file", type=Path, default=None,
                        help="a SQuAD-format file to read instead of <data-dir>/squad's train file (no md5 check)")
    parser.add_argument("--text", type=Path, default=None,
                        help="pretrain on your own UTF-8 text instead (paragraphs one per line, documents separated by "
                             "blank lines; --heldout-articles then counts documents)")
    parser.add_argument("--language", default="en", help="spaCy language code of --text's tokenizer (spacy.blank)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--flush-denormal", action=argparse.BooleanOptionalAction, default=True,
                        help="flush subnormal floats to zero (default): kept, Adam's averages of rarely sampled "
                             "softmax rows and idle highway units sink into them and x86 CPUs slow down many times")
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--checkpoint-minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        pretrain(args)
    finally:
        torch.set_flush_denormal(False)  # torch's default again, for callers in the same process
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
