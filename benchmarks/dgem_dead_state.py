"""How many of a study's DGEM assignments start in, or fall into within a few steps, the state where
both feedforwards add nothing (both logits 0 under ReLU) or saturate (tanh), so that the model
gives every pair one answer and nothing learns
(models/dgem.py's docstring), under the authors' initialisation and under torch's defaults.

For each of the first ``--trials`` assignments of the study's DGEM family (the study seed's, as its
trials drew them), the model is built on the study's data under the trial's seed, once with the
suite's initialisation (the authors': xavier-normal feedforwards, xavier-uniform edge labels) and
once with torch's defaults (linear U(±1/√fan_in), embedding N(0, 1), padding row 0), then trained
``--steps`` steps as the trial would. Printed per assignment and initialisation: the share of
dev pairs given the model's most frequent answer (1.00: one answer for all) at step 0 and after
the steps, and the gradient norm on one dev batch after them (dropout off); then the assignment's
dev accuracy in the study's records (when present). An assignment counts as dead when it gives
every dev pair one answer and its gradient norm is below 1e-6.

    SYW_DATA_DIR=../shared/data python -m benchmarks.dgem_dead_state [--study scitail_reduced] [--steps 50]
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import torch
from torch import nn

from syw.core.context import TrialContext
from syw.core.entry import run_main
from syw.core.settings import resolve
from syw.experiments.space import load_family, study_config, trial_seed
from syw.experiments.timing import data_dir, family_parser
from syw.models.tasks import pair
from syw.models.trainer import build_optimizer, seed_everything, update

REPO = Path(__file__).resolve().parent.parent


def torch_defaults_(model: nn.Module) -> None:
    """The feedforwards and edge-label embedding as torch initialises them (what the suite did before
    it followed the authors' config)."""
    for ff in (model.phrase, model.edge):
        for lin in ff.linears:
            lin.reset_parameters()
    nn.init.normal_(model.edge_embedding.weight)
    with torch.no_grad():
        model.edge_embedding.weight[0].zero_()


def constant_share(model: nn.Module, batches: list[dict]) -> float:
    """The share of pairs given the class the model predicts most (1.0: one answer for every pair;
    equal logits count as class 0, as argmax breaks the tie)."""
    model.eval()
    with torch.no_grad():
        predicted = torch.cat([model(**b)["logits"].argmax(-1) for b in batches])
    model.train()
    return float(torch.bincount(predicted, minlength=2).max()) / len(predicted)


def probe(module, params: dict, data, seed: int, steps: int, dev: list[dict], authors: bool) -> dict[str, float]:
    seed_everything(seed)
    model = module.build(params, data)
    if not authors:
        torch_defaults_(model)
    at_init = constant_share(model, dev)
    optimizer = build_optimizer(model, params)
    batches = pair.training_batches(data.train, params, torch.Generator().manual_seed(seed))
    model.train()
    for _, batch in zip(range(steps), batches):
        update(model, model(**batch)["loss"], optimizer, grad_norm=params.get("grad_norm"),
               grad_clipping=params.get("grad_clipping"))
    after = constant_share(model, dev)
    optimizer.zero_grad(set_to_none=True)
    model.eval()  # the gradient the loss has without dropout's lift
    model(**dev[0])["loss"].backward()
    grad = sum(float(p.grad.norm()) ** 2 for p in model.parameters() if p.grad is not None) ** 0.5
    return {"init": at_init, "after": after, "grad": grad}


def main(argv: list[str] | None = None) -> int:
    parser = family_parser(__doc__, "scitail_reduced", "dgem", trials=30)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--near-chance", type=float, default=0.55, help="a recorded dev accuracy below this is near chance")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    data_root = data_dir()
    study = study_config(args.study)
    family = load_family(study["families"][args.family], args.family)
    module = importlib.import_module(family.train_target.rpartition(".")[0])
    records = REPO / "results" / args.study / f"{args.family}.jsonl"
    values = {r["trial"]: r["value"] for r in map(json.loads, records.open())} if records.is_file() else {}
    dead = {True: 0, False: 0}
    print(f"{args.study}/{args.family}: {args.steps} steps; "
          "share of dev pairs given the most frequent answer at init -> after the steps, gradient norm", flush=True)
    for index in range(args.trials):
        params = resolve(family.params(0, index), module.SETTINGS)
        seed = trial_seed(0, args.family, index)
        ctx = TrialContext(study="probe", family=args.family, trial_index=index, seed=seed,
                           data_dir=data_root, cache_dir=REPO / ".cache", dataset=study["dataset"])
        data = module.prepare(pair.load(ctx, params), params["structures"], ctx.cache_dir)
        dev = pair.evaluation_batches(data.dev)
        cells = []
        for authors in (True, False):
            p = probe(module, params, data, seed, args.steps, dev, authors)
            is_dead = p["after"] == 1.0 and p["grad"] < 1e-6
            dead[authors] += is_dead
            cells.append(f"{'authors' if authors else 'torch  '} {p['init']:.2f}->{p['after']:.2f} |g|={p['grad']:.1e}"
                         f"{' DEAD' if is_dead else '     '}")
        ends = f"{params['phrase_probability_activation']}/{params['edge_probability_activation']}"
        recorded = f"{values[index]:.3f}" if index in values else "-"
        print(f"trial {index:2d} ({ends:9s} lr={params['lr']:.4f}): {' | '.join(cells)} | recorded {recorded}", flush=True)
    if args.trials:
        print(f"dead after {args.steps} steps: authors' initialisation {dead[True]} of {args.trials}, "
              f"torch's defaults {dead[False]} of {args.trials}")
    if values:
        learning_rates(records, args.near_chance)
    return 0


def learning_rates(records: Path, near_chance: float) -> None:
    """The learning rates of the recorded trials that stayed near chance and of those that learned."""
    rows = [json.loads(line) for line in records.open()]
    for label, keep in (("near chance", lambda v: v < near_chance), ("learned", lambda v: v >= near_chance)):
        lrs = sorted(r["params"]["lr"] for r in rows if r["status"] == "ok" and keep(r["value"]))
        print(f"{records.relative_to(REPO)}: {len(lrs)} trials {label} (dev accuracy {'<' if label == 'near chance' else '>='} "
              f"{near_chance}); lr: {', '.join(f'{lr:.1e}' for lr in lrs)}")


if __name__ == "__main__":
    sys.exit(run_main(main))
