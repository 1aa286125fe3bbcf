"""``syw pretrain-bilm [--out DIR] [--minutes M] ...``: pretrain a small ELMo biLM.

The architecture of the official ELMo (docs/models.md §C: character CNN with highway layers and projection,
a 2-layer LSTM with projection, clipping and the residual on layer 2), smaller, trained as a
forward and a backward language model over sentences (the top layer's forward half at position t
predicts token t+1, its backward half token t-1, boundary tokens included) with one softmax
shared by both directions: sampled (log-uniform candidates over the frequency-ordered vocabulary,
with the expected-count correction and accidental hits removed) or full (``--samples 0``). Dropout
0.1 on the top layer before the softmax; Adam; gradient norm clipped at 5. The LSTM keeps its
states across batches as it will downstream. Text: :mod:`syw.data.bilm_corpus` (SQuAD paragraphs and SST
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
from torch import nn

from syw.core.entry import Parser, run_main
from syw.data.bilm_corpus import build_vocabulary, read_corpus, read_text_corpus
from syw.data.fetch import file_digest
from syw.models.elmo.bilm import BiLmOptions
from syw.models.elmo.checkpoint import save_bilm
from syw.models.elmo.lm import Encoded, LanguageModel, batches, perplexity
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


class _Window:
    """Tokens, summed loss and steps since the last progress line."""

    def __init__(self) -> None:
        self.start, self.tokens, self.loss, self.steps = time.perf_counter(), 0, 0.0, 0

    def add(self, tokens: int, loss: float) -> None:
        self.tokens, self.loss, self.steps = self.tokens + tokens, self.loss + loss, self.steps + 1


class _Run:
    """One run of ``syw pretrain-bilm``: the model, Adam, the softmax's generator and the position in
    the corpus, and the checkpoint that carries all of them (and the LSTM's states) to the next run."""

    def __init__(self, args: argparse.Namespace, model: LanguageModel, config: dict, checkpoint: Path):
        self.args, self.model, self.config, self.checkpoint = args, model, config, checkpoint
        self.optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        self.generator = torch.Generator().manual_seed(args.seed * 7919)  # the softmax's candidates
        self.state = {"step": 0, "tokens": 0, "epoch": 0, "position": 0, "seconds": 0.0}
        self.seconds_before, self.start = 0.0, time.perf_counter()

    def resume(self) -> None:
        """Go on from the checkpoint, if there is one; one trained with other settings is refused."""
        if not self.checkpoint.is_file():
            return
        saved = torch.load(self.checkpoint, weights_only=False)
        if saved["config"] != self.config:
            differ = ", ".join(f"{k} {saved['config'].get(k)!r} there, {v!r} now" for k, v in self.config.items()
                               if saved["config"].get(k) != v)
            raise CheckpointMismatch(f"{self.checkpoint} was trained with other settings ({differ}): choose another "
                                     "--out or delete it")
        self.model.load_state_dict(saved["model"])
        self.optimizer.load_state_dict(saved["optimizer"])
        self.state, self.seconds_before = saved["state"], saved["state"]["seconds"]
        set_rng_state(saved["rng"], self.generator)
        self.model.bilm.lstm.restore_states(saved["lstm_states"])
        print(f"going on from {self.checkpoint}: step {self.state['step']}, {self.state['tokens']:,} tokens", flush=True)

    def save(self) -> None:
        """Write the checkpoint atomically (a kill while writing leaves the previous one)."""
        self.state["seconds"] = self.seconds()
        torch.save({"config": self.config, "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "state": self.state, "rng": rng_state(self.generator),
                    "lstm_states": self.model.bilm.lstm.carried_states()}, self.checkpoint.with_suffix(".tmp"))
        self.checkpoint.with_suffix(".tmp").replace(self.checkpoint)

    def seconds(self) -> float:
        """Training seconds over all runs so far."""
        return self.seconds_before + time.perf_counter() - self.start

    def step(self, train: Encoded, indices: list[int]) -> tuple[int, float]:
        """One Adam step on the sentences ``indices``; returns their tokens and the loss."""
        loss = self.model.loss(*train.batch(indices), self.args.samples, self.generator)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
        self.optimizer.step()
        tokens, state = sum(len(train.words[i]) for i in indices), self.state
        state["step"], state["position"], state["tokens"] = state["step"] + 1, state["position"] + 1, state["tokens"] + tokens
        return tokens, loss.item()

    def progress(self, window: _Window, epoch_batches: int) -> str:
        """The progress line: epoch, tokens, rate, mean loss and perplexity since the last line, time, ETA."""
        args, state, now = self.args, self.state, time.perf_counter()
        rate = window.tokens / (now - window.start)
        eta = (args.tokens - state["tokens"]) / rate
        if args.minutes is not None:
            eta = min(eta, 60 * args.minutes - (now - self.start))
        mean = window.loss / window.steps
        return (f"step {state['step']:,} | epoch {state['epoch'] + state['position'] / epoch_batches:.2f} | "
                f"{state['tokens']:,} tokens | {rate:,.0f} tokens/s | loss {mean:.3f} "
                f"({'sampled' if args.samples else 'full'}; perplexity {math.exp(min(mean, 50)):,.1f}) | "
                f"{self.seconds() / 60:.1f} min, ETA {max(eta, 0) / 60:.1f} min")

    def train(self, sentences: list[list[str]], train: Encoded, heldout: Encoded) -> None:
        """Steps until ``--tokens`` or ``--minutes``, a progress line every ``--log-every`` steps and a
        checkpoint (with the held-out perplexity) every ``--checkpoint-minutes``; a checkpoint at the end."""
        args, state = self.args, self.state
        self.start = last_save = time.perf_counter()
        order, window = None, _Window()
        self.model.train()
        while state["tokens"] < args.tokens and (args.minutes is None or time.perf_counter() - self.start < 60 * args.minutes):
            if order is None or state["position"] >= len(order):
                if order is not None:
                    state["epoch"], state["position"] = state["epoch"] + 1, 0
                order = batches(sentences, args.batch_size, args.seed, state["epoch"])
            window.add(*self.step(train, order[state["position"]]))
            if state["step"] % args.log_every == 0:
                print(self.progress(window, len(order)), flush=True)
                window = _Window()
            if time.perf_counter() - last_save > 60 * args.checkpoint_minutes:
                self.save()
                last_save = time.perf_counter()
                print(f"checkpoint {self.checkpoint}; held-out perplexity {perplexity(self.model, heldout):,.1f}", flush=True)
        self.save()


def _corpus(args: argparse.Namespace, options: BiLmOptions):
    """The training text (``--text`` or SQuAD and SST) and the output folder named after it."""
    if args.text is not None:
        return (Path(args.out or default_out(options, args.text.stem)),
                read_text_corpus(args.text, args.heldout_articles, args.max_length, args.language))
    return Path(args.out or default_out(options)), read_corpus(args.data_dir, args.heldout_articles, args.max_length,
                                                               args.squad_file)


def pretrain(args: argparse.Namespace) -> Path:
    """Train (or go on training) the biLM that ``args`` describe; write it; return its folder."""
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(args.flush_denormal)
    options = bilm_options(args.cell_dim, args.projection_dim, args.filter_divisor)
    out, corpus = _corpus(args, options)
    out.mkdir(parents=True, exist_ok=True)
    vocab = build_vocabulary(corpus.train, args.min_count)
    word_index = {word: i for i, word in enumerate(vocab)}
    train, heldout = Encoded(corpus.train, word_index), Encoded(corpus.heldout[:args.heldout_sentences], word_index)
    torch.manual_seed(args.seed)
    model = LanguageModel(options, len(vocab))
    with torch.no_grad():
        model.bilm.token_embedder.char_embedding[0] = 0.0  # the padding row, as the loader sets it
    config = {"options": options_to_json(options), "corpus_sha256": corpus.sha256, "vocab_size": len(vocab),
              "batch_size": args.batch_size, "samples": args.samples, "lr": args.lr, "seed": args.seed,
              "flush_denormal": args.flush_denormal, "checkpoint_format": CHECKPOINT_FORMAT}
    run = _Run(args, model, config, out / "checkpoint.pt")
    run.resume()
    print(f"corpus: {'; '.join(corpus.sources)}: {corpus.train_tokens:,} training tokens, {len(heldout)} held-out "
          f"sentences; vocabulary {len(vocab):,}; biLM {sum(p.numel() for p in model.bilm.parameters()):,} weights "
          f"+ softmax {model.softmax.weight.numel():,}; target {args.tokens:,} tokens; {args.threads} threads", flush=True)
    run.train(corpus.train, train, heldout)
    state, heldout_perplexity = run.state, perplexity(model, heldout)
    metrics = {"heldout_perplexity": heldout_perplexity, "heldout_sentences": len(heldout), "steps": state["step"],
               "tokens": state["tokens"], "finished": state["tokens"] >= args.tokens, "epochs": state["epoch"],
               "training_minutes": state["seconds"] / 60, "corpus": corpus.sources, "corpus_sha256": corpus.sha256,
               "training_tokens_per_epoch": corpus.train_tokens, "config": config}
    sha256 = write_bilm(model, vocab, out, metrics)
    print(f"wrote {out}/options.json and weights.hdf5 (sha256 {sha256}); held-out perplexity {heldout_perplexity:,.1f} "
          f"after {state['tokens']:,} tokens{'' if metrics['finished'] else ' (stopped early: run again to go on)'}",
          flush=True)
    return out


DESCRIPTION = """\
Pretrain the small ELMo biLM that stands in for the official ELMo here (a character CNN, a 2-layer LSTM
with projections, trained as a forward and a backward language model). It writes options.json,
weights.hdf5 with its sha256, vocab.txt and metrics.json into --out, keeps a checkpoint there, and the
same command resumes from it."""  # what --help says, in plain text

def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="syw pretrain-bilm", description=DESCRIPTION)
    parser.add_argument("--out", type=Path, help="folder for the biLM (default .cache/bilm/sst_squad_c<cell>_p<proj>_f<filters>)")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("SYW_DATA_DIR") or ".data"),
                        help="where squad/ and sst/ are (default: $SYW_DATA_DIR, else .data)")
    parser.add_argument("--cell-dim", type=int, default=256, help="LSTM cell size of each layer (default 256)")
    parser.add_argument("--projection-dim", type=int, default=64,
                        help="size each LSTM layer's output is projected to, the biLM's vector size (default 64)")
    parser.add_argument("--filter-divisor", type=int, default=8, help="char filters: the official ones divided by this")
    parser.add_argument("--tokens", type=int, default=8_000_000, help="training tokens in all")
    parser.add_argument("--minutes", type=float, default=120.0, help="stop (and write the biLM) after this many minutes")
    parser.add_argument("--batch-size", type=int, default=64, help="sentences per training step (default 64)")
    parser.add_argument("--samples", type=int, default=1024, help="sampled-softmax candidates (0: full softmax)")
    parser.add_argument("--min-count", type=int, default=3,
                        help="words seen fewer times in training are <UNK> (default 3)")
    parser.add_argument("--max-length", type=int, default=50,
                        help="sentences longer than this many tokens are cut into pieces (default 50)")
    parser.add_argument("--heldout-articles", type=int, default=4,
                        help="the last articles of SQuAD train held out for the perplexity (default 4)")
    parser.add_argument("--heldout-sentences", type=int, default=500,
                        help="held-out sentences the perplexity is measured on (default 500)")
    parser.add_argument("--squad-file", type=Path, default=None,
                        help="a SQuAD-format file to read instead of <data-dir>/squad's train file (no md5 check)")
    parser.add_argument("--text", type=Path, default=None,
                        help="pretrain on your own UTF-8 text instead (paragraphs one per line, documents separated by "
                             "blank lines; --heldout-articles then counts documents)")
    parser.add_argument("--language", default="en", help="spaCy language code of --text's tokenizer (spacy.blank)")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate (default 0.001)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads torch uses (default 1)")
    parser.add_argument("--flush-denormal", action=argparse.BooleanOptionalAction, default=True,
                        help="flush subnormal floats to zero (default): kept, Adam's averages of rarely sampled "
                             "softmax rows and idle highway units sink into them and x86 CPUs slow down many times")
    parser.add_argument("--log-every", type=int, default=50, help="print the training perplexity every this many "
                        "steps (default 50)")
    parser.add_argument("--checkpoint-minutes", type=float, default=10.0,
                        help="save a checkpoint in --out (and print the held-out perplexity) this often (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the initial weights and the batch order (default 0)")
    args = parser.parse_args(argv)
    try:
        pretrain(args)
    finally:
        torch.set_flush_denormal(False)  # torch's default again, for callers in the same process
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
