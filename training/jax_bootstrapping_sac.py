"""rejax's SAC with the time limit read as a cut, not an end (``jax_sac``).

rejax's SAC steps its envs with their auto-reset (``env.step``) and stores
``(obs, action, reward, next_obs, done)`` with ``done = terminated | truncated``
and ``next_obs`` the *reset* observation where an episode ended; its target
``r + gamma · (1 - done) · Q'`` so treats an episode stopped by
``max_episode_steps`` as one that ended (for reach, which never terminates,
every episode). The subclass of :func:`bootstrapping_sac` collects the same
transitions but stores the step's own final observation as ``next_obs`` and
``terminated`` as ``done``, so the target bootstraps ``Q'`` of the final state
where the time limit cut the episode, as SB3's replay buffer does
(``handle_timeout_termination``).
"""

from __future__ import annotations

from typing import Any

from twolink_gym.training.jax_bootstrapping_ppo import step_with_final_obs

__all__ = ["bootstrapping_sac"]


def bootstrapping_sac(cls: Any) -> Any:
    """A subclass of rejax's ``SAC`` that stores the time limit's final observation, not an end.

    The twin is stepped without its auto-reset first
    (:meth:`~twolink_gym.jax.env.TwoLinkJaxEnv.step_env`, then ``reset_env``,
    selected by ``done``: the order of the twin's ``step``, with keys split from the step's key); the replay buffer
    gets ``next_obs`` = the step's final observation and ``done`` =
    ``info["terminated"]``. The running statistics are updated as rejax does
    (observations with the observation the envs continue from, returns reset at
    every episode end). Other classes are returned unchanged.
    """
    import jax
    from rejax.algos.sac import SAC
    from rejax.buffers import Minibatch

    if not issubclass(cls, SAC):
        return cls

    class BootstrappingSAC(cls):
        def collect_transitions(self, ts: Any) -> tuple[Any, Any]:
            twin = self.env

            def twin_step(key: Any, state: Any, action: Any, params: Any) -> tuple[Any, ...]:
                obs, state, reward, done, info, final_obs = step_with_final_obs(
                    twin, key, state, action, params
                )
                return obs, state, reward, done, final_obs, info["terminated"]

            vmap_step = jax.vmap(twin_step, in_axes=(0, 0, 0, None))

            rng, rng_action = jax.random.split(ts.rng)
            ts = ts.replace(rng=rng)
            if self.normalize_observations:
                last_obs = self.normalize_obs(ts.obs_rms_state, ts.last_obs)
            else:
                last_obs = ts.last_obs
            actions = self.actor.apply(ts.actor_ts.params, last_obs, rng_action, method="act")
            rng, rng_steps = jax.random.split(ts.rng)
            ts = ts.replace(rng=rng)
            rng_steps = jax.random.split(rng_steps, self.num_envs)
            next_obs, env_state, rewards, dones, final_obs, terminated = vmap_step(
                rng_steps, ts.env_state, actions, self.env_params
            )
            if self.normalize_observations:  # rejax's FloatObsWrapper casts the same way
                next_obs, final_obs = next_obs.astype(float), final_obs.astype(float)
                ts = ts.replace(obs_rms_state=self.update_obs_rms(ts.obs_rms_state, next_obs))
            if self.normalize_rewards:
                ts = ts.replace(rew_rms_state=self.update_rew_rms(ts.rew_rms_state, rewards, dones))
            minibatch = Minibatch(
                obs=ts.last_obs,
                action=actions,
                reward=rewards,
                next_obs=final_obs,
                done=terminated,
            )
            ts = ts.replace(
                last_obs=next_obs,
                env_state=env_state,
                global_step=ts.global_step + self.num_envs,
            )
            return ts, minibatch

    BootstrappingSAC.__name__ = BootstrappingSAC.__qualname__ = f"Bootstrapping{cls.__name__}"
    return BootstrappingSAC
