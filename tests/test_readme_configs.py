"""The README's configs table says what the config files say."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _rows():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    header = "| config | task | algorithm | total_timesteps | n_envs | notes |"
    table = text[text.index(header) :].split("\n\n", 1)[0].splitlines()[2:]
    for line in table:
        cells = [c.strip() for c in line.strip("|").split("|")]
        yield re.sub(r"`", "", cells[0]), cells[1:5]


def test_every_config_is_in_the_table_as_it_is():
    rows = dict(_rows())
    files = sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))
    assert sorted(rows) == files
    for name, (task, algo, steps, envs) in rows.items():
        cfg = yaml.safe_load((ROOT / "configs" / name).read_text())
        assert cfg["env"]["task"] == task, name
        assert cfg["algo"]["name"] == algo, name
        assert cfg["train"]["total_timesteps"] == int(steps.replace(",", "")), name
        assert cfg["train"]["n_envs"] == int(envs), name


def test_default_is_balance_ppo_with_its_own_run_name():
    default = yaml.safe_load((ROOT / "configs" / "default.yaml").read_text())
    balance = yaml.safe_load((ROOT / "configs" / "balance_ppo.yaml").read_text())
    assert default["train"].pop("run_name") == "default"
    assert default == balance
