#!/usr/bin/env bash
# Regenerates every folder of docs/results that comes from the shipped agents
# (pretrained:NAME) and the classical controllers alone, without training:
# the comparisons (tables, per-episode results, plots), the GIFs and the
# looping-path figure, and every shipped agent on an unseen episode set
# (benchmarks/unseen_agreement.py). Each block below is also shown on its results page
# (docs/scripts/results_pages.py reads this file): a line "# >>> FOLDER" opens
# the block of the commands that write FOLDER; a blank line closes it.
#
# Usage: bash docs/scripts/regenerate_results.sh   (from anywhere; ~9 min on 2 cores)
# Then `git status --porcelain docs/results` shows what changed: nothing, when
# the shipped agents, the controllers and the evaluation code are unchanged.
# The folders that need training runs (seeds/, tune/, robustness/robust_seeds/)
# are not regenerated here; their commands are on the results pages.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/.venv/bin:$PATH" SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy MPLBACKEND=Agg

# >>> docs/results/reach
twolink compare configs/reach_ppo.yaml pretrained:reach_ppo pretrained:reach_sac \
    --out docs/results/reach --no-trajectories
twolink record configs/reach_ppo.yaml pretrained:reach_sac --out docs/results/reach/reach_sac.gif

# >>> docs/results/balance
twolink compare configs/balance_ppo.yaml pretrained:balance_ppo pretrained:balance_sac \
    --out docs/results/balance --no-trajectories
twolink record configs/balance_ppo.yaml pretrained:balance_ppo \
    --out docs/results/balance/balance_ppo.gif --max-steps 250

# >>> docs/results/swingup
twolink compare configs/swingup_ppo.yaml pretrained:swingup_ppo pretrained:swingup_sac \
    --out docs/results/swingup --no-trajectories
twolink record configs/swingup_ppo.yaml pretrained:swingup_ppo \
    --out docs/results/swingup/swingup_ppo.gif --max-steps 200
twolink record configs/swingup_ppo.yaml energy_swingup \
    --out docs/results/swingup/energy_swingup.gif --max-steps 300
twolink record configs/swingup_pendubot_sac.yaml pendubot_swingup \
    --out docs/results/swingup/pendubot_energy.gif --max-steps 300
twolink record configs/swingup_acrobot_ppo.yaml acrobot_swingup \
    --out docs/results/swingup/acrobot_energy.gif --max-steps 350

# >>> docs/results/swingup_pendubot
twolink compare configs/swingup_pendubot_sac.yaml pretrained:swingup_pendubot_sac \
    pretrained:swingup_pendubot_ppo --out docs/results/swingup_pendubot --no-trajectories
twolink record configs/swingup_pendubot_sac.yaml pretrained:swingup_pendubot_sac \
    --out docs/results/swingup_pendubot/swingup_pendubot_sac.gif --max-steps 150
twolink record configs/swingup_pendubot_sac.yaml pretrained:swingup_pendubot_ppo \
    --out docs/results/swingup_pendubot/swingup_pendubot_ppo.gif --max-steps 250

# >>> docs/results/track
twolink compare configs/track_ppo.yaml pretrained:track_ppo pretrained:track_sac \
    --out docs/results/track --no-trajectories
twolink record configs/track_ppo.yaml pretrained:track_ppo \
    --out docs/results/track/track_ppo.gif --max-steps 250

# >>> docs/results/tracking
python benchmarks/looping_path.py

# >>> docs/results/unseen
python benchmarks/unseen_agreement.py

# The pages that show these results.
python docs/scripts/results_pages.py
