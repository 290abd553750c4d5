"""RealAIGym's simulation benchmark for the acrobot and the pendubot.

RealAIGym (the ``double_pendulum`` library and the ``real_ai_gym_leaderboard``
tables of the DFKI underactuated lab) scores a swing-up from one recorded
trajectory: 10 s at 2 ms from rest hanging down. :mod:`.scoring` reads and
writes trajectories in their CSV format and computes their criteria and their
v1 (archived) and v2 (current) scores exactly as the published numbers were
computed. :mod:`.v3` is the ICRA 2025 protocol (60 s with 15 pushes, scored by
the time the tip is up) and its scorer. Only numpy is needed.
"""

from twolink_gym.realaigym.scoring import (
    BOARD_LINKS,
    COLUMNS,
    Criteria,
    Trajectory,
    criteria,
    read_csv,
    score,
    write_csv,
)

__all__ = [
    "BOARD_LINKS",
    "COLUMNS",
    "Criteria",
    "Trajectory",
    "criteria",
    "read_csv",
    "score",
    "write_csv",
]
