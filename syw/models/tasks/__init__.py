"""Task adapters: one per kind of task, each owning what every model of that kind needs besides
the model itself — reading through :mod:`syw.data`, vocabulary and indexing, batching, evaluation,
and generated data of the same shape for the contract tests.

- :mod:`syw.models.tasks.sentence`: single-sentence classification (SST: LR, CNN, BCN).
- :mod:`syw.models.tasks.pair`: sentence-pair classification (SciTail: n-gram, DAM, ESIM, DGEM).
- :mod:`syw.models.tasks.span`: span extraction (SQuAD: BiDAF), scored by exact match and F1.
- :mod:`syw.models.tasks.lm`: word-level language modelling (PTB, Wikitext-2: the LSTM, RHN and NAS of
  Melis et al., 2018), scored by perplexity (lower is better).

A model family's module names its adapter as ``TASK`` and provides ``SETTINGS`` (the settings its
training function reads), ``build(params, data)`` (the model for an assignment and the adapter's
data) and ``train(params, ctx)`` (one trial, usually a call of the adapter's ``run``); and, when the
model derives inputs from the data once (the n-gram's overlap features), ``prepare(data)``.
"""
