r"""A TVLQR variant distilled into a state-only network by DART on the v2 boards' simulation (an experiment).

For each seed, a multilayer perceptron learns to imitate a RealAIGym TVLQR variant
(``realaigym_acrobot_tvlqr`` or ``realaigym_pendubot_tvlqr``,
:class:`twolink_gym.realaigym.trajopt.TVLQRController`: a nominal swing-up tracked by the
clock, then the upright LQR) by DART (Laskey, Lee, Fox, Dragan and Goldberg, CoRL 2017):
behaviour cloning on runs of the teacher with noise injected into what it applies. Each
round runs ``--runs`` swing-ups of the teacher through the boards' own protocol
(:func:`twolink_gym.realaigym.protocol.run`: the compiled plant, RK4 at 2 ms, 10 s from
rest hanging down) with Gaussian noise on the applied torque (σ drawn per run uniformly
in ``[0, --torque-noise]`` N·m) and, in a fraction ``--pulse-fraction`` of the runs, a
random profile of the robustness board's torque pulses
(:func:`~twolink_gym.realaigym.protocol.perturbation_profile`); the label at each 2 ms
step is the teacher's command for the state it measured (the exact state, unless the
options below ask for delay or noise). The runs whose final state is outside
the robustness boards' success box are dropped: after a failure the teacher's clocked
commands contradict what a network of the state alone can learn. After each round the
network is fitted to all labels so far (mean squared error on the normalised torque,
``--fit-steps`` minibatches of 512, Adam with a cosine decay from ``--lr`` to 2 % of it,
a fresh Adam state each round, the weights carried over). The network sees the state as
the config's env observes it (``--config``, decisions every 2 ms like the teacher's),
normalised by the mean and variance of all labelled observations so far; its hidden
layers are relu (``--activation``: or tanh or silu, whose torque changes smoothly as the
state moves), its head tanh (jax_export's "tanh" output).

With ``--model-fraction``, ``--delay-fraction`` and ``--velocity-noise`` the runs also
meet the worlds of the robustness board's families, each run drawn independently: an
arm of the model family between its levels (:func:`model_family_arm`), a measurement
delay of 1 to ``--delay-max`` steps of 2 ms, Gaussian noise on the measured velocities
(σ uniform in ``[0, --velocity-noise]`` rad/s). The teacher acts on what it measures and
its command is the label, so the network learns the teacher's map from measurements to
torque on the states those worlds lead to (domain randomisation of the data, not of the
teacher).

The network never sees the time: it must find the swing-up in the state alone. Each
round's network is scored on ``--select-arms`` held-out arms or worlds, drawn from a
generator of their own (:data:`SELECT_ARMS_SEED`): with ``--select-from nearby`` the
board's arm with ``m2`` and ``I2`` scaled by factors drawn uniformly in
``1 ± --select-spread``, with ``--select-from model`` arms of the model family
(:func:`model_family_arm`), each scored by the performance protocol's v2 score; with
``--select-from worlds`` worlds drawn as the training runs' are (noise from a second
generator of their own), each scored 1 if the run ends in the robustness boards' success
box. The round with the best mean is the seed's choice (a tie goes to the later round,
which has more labels); a rerun that asks for another held-out set scores the saved
rounds on it. The board's own run chooses nothing.

Writes ``OUT/seed_S/round_K/policy.npz`` (:class:`~twolink_gym.training.jax_export.NumpyPolicy`'s
format), ``OUT/seed_S/log.json`` (each round's labels, runs kept, fit loss and selection
scores), ``OUT/seed_S/result.json`` and the chosen network as an agent folder,
``OUT/agent_sS`` (``policy.npz``, ``agent.json`` and a ``config.yaml`` with
``algo.name: dart`` and these settings: a policy every command runs, e.g.
``twolink realaigym performance OUT/agent_sS --robot R``). A seed stopped between rounds
resumes from ``OUT/seed_S/state.npz`` (run the same command); a finished seed only
rewrites its result and agent folder. Prints each seed's rounds, every finished seed
in ``OUT``, the mean and the worst. Seeds can run in separate processes with the same
``OUT``.

Usage::

    python benchmarks/realaigym_v2_distill.py realaigym_pendubot_tvlqr --robot pendubot \
        --config configs/realaigym_pendubot_sac.yaml --seeds 0 1 2 [--rounds 12] \
        [--model-fraction 0.3 --delay-fraction 0.3 --velocity-noise 0.3 --select-from worlds] \
        --out DIR
"""

from __future__ import annotations

import argparse
import dataclasses
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
    save_state,
    saved_tree,
    teacher_variant,
    write_log,
)

#: The generator seed of the held-out arms that choose each seed's round.
SELECT_ARMS_SEED = 12345


def held_out_arms(count: int, spread: float) -> list[Any]:
    """``count`` arms: RealAIGym's with ``m2`` and ``I2`` scaled by factors in ``1 ± spread``."""
    from twolink_gym.realaigym.arm import arm

    nominal = arm()
    factors = np.random.default_rng(SELECT_ARMS_SEED).uniform(1 - spread, 1 + spread, (count, 2))
    return [dataclasses.replace(nominal, m2=nominal.m2 * a, I2=nominal.I2 * b) for a, b in factors]


def model_family_arm(rng: np.random.Generator) -> Any:
    """An arm of the robustness board's model family between its levels.

    One of :data:`~twolink_gym.realaigym.robustness.MODEL_PARAMETERS`, drawn uniformly, at a
    value drawn uniformly in its range (:data:`~twolink_gym.realaigym.robustness.MODEL_RANGES`),
    every other parameter RealAIGym's; drawn again where no arm holds the plant.
    """
    from twolink_gym.realaigym.robustness import MODEL_PARAMETERS, MODEL_RANGES, model_arm

    while True:
        name = MODEL_PARAMETERS[rng.integers(len(MODEL_PARAMETERS))]
        try:
            return model_arm(name, float(rng.uniform(*MODEL_RANGES[name])))
        except ValueError:
            continue


class Recorder:
    """The teacher's policy, recording each observation it is given and its normalised command.

    Parameters
    ----------
    teacher : object
        Has SB3's ``predict``; one action per row (the motor joint's).
    """

    def __init__(self, teacher: Any) -> None:
        self.teacher = teacher
        self.observations: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, Any]:
        """The teacher's action ``(n, 1)``, recorded with its observation ``(n, obs_dim)``."""
        action, state = self.teacher.predict(observation, state, episode_start, deterministic)
        a = np.asarray(action, dtype=np.float64).reshape(len(observation), -1)
        self.observations.append(np.asarray(observation, dtype=np.float32).copy())
        self.labels.append(a[:, 0].astype(np.float32))
        return a, state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(
        parser,
        teacher="a TVLQR variant, e.g. realaigym_pendubot_tvlqr",
        config="a config of the robot: the observation",
        rounds=8,
        runs=16,
        runs_help="teacher runs a round",
        fit_steps=8000,
    )
    parser.add_argument(
        "--activation",
        choices=("relu", "tanh", "silu"),
        default="relu",
        help="the hidden layers' (tanh and silu: a smooth torque between decisions)",
    )
    parser.add_argument(
        "--torque-noise", type=float, default=0.3, help="N·m: the largest σ of a run's noise"
    )
    parser.add_argument(
        "--pulse-fraction", type=float, default=0.25, help="runs with torque pulses, in [0, 1]"
    )
    parser.add_argument(
        "--model-fraction",
        type=float,
        default=0.0,
        help="runs on an arm of the robustness board's model family, in [0, 1]",
    )
    parser.add_argument(
        "--delay-fraction", type=float, default=0.0, help="runs with a measurement delay"
    )
    parser.add_argument(
        "--delay-max", type=int, default=20, help="steps of 2 ms: the longest delay drawn"
    )
    parser.add_argument(
        "--velocity-noise",
        type=float,
        default=0.0,
        help="rad/s: the largest σ of a run's noise on the measured velocities",
    )
    parser.add_argument("--select-arms", type=int, default=8, help="held-out arms or worlds")
    parser.add_argument("--select-spread", type=float, default=0.02)
    parser.add_argument(
        "--select-from",
        choices=("nearby", "model", "worlds"),
        default="nearby",
        help="held out: arms with m2 and I2 within the spread, arms of the model family, or "
        "worlds drawn as the training runs' are",
    )
    args = parser.parse_args()
    check_arguments(parser, args, counts=("select_arms",))
    if not args.torque_noise >= 0:
        parser.error(f"--torque-noise must be >= 0 N·m, got {args.torque_noise}")
    for name in ("pulse_fraction", "model_fraction", "delay_fraction"):
        if not 0 <= getattr(args, name) <= 1:
            parser.error(
                f"--{name.replace('_', '-')} must lie in [0, 1], got {getattr(args, name)}"
            )
    if args.delay_max < 1:
        parser.error(f"--delay-max must be >= 1, got {args.delay_max}")
    if not args.velocity_noise >= 0:
        parser.error(f"--velocity-noise must be >= 0 rad/s, got {args.velocity_noise}")
    if not 0 <= args.select_spread < 1:
        parser.error(f"--select-spread must lie in [0, 1), got {args.select_spread}")

    import jax
    import jax.numpy as jnp
    import optax
    from twolink_gym.training.config import load_config
    from twolink_gym.training.jax_export import NumpyPolicy
    from twolink_gym.training.jax_run_folders import imitation_config, write_policy
    from twolink_gym.training.realaigym import policy_runner

    from twolink_gym.realaigym.arm import arm
    from twolink_gym.realaigym.controllers import variant_runner
    from twolink_gym.realaigym.protocol import (
        DT,
        STEPS,
        Conditions,
        PolicyRunner,
        final_state_success,
        perturbation_profile,
        run,
    )
    from twolink_gym.realaigym.scoring import criteria, score
    from twolink_gym.realaigym.trajopt import TVLQRController

    teacher_variant(parser, args, TVLQRController, "a TVLQR")
    teacher = variant_runner(args.variant, args.robot)
    cfg = load_config(args.config)
    if cfg.env.actuation != args.robot or cfg.env.task != "swingup":
        parser.error(f"{args.config} is not a config of the {args.robot}'s swing-up")
    env = dataclasses.replace(cfg.env, dt=DT, substeps=1, max_episode_steps=STEPS)
    cfg = dataclasses.replace(cfg, env=env)
    sim = teacher.sim
    obs_dim = int(sim.observe(np.zeros((1, 4)), np.zeros((1, 0))).shape[1])

    # a fresh Adam state each round (the weights carried over), the rate decaying in the round
    optimiser = optax.adam(optax.cosine_decay_schedule(args.lr, args.fit_steps, alpha=0.02))
    fit = fitter(actor(args.activation), optimiser, args.fit_steps)

    def conditions(rng: np.random.Generator, count: int) -> Conditions:
        pulses = np.zeros((count, STEPS, 2))
        arms, delays = [], np.zeros(count, np.int64)
        for i in range(count):
            if rng.uniform() < args.pulse_fraction:
                pulses[i] = perturbation_profile(rng)
            arms.append(model_family_arm(rng) if rng.uniform() < args.model_fraction else arm())
            if rng.uniform() < args.delay_fraction:
                delays[i] = rng.integers(1, args.delay_max + 1)
        return Conditions.create(
            count,
            params=arms,
            torque_noise=rng.uniform(0.0, args.torque_noise, size=count),
            velocity_noise=rng.uniform(0.0, args.velocity_noise, size=count),
            delay=delays,
            perturbation=pulses,
        )

    def performance(policy: NumpyPolicy, arms: list[Any]) -> list[float]:
        runs = run(
            PolicyRunner(policy, sim, 1),
            args.robot,
            Conditions.create(len(arms), params=arms),
            record=True,
        )
        return [
            score(criteria(runs.trajectory(i), args.robot, "v2"), "v2") for i in range(len(arms))
        ]

    held_out = np.random.default_rng(SELECT_ARMS_SEED)
    select: dict[str, Any] = {"from": args.select_from, "count": args.select_arms}
    if args.select_from == "nearby":
        select["spread"] = args.select_spread
        select_arms = held_out_arms(args.select_arms, args.select_spread)
    elif args.select_from == "model":
        select_arms = [model_family_arm(held_out) for _ in range(args.select_arms)]
    else:
        select_worlds = conditions(held_out, args.select_arms)

    def selection_scores(policy: NumpyPolicy) -> list[float]:
        """Each held-out arm's v2 performance score, or each held-out world's success (0 or 1)."""
        if args.select_from != "worlds":
            return performance(policy, select_arms)
        noise = np.random.default_rng(SELECT_ARMS_SEED + 1)
        runs = run(PolicyRunner(policy, sim, 1), args.robot, select_worlds, rng=noise)
        return final_state_success(runs.final).astype(float).tolist()

    out = Path(args.out)
    for seed in args.seeds:
        folder = out / f"seed_{seed}"
        folder.mkdir(parents=True, exist_ok=True)
        key = jax.random.PRNGKey(seed)
        key, draw = jax.random.split(key)
        layers = initial_layers(draw, obs_dim, args.hidden)
        rng = np.random.default_rng(seed)
        obs = np.zeros((0, obs_dim), np.float32)
        labels = np.zeros((0,), np.float32)
        log: list[dict[str, Any]] = []
        state_file = folder / "state.npz"
        if state_file.is_file():
            saved = np.load(state_file)
            layers = saved_tree(saved, layers)
            obs, labels, key = saved["obs"], saved["labels"], jnp.asarray(saved["key"])
            rng.bit_generator.state = json.loads(str(saved["rng"]))
            log = json.loads((folder / "log.json").read_text())
        for r in range(len(log), args.rounds):
            start = time.perf_counter()
            recorder = Recorder(teacher.predictor)
            runs = run(
                PolicyRunner(recorder, sim, 1), args.robot, conditions(rng, args.runs), rng=rng
            )
            kept = final_state_success(runs.final)
            obs = np.concatenate([obs, *(o[kept] for o in recorder.observations)])
            labels = np.concatenate([labels, *(y[kept] for y in recorder.labels)])
            mean, var = jnp.asarray(obs.mean(0)), jnp.asarray(obs.var(0))
            key, draw = jax.random.split(key)
            layers, _, loss = fit(
                layers,
                optimiser.init(layers),
                mean,
                var,
                jnp.asarray(obs),
                jnp.asarray(labels),
                draw,
            )
            policy = export((layers, mean, var), args.activation, "DART")
            (folder / f"round_{r}").mkdir(exist_ok=True)
            policy.save(folder / f"round_{r}" / "policy.npz")
            selection = selection_scores(policy)
            log.append(
                {
                    "round": r,
                    "labels": len(labels),
                    "runs_kept": int(kept.sum()),
                    "loss": float(loss),
                    "select": select,
                    "selection": selection,
                    "selection_mean": float(np.mean(selection)),
                    "seconds": time.perf_counter() - start,
                }
            )
            arrays = {
                "obs": obs,
                "labels": labels,
                "key": np.asarray(key),
                "rng": np.asarray(json.dumps(rng.bit_generator.state)),
            }
            save_state(folder, layers, arrays, log)
            print(
                f"seed {seed} round {r}: {len(labels)} labels ({int(kept.sum())} of {args.runs} "
                f"runs kept), loss {float(loss):.6f}, selection {np.mean(selection):.3f} "
                f"({log[-1]['seconds']:.0f} s)",
                flush=True,
            )
        rescored = False
        for row in log[: args.rounds]:
            if row.get("select") != select:  # another held-out set asked: score saved rounds
                rescored = True
                saved_policy = NumpyPolicy.load(folder / f"round_{row['round']}" / "policy.npz")
                selection = selection_scores(saved_policy)
                row.update(
                    select=select, selection=selection, selection_mean=float(np.mean(selection))
                )
                print(
                    f"seed {seed} round {row['round']}: selection {np.mean(selection):.3f} on "
                    f"the held-out set asked",
                    flush=True,
                )
        if rescored:
            write_log(folder, log)
        # the best held-out mean; a tie goes to the later round (more labels)
        chosen = max(log[: args.rounds], key=lambda row: (row["selection_mean"], row["round"]))
        best = NumpyPolicy.load(folder / f"round_{chosen['round']}" / "policy.npz")
        settings = {
            "teacher": args.variant,
            "rounds": args.rounds,
            "runs": args.runs,
            "fit_steps": args.fit_steps,
            "hidden": args.hidden,
            "lr": args.lr,
            "activation": args.activation,
            "torque_noise": args.torque_noise,
            "pulse_fraction": args.pulse_fraction,
            "model_fraction": args.model_fraction,
            "delay_fraction": args.delay_fraction,
            "delay_max": args.delay_max,
            "velocity_noise": args.velocity_noise,
            "select_arms": args.select_arms,
            "select_spread": args.select_spread,
            "select_from": args.select_from,
            "chosen_round": chosen["round"],
        }
        agent = out / f"agent_s{seed}"
        write_policy(
            agent,
            best,
            imitation_config(cfg, "dart", seed, int(chosen["labels"]), settings, agent),
            f"RealAIGym's {args.variant} distilled by DART into a network of the state "
            f"(seed {seed}; round {chosen['round']} of {args.rounds}, chosen on held-out "
            f"{'worlds' if args.select_from == 'worlds' else 'arms'})",
        )
        board = performance(policy_runner(str(agent), args.robot).predictor, [arm()])[0]
        result = {
            "seed": seed,
            "round": chosen["round"],
            "selection_mean": chosen["selection_mean"],
            "board": board,
        }
        (folder / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    results = [json.loads(p.read_text()) for p in sorted(out.glob("seed_*/result.json"))]
    for row in results:
        print(
            f"seed {row['seed']}: round {row['round']} (selection {row['selection_mean']:.3f}), "
            f"performance v2 {row['board']:.3f}, agent {out / ('agent_s' + str(row['seed']))}"
        )
    values = np.array([row["board"] for row in results])
    print(f"{len(values)} seeds: performance v2 mean {values.mean():.3f}, worst {values.min():.3f}")


if __name__ == "__main__":
    main()
