r"""An MPPI variant distilled into a neural policy by DAgger on the JAX twin's v3 runs (an experiment).

For each seed, a multilayer perceptron learns to imitate a RealAIGym MPPI variant
(:data:`twolink_gym.realaigym.controllers.VARIANTS`, :class:`twolink_gym.jax.mppi.MPPIController`)
by DAgger (Ross, Gordon and Bagnell, AISTATS 2011) on v3 runs of the JAX twin
(:func:`twolink_gym.jax.realaigym_v3.run_with_memory`, float32). Each round runs ``--runs``
push schedules of their own (seeds ``1000 + 100·seed + i``: neither the board's nor the
selection's) with the planner in the loop: at each decision the planner's torque is
applied with probability ``β`` (1 in the first round, then 0.5, 0.25, then 0), the
network's otherwise, and the planner's torque at every state it was asked is kept as a
label. The network sees the state as the config's env observes it (``--config``: the
observation of the SAC configs), normalised by the mean and variance of all labelled
observations so far; its hidden layers are relu, its head tanh (jax_export's "tanh"
output); after each round it is fitted to all labels so far (mean squared error on the
normalised torque, Adam at ``--lr``, ``--fit-steps`` minibatches of 512; with
``--velocity-noise S`` each minibatch row's velocities get Gaussian noise, its σ drawn
uniformly in [0, S] rad/s, before the network sees them, the label staying the planner's
torque at the exact state; with
``--lr-schedule cosine`` the rate decays to 2 % of ``--lr`` in each round's fit, restarting
with a fresh Adam state every round). With ``--final-hidden``, a network of those layers
is then fitted afresh to all the labels (``--final-fit-steps``, cosine decay) as one more
candidate, ``round_final`` (refitted when a rerun asks for other layers or steps, dropped
when it asks for none). Each candidate runs on the ``--select-seeds`` schedules (32 by
default; a rerun that asks for other schedules scores the saved candidates on them); the
one with the best mean is the seed's choice, and only that network runs on the board's
schedule (the ICRA 2025 one), so the board chooses nothing. The planner's noise differs
per run.

Writes ``OUT/seed_S/round_K/policy.npz`` (:class:`~twolink_gym.training.jax_export.NumpyPolicy`'s
format), ``OUT/seed_S/log.json`` (each round's data size, fit loss, scores of the runs it
collected and of the selection runs) and, after the last round, ``OUT/seed_S/result.json``
and the chosen network as an agent folder, ``OUT/agent_sS`` (``policy.npz``, ``agent.json``
and a ``config.yaml`` with ``algo.name: dagger`` and these settings: a policy every command
runs, e.g. ``twolink realaigym v3 OUT/agent_sS --robot R``); a seed stopped between rounds
resumes from ``OUT/seed_S/state.npz`` (run the same command; on a finished seed it
rewrites the result and the agent folder). Prints every finished seed in ``OUT``, the mean
and the worst. Seeds can run in separate processes with the same ``OUT``.

Usage::

    python benchmarks/realaigym_v3_distill.py realaigym_pendubot_mppi --robot pendubot \
        --config configs/realaigym_pendubot_jax_sac_v3_push.yaml --seeds 0 [--samples 1024] \
        [--hidden 256 256 256 --lr-schedule cosine --final-hidden 512 512 512] --out DIR
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from imitation_network import (  # the benchmarks' folder is on sys.path
    actor,
    add_arguments,
    check_arguments,
    export,
    fitter,
    initial_layers,
    network_of,
    save_state,
    saved_tree,
    teacher_variant,
    write_log,
)

#: The held-out schedules that choose each seed's round.
SELECT_SEEDS = tuple(range(101, 133))

#: The held-out schedules of the logs whose rows do not record theirs.
UNRECORDED_SELECT_SEEDS = tuple(range(101, 109))


def beta(round_index: int) -> float:
    """The probability that the planner's torque is applied in round ``round_index``."""
    return 1.0 if round_index == 0 else max(0.0, 0.5 - 0.25 * (round_index - 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(
        parser,
        teacher="an MPPI variant, e.g. realaigym_pendubot_mppi",
        config="a jax_* config: the observation",
        rounds=10,
        runs=6,
        runs_help="v3 runs a round",
        fit_steps=6000,
    )
    parser.add_argument("--lr-schedule", choices=("constant", "cosine"), default="constant")
    parser.add_argument(
        "--final-hidden", nargs="+", type=int, help="also fit a fresh network of these layers"
    )
    parser.add_argument("--final-fit-steps", type=int, default=30000)
    parser.add_argument(
        "--samples", type=int, help="the planner's samples (default: the variant's)"
    )
    parser.add_argument(
        "--velocity-noise",
        type=float,
        default=0.0,
        help="rad/s: the largest σ of the noise on the velocities the network sees in its fits",
    )
    parser.add_argument("--select-seeds", nargs="+", type=int, default=list(SELECT_SEEDS))
    args = parser.parse_args()
    check_arguments(parser, args, counts=("final_fit_steps",), layers=("final_hidden",))
    if not args.velocity_noise >= 0:
        parser.error(f"--velocity-noise must be >= 0 rad/s, got {args.velocity_noise}")

    import jax
    import jax.numpy as jnp
    import optax
    from twolink_gym.training.config import load_config
    from twolink_gym.training.jax_export import NumpyPolicy
    from twolink_gym.training.jax_program import make_env
    from twolink_gym.training.jax_run_folders import imitation_config, write_policy
    from twolink_gym.training.jax_v3_eval import agent_torque

    from twolink_gym.jax import realaigym_v3 as jv3
    from twolink_gym.jax.mppi import MPPIController
    from twolink_gym.realaigym.controllers import variant_runner
    from twolink_gym.realaigym.v3 import STEPS

    variant = teacher_variant(parser, args, MPPIController, "an MPPI")
    cfg = load_config(args.config)
    if cfg.env.actuation != args.robot:
        parser.error(
            f"{args.config} is a config of the {cfg.env.actuation}, not of the {args.robot}"
        )
    overrides = {}
    if args.samples is not None:
        overrides["settings"] = {**variant.gains["settings"], "samples": args.samples}
    runner = variant_runner(args.variant, args.robot, **overrides)
    planner = runner.predictor
    assert isinstance(planner, MPPIController)
    steps = runner.decision_steps
    env, env_params = make_env(cfg.env.nominal())
    motor = planner.active
    scale = float(env_params.max_torque[motor])
    key0 = jax.random.PRNGKey(0)

    def encode(x: Any) -> Any:
        return env.reset_env(key0, env_params, {"state": x})[0]

    obs_dim = int(encode(jnp.zeros(4)).shape[0])
    capacity = STEPS // steps + 1  # decisions a run at most

    act = actor("relu")
    torque = agent_torque(cfg, make_env, act)

    def collecting(ts: Any, chance: Any) -> Any:
        def policy(x: Any, memory: Any) -> Any:
            plan, states, labels, count, key = memory
            planned, plan = planner.decide(x, plan)
            key, draw = jax.random.split(key)
            applied = jnp.where(
                jax.random.uniform(draw) < chance, planned.astype(x.dtype), torque(ts, x)
            )
            at = jnp.minimum(count, capacity - 1)
            states = states.at[at].set(x)
            labels = labels.at[at].set(planned[motor] / scale)
            return applied, (plan, states, labels, count + 1, key)

        return policy

    @jax.jit
    def collect(ts: Any, chance: Any, schedule: Any, noise: Any, key: Any) -> Any:
        start = (
            planner.initial_memory()._replace(seed=noise.astype(jnp.uint32)),
            jnp.zeros((capacity, 4)),
            jnp.zeros((capacity,)),
            jnp.asarray(0),
            key,
        )
        record, (_, states, labels, count, _) = jv3.run_with_memory(
            collecting(ts, chance), schedule, decision_steps=steps, memory=start
        )
        return jv3.score(record), states, labels, count

    @jax.jit
    def scores(ts: Any, schedules: Any) -> Any:
        def one(schedule: Any) -> Any:
            return jv3.score(jv3.run(lambda x: torque(ts, x), schedule, decision_steps=steps))

        return jax.vmap(one)(schedules)

    def cosine(steps: int) -> Any:
        return optax.adam(optax.cosine_decay_schedule(args.lr, steps, alpha=0.02))

    optimiser = cosine(args.fit_steps) if args.lr_schedule == "cosine" else optax.adam(args.lr)

    def seen(inputs: Any, key: Any) -> Any:
        """What a minibatch shows the network: ``inputs`` as they are, or noisy states encoded.

        ``inputs`` are observations, or with ``--velocity-noise`` states (rad, rad/s).
        """
        if args.velocity_noise == 0:
            return inputs
        spread, draw = jax.random.split(key)
        sigma = jax.random.uniform(spread, (inputs.shape[0], 1), maxval=args.velocity_noise)
        noisy = inputs.at[:, 2:].add(sigma * jax.random.normal(draw, (inputs.shape[0], 2)))
        return jax.vmap(encode)(noisy)

    # the fits' inputs are the labelled observations, or with --velocity-noise their states
    fit = fitter(act, optimiser, args.fit_steps, seen)

    select = jv3.pushes(args.robot, args.select_seeds)
    board = jv3.pushes(args.robot, [None])
    out = Path(args.out)
    for seed in args.seeds:
        folder = out / f"seed_{seed}"
        folder.mkdir(parents=True, exist_ok=True)
        key = jax.random.PRNGKey(seed)
        key, draw = jax.random.split(key)
        layers = initial_layers(draw, obs_dim, args.hidden)
        opt_state = optimiser.init(layers)
        obs = np.zeros((0, obs_dim), np.float32)
        visited: np.ndarray | None = np.zeros((0, 4), np.float32)  # the labelled states
        labels = np.zeros((0,), np.float32)
        log: list[dict[str, Any]] = []
        first = 0
        state_file = folder / "state.npz"
        if state_file.is_file():
            saved = np.load(state_file)
            layers, opt_state = saved_tree(saved, (layers, opt_state))
            obs, labels, key = saved["obs"], saved["labels"], jnp.asarray(saved["key"])
            visited = saved["visited"] if "visited" in saved else None
            log = json.loads((folder / "log.json").read_text())
            noise = log[0].get("velocity_noise", 0.0)
            if noise != args.velocity_noise:
                parser.error(
                    f"{folder} was trained with --velocity-noise {noise}, not "
                    f"{args.velocity_noise}: give another --out"
                )
            if args.velocity_noise and visited is None:
                parser.error(f"{folder}/state.npz holds no states to add velocity noise to")
            rounds_log = [row for row in log if row["round"] != "final"]
            first = len(rounds_log)
            if first < args.rounds:
                log = rounds_log  # more rounds: a final fit is redone on all their labels
        mean = jnp.asarray(obs.mean(0)) if len(obs) else jnp.zeros(obs_dim)
        var = jnp.asarray(obs.var(0)) if len(obs) else jnp.ones(obs_dim)
        for r in range(first, args.rounds):
            start = time.perf_counter()
            seeds_r = [1000 + 100 * seed + args.runs * r + i for i in range(args.runs)]
            train = jv3.pushes(args.robot, seeds_r)
            collected = []
            for i in range(args.runs):
                key, draw = jax.random.split(key)
                schedule = jax.tree.map(lambda a, i=i: a[i], train)
                ts = (layers, mean, var)
                score, states, y, count = collect(
                    ts, beta(r), schedule, jnp.asarray(seeds_r[i]), draw
                )
                n = int(count)
                obs = np.concatenate([obs, np.asarray(jax.vmap(encode)(states[:n]))])
                if visited is not None:
                    visited = np.concatenate([visited, np.asarray(states[:n])])
                labels = np.concatenate([labels, np.asarray(y[:n])])
                collected.append(float(score))
            mean, var = jnp.asarray(obs.mean(0)), jnp.asarray(obs.var(0))
            key, draw = jax.random.split(key)
            if args.lr_schedule == "cosine":
                opt_state = optimiser.init(layers)
            inputs = jnp.asarray(visited if args.velocity_noise else obs)
            layers, opt_state, loss = fit(
                layers, opt_state, mean, var, inputs, jnp.asarray(labels), draw
            )
            selection = np.asarray(scores((layers, mean, var), select))
            (folder / f"round_{r}").mkdir(exist_ok=True)
            export((layers, mean, var), "relu", "DAgger").save(folder / f"round_{r}" / "policy.npz")
            log.append(
                {
                    "round": r,
                    "beta": beta(r),
                    "labels": len(labels),
                    "loss": float(loss),
                    "collected": collected,
                    "velocity_noise": args.velocity_noise,
                    "selection": selection.tolist(),
                    "selection_mean": float(selection.mean()),
                    "select_seeds": args.select_seeds,
                    "seconds": time.perf_counter() - start,
                }
            )
            arrays: dict[str, Any] = {"obs": obs, "labels": labels, "key": np.asarray(key)}
            if visited is not None:
                arrays["visited"] = visited
            save_state(folder, (layers, opt_state), arrays, log)
            print(
                f"seed {seed} round {r}: beta {beta(r):.2f}, {len(labels)} labels, loss "
                f"{float(loss):.4f}, collected {np.mean(collected):.3f}, selection "
                f"{selection.mean():.3f} ({log[-1]['seconds']:.0f} s)",
                flush=True,
            )
        asked = {"hidden": args.final_hidden, "fit_steps": args.final_fit_steps}
        if log[-1]["round"] == "final" and any(log[-1].get(k) != v for k, v in asked.items()):
            log.pop()  # a final fit of other layers or length: refit as asked, or drop it
            write_log(folder, log)
        if args.final_hidden and log[-1]["round"] != "final":
            start = time.perf_counter()
            draw, order = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(seed), 1_000_000))
            fresh = initial_layers(draw, obs_dim, args.final_hidden)
            final_optimiser = cosine(args.final_fit_steps)
            final_fit = fitter(act, final_optimiser, args.final_fit_steps, seen)
            layers, _, loss = final_fit(
                fresh,
                final_optimiser.init(fresh),
                mean,
                var,
                jnp.asarray(visited if args.velocity_noise else obs),
                jnp.asarray(labels),
                order,
            )
            selection = np.asarray(scores((layers, mean, var), select))
            (folder / "round_final").mkdir(exist_ok=True)
            export((layers, mean, var), "relu", "DAgger").save(
                folder / "round_final" / "policy.npz"
            )
            log.append(
                {
                    "round": "final",
                    "hidden": args.final_hidden,
                    "fit_steps": args.final_fit_steps,
                    "labels": len(labels),
                    "loss": float(loss),
                    "velocity_noise": args.velocity_noise,
                    "selection": selection.tolist(),
                    "selection_mean": float(selection.mean()),
                    "select_seeds": args.select_seeds,
                    "seconds": time.perf_counter() - start,
                }
            )
            write_log(folder, log)
            print(
                f"seed {seed} final fit {args.final_hidden}: {len(labels)} labels, loss "
                f"{float(loss):.4f}, selection {selection.mean():.3f} "
                f"({log[-1]['seconds']:.0f} s)",
                flush=True,
            )
        rescored = False
        for row in log:
            if row.get("select_seeds", list(UNRECORDED_SELECT_SEEDS)) != args.select_seeds:
                rescored = True
                ts = network_of(NumpyPolicy.load(folder / f"round_{row['round']}" / "policy.npz"))
                selection = np.asarray(scores(ts, select))
                row.update(
                    selection=selection.tolist(),
                    selection_mean=float(selection.mean()),
                    select_seeds=args.select_seeds,
                )
                print(
                    f"seed {seed} round {row['round']}: selection {selection.mean():.3f} on "
                    f"the {len(args.select_seeds)} held-out schedules asked",
                    flush=True,
                )
        if rescored:
            write_log(folder, log)
        chosen = max(log, key=lambda row: row["selection_mean"])
        last_round = [row for row in log if row["round"] != "final"][-1]["round"]
        best = network_of(NumpyPolicy.load(folder / f"round_{chosen['round']}" / "policy.npz"))
        last = network_of(NumpyPolicy.load(folder / f"round_{last_round}" / "policy.npz"))
        board_score = float(scores(best, board)[0])
        result = {
            "seed": seed,
            "round": chosen["round"],
            "selection_mean": chosen["selection_mean"],
            "board": board_score,
            "board_last_round": float(scores(last, board)[0]),
        }
        (folder / "result.json").write_text(json.dumps(result, indent=1) + "\n")
        settings = {
            "teacher": args.variant,
            "samples": planner.settings.samples,
            "rounds": args.rounds,
            "runs": args.runs,
            "fit_steps": args.fit_steps,
            "hidden": args.hidden,
            "lr": args.lr,
            "lr_schedule": args.lr_schedule,
            "final_hidden": args.final_hidden,
            "final_fit_steps": args.final_fit_steps if args.final_hidden else None,
            "velocity_noise": args.velocity_noise,
            "select_seeds": args.select_seeds,
            "chosen_round": chosen["round"],
        }
        agent = out / f"agent_s{seed}"
        which = (
            f"the network fitted afresh after {args.rounds} rounds"
            if chosen["round"] == "final"
            else f"round {chosen['round']} of {args.rounds}"
        )
        write_policy(
            agent,
            NumpyPolicy.load(folder / f"round_{chosen['round']}" / "policy.npz"),
            imitation_config(cfg, "dagger", seed, int(chosen["labels"]), settings, agent),
            f"RealAIGym's {args.variant} ({planner.settings.samples} samples) distilled by DAgger "
            f"on v3 runs of the JAX twin (seed {seed}; {which}, chosen on held-out v3 runs)",
        )
    results = [json.loads(p.read_text()) for p in sorted(out.glob("seed_*/result.json"))]
    for row in results:
        print(
            f"seed {row['seed']}: round {row['round']} (selection {row['selection_mean']:.3f}), "
            f"board {row['board']:.3f} (last round {row['board_last_round']:.3f}), "
            f"agent {out / ('agent_s' + str(row['seed']))}"
        )
    values = np.array([row["board"] for row in results])
    print(f"{len(values)} seeds: board mean {values.mean():.3f}, worst {values.min():.3f}")


if __name__ == "__main__":
    main()
