"""The shipped training configs, installed as the data package ``twolink_gym.configs``."""
