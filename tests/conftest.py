"""Test-suite settings shared by every test module.

Hypothesis draws its examples from a fixed seed (``derandomize=True``): the
property tests try the same examples on every run and every machine, so a
clean clone's CI run is reproducible, and a failure it reports can be
replayed. ``pytest --hypothesis-profile=default`` explores with fresh random
examples instead.
"""

from hypothesis import settings

settings.register_profile("reproducible", derandomize=True)
settings.load_profile("reproducible")
