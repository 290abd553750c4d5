"""The agreement table of the results overview, rendered from a hand-written agreement.json."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pages(monkeypatch, tmp_path, agents):
    spec = importlib.util.spec_from_file_location(
        "results_pages_under_test", ROOT / "docs" / "scripts" / "results_pages.py"
    )
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    (tmp_path / "unseen").mkdir()
    data = {
        "seed": 11_000_000,
        "confidence": 0.95,
        "rule": "inside",
        "agents": agents,
        "machine": "AMD EPYC",
        "cpus": 2,
        "load_average_at_start": [3.0, 3.0, 3.0],
        "wall_time_s": 120.0,
    }
    (tmp_path / "unseen" / "agreement.json").write_text(json.dumps(data))
    script = tmp_path / "regenerate.sh"
    script.write_text("# >>> docs/results/unseen\npython benchmarks/unseen_agreement.py\n\n")
    monkeypatch.setattr(module, "RESULTS", tmp_path)
    monkeypatch.setattr(module, "REGENERATE", script)
    return module


def _agent(name, n, reported_k, reported_ci, unseen_k, unseen_ci, agrees):
    return {
        "name": name,
        "episodes": n,
        "reported": {
            "seed": 1_000_000,
            "successes": reported_k,
            "rate": reported_k / n,
            "ci": reported_ci,
        },
        "unseen": {
            "seed": 11_000_000,
            "successes": unseen_k,
            "rate": unseen_k / n,
            "ci": unseen_ci,
        },
        "agrees": agrees,
    }


def test_table_shows_both_figures_the_verdict_and_the_command(monkeypatch, tmp_path):
    # 85/100: Wilson [0.7672, 0.9069]; 70/100 lies outside it, 80/100 inside
    agents = [
        _agent("a_ok", 100, 85, [0.7672, 0.9069], 80, [0.7112, 0.8666], True),
        _agent("b_off", 100, 85, [0.7672, 0.9069], 70, [0.6042, 0.7810], False),
    ]
    text = _pages(monkeypatch, tmp_path, agents).unseen_section()
    assert (
        "| `a_ok` | 100 | 85/100 = 85% [76.7, 90.7] | 80/100 = 80% [71.1, 86.7] | -5.0 | yes |"
        in text
    )
    assert (
        "| `b_off` | 100 | 85/100 = 85% [76.7, 90.7] | 70/100 = 70% [60.4, 78.1] | -15.0 | **no** |"
        in text
    )
    assert "1 of 2 agents agree" in text
    assert "python benchmarks/unseen_agreement.py" in text
    assert "--seed 11000000" in text and "2-core AMD EPYC" in text


def test_a_verdict_that_contradicts_the_rule_is_refused(monkeypatch, tmp_path):
    agents = [_agent("liar", 100, 85, [0.7672, 0.9069], 70, [0.6042, 0.7810], True)]
    module = _pages(monkeypatch, tmp_path, agents)
    with pytest.raises(module.ResultsError, match="liar's 'agrees' is True"):
        module.unseen_section()
