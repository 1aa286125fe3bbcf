"""Unlabelled text for pretraining a small biLM (models/elmo/pretrain.py): the Wikipedia paragraphs
of SQuAD v1.1 train plus the SST training sentences.

SQuAD contexts (the official train file, else the rebuilt one: see :mod:`syw.data.squad`) are split
into sentences and tokens by spaCy's rule-based ``spacy.blank("en")`` tokenizer and sentencizer (no
statistical model), with round brackets written as SST writes them (``-LRB-``, ``-RRB-``);
whitespace tokens are dropped. The last ``heldout_articles`` articles are held
out for perplexity. SST contributes its training sentences' tokens as read (no labels; no dev or
test text). Sentences longer than ``max_length`` tokens are cut into pieces of at most that length.
:func:`read_text_corpus` reads a plain-text corpus of one's own domain or language instead.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from syw.core.errors import DataError, DataMissingError
from syw.data.squad import _get, _load_json, split_file
from syw.data.sst import read_sst

PTB_BRACKETS = {"(": "-LRB-", ")": "-RRB-"}
BOS, EOS, UNK = "<S>", "</S>", "<UNK>"  # bilm-tf's vocabulary starts with these three


@dataclass(frozen=True)
class Corpus:
    """Tokenized training and held-out sentences, where they came from, and a sha256 of their tokens."""

    train: list[list[str]]
    heldout: list[list[str]]
    sources: list[str]
    sha256: str

    @property
    def train_tokens(self) -> int:
        return sum(len(sentence) for sentence in self.train)


def squad_contexts(path: Path) -> list[list[str]]:
    """The paragraph texts of each article of a SQuAD v1.1 json file (:class:`DataError` naming the key)."""
    return [[_get(paragraph, "context", str, path, f"article {a}, paragraph {p}")
             for p, paragraph in enumerate(_get(article, "paragraphs", list, path, f"article {a}"))]
            for a, article in enumerate(_load_json(path)["data"])]


def sentences_of(paragraphs: list[str], language: str = "en") -> list[list[str]]:
    """spaCy's rule-based sentences and tokens of ``paragraphs`` (``spacy.blank(language)``), brackets as in SST."""
    import spacy

    nlp = spacy.blank(language)
    nlp.add_pipe("sentencizer")
    out = []
    for doc in nlp.pipe(paragraphs, batch_size=256):
        for sentence in doc.sents:
            tokens = [PTB_BRACKETS.get(t.text, t.text) for t in sentence if not t.is_space]
            if tokens:
                out.append(tokens)
    return out


def pieces(sentences: list[list[str]], max_length: int) -> list[list[str]]:
    """Each sentence, cut into consecutive pieces of at most ``max_length`` tokens."""
    return [s[k:k + max_length] for s in sentences for k in range(0, len(s), max_length)]


def read_corpus(data_dir: str | Path, heldout_articles: int = 4, max_length: int = 50,
                squad_file: str | Path | None = None) -> Corpus:
    """The paragraphs of SQuAD train (``syw.data.squad.split_file``: the official file or the rebuilt
    one, checked by its md5; or ``squad_file``), the last ``heldout_articles`` articles held out,
    and the SST training sentences, tokenized."""
    path = Path(squad_file) if squad_file is not None else split_file(data_dir, "train")[0]
    if not path.is_file():
        raise DataMissingError(f"{path} not found: give a SQuAD v1.1 file, or leave it out to read SQuAD train "
                               f"from {Path(data_dir) / 'squad'}")
    articles = squad_contexts(path)
    if not 0 < heldout_articles < len(articles):
        raise DataError(f"{path}: {len(articles)} article(s), so --heldout-articles must be between 1 and "
                        f"{len(articles) - 1} (got {heldout_articles})")
    cut = len(articles) - heldout_articles
    train = pieces(sentences_of([p for article in articles[:cut] for p in article]), max_length)
    heldout = pieces(sentences_of([p for article in articles[cut:] for p in article]), max_length)
    sst = [list(ex.tokens) for ex in read_sst(data_dir, "train", "fine", subtrees=False)]
    train += pieces(sst, max_length)
    sources = [f"{path} ({cut} articles for training, {heldout_articles} held out)",
               f"{Path(data_dir) / 'sst' / 'train.txt'} (text of its {len(sst)} sentences)"]
    return Corpus(train, heldout, sources, _digest(train, heldout))


def text_documents(path: Path) -> list[list[str]]:
    """A UTF-8 text file's documents: paragraphs one per line, documents separated by blank lines
    (:class:`DataError` naming the file when it is not UTF-8 or holds no text)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text (byte {err.start})") from None
    documents, current = [], []
    for line in text.splitlines() + [""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            documents.append(current)
            current = []
    if not documents:
        raise DataError(f"{path}: no text: give paragraphs one per line, documents separated by blank lines")
    return documents


def read_text_corpus(path: str | Path, heldout_documents: int = 4, max_length: int = 50,
                     language: str = "en") -> Corpus:
    """A plain-text corpus of your own (:func:`text_documents`), the last ``heldout_documents``
    documents held out, tokenized by ``spacy.blank(language)``."""
    path = Path(path)
    if not path.is_file():
        raise DataMissingError(f"{path} not found: give a UTF-8 text file, paragraphs one per line, documents "
                               "separated by blank lines")
    documents = text_documents(path)
    if not 0 < heldout_documents < len(documents):
        raise DataError(f"{path}: {len(documents)} document(s), so --heldout-articles must be between 1 and "
                        f"{len(documents) - 1} (got {heldout_documents}); separate documents by blank lines")
    cut = len(documents) - heldout_documents
    train = pieces(sentences_of([p for d in documents[:cut] for p in d], language), max_length)
    heldout = pieces(sentences_of([p for d in documents[cut:] for p in d], language), max_length)
    sources = [f"{path} ({cut} documents for training, {heldout_documents} held out; spacy.blank({language!r}))"]
    return Corpus(train, heldout, sources, _digest(train, heldout))


def _digest(train: list[list[str]], heldout: list[list[str]]) -> str:
    digest = hashlib.sha256()
    for sentence in train + [["<heldout>"]] + heldout:
        digest.update(" ".join(sentence).encode("utf-8") + b"\n")
    return digest.hexdigest()


def build_vocabulary(sentences: list[list[str]], min_count: int) -> list[str]:
    """<S>, </S>, <UNK>, then the words seen at least ``min_count`` times by decreasing count (ties
    alphabetical): the order the log-uniform candidate sampler assumes."""
    counts = Counter(token for sentence in sentences for token in sentence)
    words = sorted((w for w, n in counts.items() if n >= min_count and w not in (BOS, EOS, UNK)),
                   key=lambda w: (-counts[w], w))
    return [BOS, EOS, UNK, *words]
