"""Training, evaluation and recording scripts of twolink-gym (SB3 agents and classical controllers)."""
