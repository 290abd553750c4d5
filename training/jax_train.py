"""``twolink train`` for the ``jax_*`` algorithms: rejax on the JAX twin, every seed at once.

A config with ``algo.name: jax_ppo`` (or ``jax_sac``) trains rejax's ``PPO``
(``SAC``) on the functional twin of its env (:func:`twolink_gym.jax.make` with
the config's env settings), all of ``train.seeds`` in one computation: the train
states of the seeds are stacked along a leading axis and every step of training
is ``jax.vmap``-ed over it and compiled once with ``jax.jit``
(:mod:`~twolink_gym.training.jax_program`).

Training runs in **segments** of whole iterations (``train.eval_freq`` steps
rounded up to ``n_envs · num_steps`` for PPO, to ``n_envs`` for SAC, whose
iteration is one step of every env): one compiled call per segment, then,
on the host, a periodic evaluation of every seed (also compiled, on the twin of
the evaluation env, deterministic actions; with ``train.eval_v3_pushes_seeds``
also held-out RealAIGym v3 runs, :mod:`~twolink_gym.training.jax_v3_eval`,
which then choose ``best/``), the progress line, the time log,
TensorBoard scalars and the resume state of every seed. Segments chain exactly:
rejax's algorithms keep everything they learn with in their train state
(constant learning rate, the random key, the envs' states, the running
statistics, SAC's replay buffer), so a
run cut into segments and one run in a single call go the same way, and
``--resume`` continues from the last segment saved. Ctrl-C (or SIGTERM) takes
effect when the running segment's compiled call returns (XLA cannot be stopped
inside it): that segment's result is dropped, the state of the last segment
before it stays saved, and ``--resume`` trains the dropped segment again.

Each seed gets a run folder in the layout of SB3 runs
(:mod:`~twolink_gym.training.jax_run_folders`),
so ``twolink evaluate``, ``compare``, ``robustness`` and ``load_policy`` run the
agent on the compiled env through the same ``predict`` as every other policy.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from twolink_gym.training.config import RunConfig
from twolink_gym.training.jax_devices import request_cpu_devices, seed_layout
from twolink_gym.training.jax_export import NumpyPolicy, export_policy
from twolink_gym.training.jax_program import (
    Program,
    build_program,
    compile_program,
    with_initial_policy,
)
from twolink_gym.training.jax_run_folders import (
    STATE_FILE,
    TimeLog,
    best_row,
    check_folders,
    clear_run,
    init_dirs,
    load_states,
    rank,
    save_best,
    save_state,
    seed_config,
    seed_leaves,
    seeds_of,
    write_policy,
)
from twolink_gym.training.jax_v3_eval import SCORE_KEY, HeldOutLog

__all__ = ["AfterEval", "JaxTrainResult", "train_from_cli", "train_jax"]


@dataclasses.dataclass(frozen=True)
class JaxTrainResult:
    """What :func:`train_jax` produced: one run folder per seed."""

    run_dirs: list[Path]
    seeds: list[int]
    timesteps: int
    wall_time_s: float
    compile_time_s: float
    interrupted: bool
    requested_timesteps: int
    planned_timesteps: int
    segment_steps: int
    resumed_at: int | None = None
    stopped_early: bool = False


def mean64(values: Any) -> float:
    """Mean of one seed's evaluation values, taken in float64.

    The twin evaluates in JAX's default float32, whose mean of 19 successes in
    20 is 0.9499999881: below a 95 % target that the episodes met.

    Parameters
    ----------
    values : array_like, shape (episodes,)
        Per-episode successes (0/1) or returns.
    """
    return float(np.mean(np.asarray(values, dtype=np.float64)))


def _progress(steps: int, planned: int, wall: float, rows: Sequence[dict[str, float]]) -> str:
    success = [r["success_rate"] for r in rows]
    returns = [r["mean_return"] for r in rows]
    shown = (
        f"success {np.nanmean(success):.0%} (worst {np.nanmin(success):.0%})"
        if not all(math.isnan(s) for s in success)
        else f"return {np.mean(returns):.1f}"
    )
    if all(SCORE_KEY in r for r in rows):
        v3 = [r[SCORE_KEY] for r in rows]
        shown += f", held-out v3 {np.mean(v3):.3f} (worst {np.min(v3):.3f})"
    return f"{steps:>12,} / {planned:,} steps per seed  {wall:7.1f} s  {len(rows)} seeds: {shown}"


#: Called after each periodic evaluation with the steps per seed and each seed's time-log
#: row (``success_rate``, ``mean_return``, ...); training stops there when it returns False.
AfterEval = Callable[[int, Sequence[dict[str, float]]], bool]


def train_jax(
    cfg: RunConfig,
    *,
    resume: bool = False,
    overwrite: bool = False,
    after_eval: AfterEval | None = None,
) -> JaxTrainResult:
    """Train every seed of ``cfg`` at once on the JAX twin; write a run folder per seed.

    Parameters
    ----------
    cfg : RunConfig
        ``algo.name`` a ``jax_*`` algorithm; ``train.seeds`` (or ``train.seed``)
        the seeds.
    resume : bool
        Continue every seed from its run folder's ``train_state.npz`` (the
        last segment saved) up to ``train.total_timesteps``.
    overwrite : bool
        Replace the seeds' existing runs.
    after_eval : callable, optional
        ``after_eval(steps, rows)`` after each periodic evaluation (``twolink
        tune`` reports to its trial there); returning False stops training
        after that segment, saved as an interrupted run is
        (``stopped_early`` in the result).

    Returns
    -------
    JaxTrainResult

    Raises
    ------
    RunExistsError
        If a seed's folder holds a run and neither ``overwrite`` nor ``resume`` was asked.
    FileNotFoundError, ValueError
        On ``resume`` without a saved state, or one of other settings.
    """
    started = time.perf_counter()
    seeds = seeds_of(cfg)
    seed_cfgs = [seed_config(cfg, s) for s in seeds]
    run_dirs = [c.run_dir for c in seed_cfgs]
    if len(set(run_dirs)) != len(run_dirs):
        raise ValueError(f"{cfg.source}: train.seeds {seeds} repeat a seed")
    clear = check_folders(run_dirs, resume, overwrite)

    import jax
    import jax.numpy as jnp

    # before anything runs on JAX: the CPU devices to split the seeds over
    request_cpu_devices(min(cfg.train.jax_devices, len(seeds)))
    program = build_program(cfg)
    layout = seed_layout(len(seeds), cfg.train.jax_devices)
    keys = layout.pad(jax.vmap(jax.random.PRNGKey)(jnp.asarray(seeds, dtype=jnp.uint32)))
    # the train state's shapes and dtypes as a segment returns them (rejax starts some
    # statistics as integers that training turns into floats): the compiled segment
    # takes and returns these, and the initial state is cast to them; one row per
    # copy (the seeds, then the layout's spare copies)
    abstract = jax.eval_shape(program.segment, jax.eval_shape(program.init, keys))
    start_steps = 0
    loaded = None
    init_from = cfg.train.init_from if not resume else None
    if resume or init_from is not None:
        what = "--resume" if resume else f"{cfg.source}: train.init_from {init_from}"
        sources = run_dirs if resume else init_dirs(cfg)
        loaded, start_steps = load_states(abstract, sources, what)
        if start_steps >= cfg.train.total_timesteps:
            raise ValueError(
                f"{what}: the runs already have {start_steps:,} timesteps, "
                f"train.total_timesteps is {cfg.train.total_timesteps:,}; raise it, e.g. "
                f"--set train.total_timesteps={start_steps + cfg.train.total_timesteps}"
            )
    seg = program.segment_steps
    n_segments = math.ceil((cfg.train.total_timesteps - start_steps) / seg)
    planned = start_steps + n_segments * seg
    v3_seeds = cfg.train.eval_v3_pushes_seeds
    v3_logs = (
        [HeldOutLog(d, v3_seeds, start_steps if resume else None) for d in run_dirs]
        if v3_seeds is not None
        else None
    )
    rank_key = SCORE_KEY if v3_logs is not None else None

    # -- validated: from here on the run folders are written ---------------------
    logs = []
    for c, run_dir in zip(seed_cfgs, run_dirs, strict=True):
        if clear:
            clear_run(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.yaml").write_text(yaml.safe_dump(c.to_dict(), sort_keys=False))
        logs.append(TimeLog(run_dir, start_steps if resume else None))
    offsets = [log.offsets() for log in logs]
    best = [best_row(d) if resume else None for d in run_dirs]
    print(
        f"{cfg.algo.name}: {len(seeds)} seeds {seeds} at once on {layout.describe()}, "
        f"{cfg.train.n_envs} envs each, segments of {seg:,} steps"
        + (f", resuming at {start_steps:,}" if resume else "")
        + (f", starting from {init_from} at {start_steps:,}" if init_from is not None else ""),
        flush=True,
    )

    compile_started = time.perf_counter()
    keys = layout.place(keys)
    init, segment, evaluate = compile_program(
        program, layout.abstract(abstract), keys, bool(cfg.train.eval_freq)
    )
    compile_time = time.perf_counter() - compile_started
    print(f"compiled in {compile_time:.1f} s", flush=True)
    if loaded is not None:
        state = layout.pad(loaded)
    else:
        # leaf by leaf: rejax builds its state class anew in each trace, so the compiled
        # init's class need not be the abstract one's
        leaves, treedef = jax.tree.flatten(abstract)
        state = jax.tree.unflatten(
            treedef,
            [
                x if x.dtype == a.dtype else x.astype(a.dtype)
                for x, a in zip(jax.tree.leaves(init(keys)), leaves, strict=True)
            ],
        )
        state = with_initial_policy(state, cfg.algo.hyperparams)
    state = layout.place(state)

    from twolink_gym.training.interrupts import interruptible

    steps = start_steps
    train_time = eval_time = 0.0
    interrupted = stopped = False
    # the same episodes at every periodic evaluation of a seed (drawn from seed + 10000)
    eval_keys = jax.vmap(jax.random.PRNGKey)(jnp.asarray(seeds, dtype=jnp.uint32) + 10_000)
    eval_keys = layout.place(layout.pad(eval_keys))
    try:
        with interruptible():
            for _ in range(n_segments):
                t0 = time.perf_counter()
                new_state = layout.place(jax.block_until_ready(segment(state)))
                train_time += time.perf_counter() - t0
                state, steps = new_state, steps + seg
                _save_segment(program, cfg, seed_cfgs, state, steps)
                if evaluate is None:
                    continue
                t0 = time.perf_counter()
                train_clock = t0 - started - eval_time  # since the start, compile included
                returns, lengths, success = (np.asarray(a) for a in evaluate(state, eval_keys))
                v3 = (
                    np.asarray(program.evaluate_v3(state, program.v3_pushes))
                    if v3_logs is not None
                    else None
                )
                eval_time += time.perf_counter() - t0
                rows = []
                for i, log in enumerate(logs):
                    t_off, e_off = offsets[i]
                    row = {
                        "timesteps": steps,
                        "train_time_s": round(t_off + train_clock, 3),
                        "eval_time_s": round(e_off + eval_time, 3),
                        "wall_time_s": round(t_off + e_off + train_clock + eval_time, 3),
                        "success_rate": mean64(success[i]),
                        "mean_return": mean64(returns[i]),
                        "episodes": int(returns.shape[1]),
                    }
                    scalars = {}
                    if v3_logs is not None and v3 is not None:
                        row[SCORE_KEY] = v3_logs[i].add(steps, v3[i])
                        scalars["eval/v3_heldout_score"] = row[SCORE_KEY]
                    log.add(row, returns[i], lengths[i], success[i], scalars)
                    rows.append(row)
                    earlier = best[i]
                    better = earlier is None or rank(row, rank_key) > rank(earlier, rank_key)
                    if cfg.train.save_best and better:
                        best[i] = row
                        save_best(seed_cfgs[i], _policy_of(program, cfg, state, i), row)
                print(_progress(steps, planned, time.perf_counter() - started, rows), flush=True)
                if after_eval is not None and not after_eval(steps, rows):
                    stopped = True
                    break
    except KeyboardInterrupt:
        interrupted = True
        print(f"\ninterrupted at {steps:,} timesteps per seed; saving the last segment", flush=True)
    wall = time.perf_counter() - started
    _save_segment(program, cfg, seed_cfgs, state, steps)
    for log in logs:
        log.close()
    summary_base = {
        "task": cfg.env.task,
        "algo": cfg.algo.name,
        "seeds_trained_together": seeds,
        "timesteps": steps,
        "requested_timesteps": cfg.train.total_timesteps,
        "planned_timesteps": planned,
        "rollout_steps": seg,
        "wall_time_s": round(wall, 2),
        "compile_time_s": round(compile_time, 2),
        "steps_per_s": round((steps - start_steps) / wall, 1) if wall > 0 else None,
        "steps_per_s_all_seeds": round(len(seeds) * (steps - start_steps) / wall, 1),
        "eval_time_s": round(eval_time, 2),
        "interrupted": interrupted,
        "stopped_early": stopped,
        "resumed_at": start_steps if resume else None,
        "initialised_from": init_from,
        "initialised_at": start_steps if init_from is not None else None,
        "device": str(layout.devices[0]),
        "devices": len(layout.devices),
        "spare_copies": layout.copies - layout.n_seeds,
    }
    machine = _machine(layout.devices)
    for c, run_dir, (t_off, e_off) in zip(seed_cfgs, run_dirs, offsets, strict=True):
        summary = {
            "run": c.run_name,
            "seed": c.train.seed,
            **summary_base,
            "cumulative_train_time_s": round(t_off + wall - eval_time, 2),
            "cumulative_eval_time_s": round(e_off + eval_time, 2),
            "cumulative_wall_time_s": round(t_off + e_off + wall, 2),
            "load_average": [round(v, 2) for v in os.getloadavg()],
            "cpu_model": machine["cpu_model"],
            "machine": machine,
        }
        (run_dir / "train_summary.json").write_text(json.dumps(summary, indent=2))
    return JaxTrainResult(
        run_dirs=run_dirs,
        seeds=seeds,
        timesteps=steps,
        wall_time_s=wall,
        compile_time_s=compile_time,
        interrupted=interrupted,
        stopped_early=stopped,
        requested_timesteps=cfg.train.total_timesteps,
        planned_timesteps=planned,
        segment_steps=seg,
        resumed_at=start_steps if resume else None,
    )


def _machine(devices: Sequence[Any]) -> dict[str, Any]:
    """The host, the library versions and the JAX devices the seeds ran on.

    ``jax_backend`` is the devices' platform (``cpu``, ``gpu``, ``tpu``) and
    ``device_kind`` their model as JAX reports it (``cpu``, or a GPU's name
    such as ``NVIDIA H200``).
    """
    import platform

    import jax
    from twolink_gym.training.train import _cpu_model

    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "jax": jax.__version__,
        "rejax": _version("rejax"),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "jax_backend": str(devices[0].platform),
        "device_kind": str(devices[0].device_kind),
    }


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def _policy_of(program: Program, cfg: RunConfig, state: Any, i: int) -> NumpyPolicy:
    import jax

    params = jax.tree.map(lambda x: np.asarray(x[i]), state.actor_ts.params)
    rms = None
    if cfg.env.normalize_obs:
        rms = (np.asarray(state.obs_rms_state.mean[i]), np.asarray(state.obs_rms_state.var[i]))
    return export_policy(
        params, program.activation, program.action_low, program.action_high, rms, program.output
    )


def _save_segment(
    program: Program, cfg: RunConfig, seed_cfgs: Sequence[RunConfig], state: Any, steps: int
) -> None:
    """Every seed's policy and resume state after a segment."""
    for i, c in enumerate(seed_cfgs):
        write_policy(c.run_dir, _policy_of(program, cfg, state, i), c)
        save_state(c.run_dir / STATE_FILE, seed_leaves(state, i), steps, cfg)


def train_from_cli(cfg: RunConfig, *, resume: str | None, overwrite: bool) -> int:
    """``twolink train`` of a ``jax_*`` config: train, print where it went; the exit status.

    ``resume`` (``--resume``) must be the run folder of one of the config's
    seeds (or the folder holding them): every seed continues. SIGTERM stops
    training as Ctrl-C does.
    """
    import signal

    from twolink_gym.training.interrupts import deferred_interrupts

    if resume is not None:
        given = Path(resume).resolve()
        folders = [seed_config(cfg, s).run_dir for s in seeds_of(cfg)]
        allowed = {d.resolve() for d in folders} | {d.parent.resolve() for d in folders}
        if given not in allowed:
            raise ValueError(
                f"--resume {resume}: a {cfg.algo.name} config resumes all its seeds together; "
                f"give one of their run folders {[str(d) for d in folders]}"
            )
    with deferred_interrupts(signal.SIGTERM):
        result = train_jax(cfg, resume=resume is not None, overwrite=overwrite)
    state = "interrupted" if result.interrupted else "done"
    rounded = (
        f" (train.total_timesteps {result.requested_timesteps:,} rounded up to whole segments "
        f"of {result.segment_steps:,} steps)"
        if result.planned_timesteps > result.requested_timesteps and not result.interrupted
        else ""
    )
    print(
        f"{state}: {len(result.seeds)} seeds x {result.timesteps:,} timesteps{rounded} in "
        f"{result.wall_time_s:.0f} s (compile {result.compile_time_s:.0f} s); agents in "
        + ", ".join(str(d) for d in result.run_dirs)
    )
    if result.interrupted:
        # each seed's config.yaml and train state record the group: one folder continues it
        print(f"continue with: twolink train --resume {result.run_dirs[0]}")
    return 130 if result.interrupted else 0
