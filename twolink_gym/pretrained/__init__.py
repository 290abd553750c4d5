"""Pretrained agents shipped with the package: one folder per agent, and their catalog.

Each folder is a training run's final model reduced to what acting needs
(``twolink export``):

``policy.pt``
    The SB3 policy (weights and constructor arguments, no optimiser state).
    An agent trained with observation normalisation carries its frozen
    statistics inside the policy (:mod:`twolink_gym.training.normalization`),
    so the policy acts on the env's **raw** observations, also when loaded with
    SB3's own ``Policy.load`` (e.g. ``ActorCriticPolicy.load`` for PPO,
    ``SACPolicy.load`` for SAC).
``agent.json``
    The agent's card (:class:`AgentCard`): task, actuation, algorithm,
    Gymnasium id, and its success rate measured on its fixed evaluation set.
``config.yaml``
    The resolved training config (environment, algorithm, seed, evaluation set).
``train_summary.json``, ``eval/evaluations.npz``
    Steps, wall time and machine; the run's periodic evaluations (its learning curve).

An agent trained with an SBX (JAX) algorithm (``algo.name: sbx_*``) has
``"backend": "sbx"`` in its ``agent.json`` and, in place of ``policy.pt``:

``policy.msgpack``
    Its actor's parameters (and batch statistics, for CrossQ) as a flax
    msgpack state dict, loaded into the SBX policy its ``config.yaml`` builds.
``obs_stats.npz``
    Its frozen observation statistics (``mean``, ``var``, ``clip_obs``,
    ``epsilon``), applied before the policy (absent if it was trained without
    normalisation). Loading such an agent needs the ``jax`` extra.

An agent trained with a rejax algorithm on the JAX twin (``algo.name: jax_*``)
has ``"backend": "numpy"`` and ``policy.npz``: its actor's weights, observation
statistics and action bounds as numpy arrays, run by a numpy forward pass
(:mod:`twolink_gym.training.jax_export`; no JAX needed).

Loading an agent needs stable-baselines3 (the ``train`` extra)::

    import twolink_gym

    agent = twolink_gym.load_pretrained("balance_ppo")
    env = agent.make_env()
    obs, info = env.reset(seed=0)
    action, _ = agent.predict(obs, deterministic=True)

or ``pretrained:NAME`` wherever the ``twolink`` command takes a policy. This
module only locates the folders and reads the cards: it imports nothing beyond
the standard library.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

__all__ = [
    "BACKENDS",
    "CARD_FILE",
    "PRETRAINED_DIR",
    "AgentCard",
    "available",
    "backend_of",
    "catalog",
    "policy_file",
    "pretrained_dir",
    "read_card",
]

#: The folder that holds one sub-folder per pretrained agent.
PRETRAINED_DIR = Path(__file__).resolve().parent

#: The card file of an agent folder (:class:`AgentCard` as JSON).
CARD_FILE = "agent.json"

#: The policy file of an agent folder by backend (the card's ``"backend"`` entry;
#: ``"torch"`` when the card has none): an SB3 ``policy.pt``, or an SBX actor's
#: flax msgpack state dict.
BACKENDS: dict[str, str] = {"torch": "policy.pt", "sbx": "policy.msgpack", "numpy": "policy.npz"}

#: The card's entry that names the backend (not a field of :class:`AgentCard`:
#: it says how the agent is stored, not what it is).
BACKEND_KEY = "backend"


@dataclasses.dataclass(frozen=True)
class AgentCard:
    """What a shipped (or exported) agent is, and how well it does.

    Attributes
    ----------
    name : str
        The agent's name (its folder's), e.g. ``"balance_ppo"``.
    task : str
        ``"reach"``, ``"balance"``, ``"swingup"`` or ``"track"``.
    actuation : str
        ``"full"``, ``"acrobot"`` or ``"pendubot"``.
    algorithm : str
        The learning algorithm (``"ppo"``, ``"sac"``, ``"tqc"``, or an SBX one
        such as ``"sbx_sac"``).
    env_id : str
        The Gymnasium id of its task and actuation, e.g. ``"TwoLinkBalance-v0"``.
    success : float or None
        Fraction in [0, 1] of the episodes of its evaluation set that succeed
        (deterministic actions); ``None`` if not measured.
    episodes : int
        Episodes in the evaluation set (the config's ``evaluate.episodes``).
    seed : int
        Seed of the evaluation set's first episode (``evaluate.seed``; episode
        ``i`` is what ``env.reset(seed=seed + i)`` draws).
    description : str
        One line on what the agent is.
    """

    name: str
    task: str
    actuation: str
    algorithm: str
    env_id: str
    success: float | None
    episodes: int
    seed: int
    description: str

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> AgentCard:
        """A card from its JSON object.

        Raises
        ------
        ValueError
            If a field is missing or unknown, naming it and ``source``.
        """
        fields = [f.name for f in dataclasses.fields(cls)]
        missing = [f for f in fields if f not in data]
        unknown = sorted(set(data) - set(fields) - {BACKEND_KEY})
        if missing or unknown:
            raise ValueError(
                f"{source}: agent card fields {fields} expected; missing {missing}, "
                f"unknown {unknown}"
            )
        success = data["success"]
        if success is not None and not 0.0 <= float(success) <= 1.0:
            raise ValueError(f"{source}: success must be in [0, 1] or null, got {success!r}")
        return cls(
            name=str(data["name"]),
            task=str(data["task"]),
            actuation=str(data["actuation"]),
            algorithm=str(data["algorithm"]),
            env_id=str(data["env_id"]),
            success=None if success is None else float(success),
            episodes=int(data["episodes"]),
            seed=int(data["seed"]),
            description=str(data["description"]),
        )

    def to_dict(self) -> dict[str, Any]:
        """The card as a JSON-ready dict."""
        return dataclasses.asdict(self)


def backend_of(folder: str | Path) -> str:
    """The backend of the agent folder ``folder``: a key of :data:`BACKENDS`.

    Read from the ``"backend"`` entry of its ``agent.json``; ``"torch"`` if the
    card has none or the folder has no card (an export of the earlier layout).

    Raises
    ------
    ValueError
        If the card is not a JSON object or names another backend.
    """
    path = Path(folder) / CARD_FILE
    if not path.is_file():
        return "torch"
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
    backend = data.get(BACKEND_KEY, "torch")
    if backend not in BACKENDS:
        raise ValueError(
            f"{path}: {BACKEND_KEY} must be one of {sorted(BACKENDS)}, got {backend!r}"
        )
    return str(backend)


def policy_file(folder: str | Path) -> Path:
    """The policy file of the agent folder ``folder`` (``policy.pt`` or ``policy.msgpack``).

    The file of its backend (:func:`backend_of`); it need not exist.
    """
    return Path(folder) / BACKENDS[backend_of(folder)]


def _is_agent(folder: Path) -> bool:
    try:
        return policy_file(folder).is_file()
    except ValueError:
        return False


def available() -> list[str]:
    """Names of the shipped agents (``"<task>_<algorithm>"`` and variants), sorted."""
    return sorted(
        p.name
        for p in PRETRAINED_DIR.iterdir()
        if not p.name.startswith((".", "_")) and p.is_dir() and _is_agent(p)
    )


def pretrained_dir(name: str) -> Path:
    """The folder of the pretrained agent ``name``.

    Raises
    ------
    ValueError
        If no agent of that name is shipped, listing the ones that are.
    """
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name[0] == ".":
        raise ValueError(f"no pretrained agent {name!r}; shipped agents are {available()}")
    path = PRETRAINED_DIR / name
    if not path.is_dir() or not _is_agent(path):
        raise ValueError(f"no pretrained agent {name!r}; shipped agents are {available()}")
    return path


def read_card(folder: str | Path) -> AgentCard:
    """The card (``agent.json``) of an agent folder.

    Raises
    ------
    FileNotFoundError
        If the folder has no ``agent.json``.
    ValueError
        If the card is not valid JSON or lacks a field.
    """
    path = Path(folder) / CARD_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing (write it with `twolink export`)")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return AgentCard.from_dict(data, str(path))


def catalog() -> list[AgentCard]:
    """The cards of every shipped agent, sorted by name.

    Examples
    --------
    >>> from twolink_gym import pretrained
    >>> cards = {card.name: card for card in pretrained.catalog()}
    >>> cards["balance_ppo"].env_id
    'TwoLinkBalance-v0'
    """
    return [read_card(PRETRAINED_DIR / name) for name in available()]
