"""rejax's PPO with the value of an episode cut by the time limit bootstrapped (``jax_ppo``)."""

from __future__ import annotations

from typing import Any

__all__ = ["bootstrapping_ppo", "step_with_final_obs"]


def step_with_final_obs(
    twin: Any, key: Any, state: Any, action: Any, params: Any
) -> tuple[Any, Any, Any, Any, Any, Any]:
    """One step of one twin copy with auto-reset that also returns the step's own observation.

    The twin's :meth:`~twolink_gym.jax.env.TwoLinkJaxEnv.step_env`, then
    ``reset_env`` selected by ``done`` (the order of the twin's ``step``, with the
    two keys split from ``key``).

    Returns
    -------
    tuple
        ``(obs, state, reward, done, info, final_obs)``: ``obs`` and ``state`` the
        ones the copy continues from (a new episode's where ``done``), ``final_obs``
        the observation the step reached before any reset.
    """
    import jax
    import jax.numpy as jnp

    key_step, key_reset = jax.random.split(key)
    final_obs, state_st, reward, done, info = twin.step_env(key_step, state, action, params)
    obs_re, state_re = twin.reset_env(key_reset, params)
    state = jax.tree.map(lambda r, s: jnp.where(done, r, s), state_re, state_st)
    return jnp.where(done, obs_re, final_obs), state, reward, done, info, final_obs


def bootstrapping_ppo(cls: Any) -> Any:
    """A subclass of rejax's ``PPO`` that bootstraps the value of an episode cut by the time limit.

    rejax's PPO reads the twin's ``done`` (``terminated | truncated``) as the end
    of the return, so an episode stopped by ``max_episode_steps`` counts as one
    that ended, and its last states are learned as worth nothing after it (for
    reach, which never terminates, every episode). This subclass collects the
    rollout as rejax does, but steps the twin without its auto-reset first
    (:meth:`~twolink_gym.jax.env.TwoLinkJaxEnv.step_env`, then
    ``reset_env``, selected by ``done``: the order of the twin's ``step``, with keys split from the step's key), and on a
    truncated, not terminated step adds ``gamma · V(s_T)`` of the step's own final
    observation to the (normalised) reward, as SB3's PPO does with
    ``TimeLimit.truncated``.

    It also adds the field ``clip_value_loss`` (default ``True``, rejax's loss): with
    ``False`` the critic is fitted to the returns by plain squared error, as SB3's
    PPO does by default (``clip_range_vf=None``), instead of rejax's loss, which
    keeps the larger of that error and the error of a prediction clipped to
    ``±clip_eps`` of the rollout's value. Other classes are returned unchanged.
    """
    import jax
    import jax.numpy as jnp
    from flax import struct
    from rejax.algos.ppo import PPO, Trajectory

    if not issubclass(cls, PPO):
        return cls

    class BootstrappingPPO(cls):
        clip_value_loss: bool = struct.field(pytree_node=False, default=True)

        def update_critic(self, ts: Any, batch: Any) -> Any:
            if self.clip_value_loss:
                return super().update_critic(ts, batch)

            def critic_loss_fn(params: Any) -> Any:
                value = self.critic.apply(params, batch.trajectories.obs)
                return self.vf_coef * 0.5 * jnp.square(value - batch.targets).mean()

            grads = jax.grad(critic_loss_fn)(ts.critic_ts.params)
            return ts.replace(critic_ts=ts.critic_ts.apply_gradients(grads=grads))

        def collect_trajectories(self, ts: Any) -> tuple[Any, Any]:
            twin = self.env

            def twin_step(key: Any, state: Any, action: Any, params: Any) -> tuple[Any, ...]:
                obs, state, reward, done, info, final_obs = step_with_final_obs(
                    twin, key, state, action, params
                )
                cut = jnp.logical_and(info["truncated"], jnp.logical_not(info["terminated"]))
                return obs, state, reward, done, final_obs, cut

            vmap_step = jax.vmap(twin_step, in_axes=(0, 0, 0, None))

            def env_step(ts: Any, unused: Any) -> tuple[Any, Any]:
                rng, new_rng = jax.random.split(ts.rng)
                ts = ts.replace(rng=rng)
                rng_steps, rng_action = jax.random.split(new_rng, 2)
                rng_steps = jax.random.split(rng_steps, self.num_envs)
                action_raw, log_prob = self.actor.apply(
                    ts.actor_ts.params, ts.last_obs, rng_action, method="action_log_prob"
                )
                value = self.critic.apply(ts.critic_ts.params, ts.last_obs)
                space = self.env.action_space(self.env_params)
                action = jnp.clip(action_raw, space.low, space.high)
                next_obs, env_state, reward, done, final_obs, cut = vmap_step(
                    rng_steps, ts.env_state, action, self.env_params
                )
                if self.normalize_observations:  # rejax's FloatObsWrapper casts the same way
                    next_obs, final_obs = next_obs.astype(float), final_obs.astype(float)
                    obs_rms_state, next_obs = self.update_and_normalize_obs(
                        ts.obs_rms_state, next_obs
                    )
                    ts = ts.replace(obs_rms_state=obs_rms_state)
                    final_obs = self.normalize_obs(obs_rms_state, final_obs)
                if self.normalize_rewards:
                    rew_rms_state, reward = self.update_and_normalize_rew(
                        ts.rew_rms_state, reward, done
                    )
                    ts = ts.replace(rew_rms_state=rew_rms_state)
                final_value = self.critic.apply(ts.critic_ts.params, final_obs)
                reward = reward + jnp.where(cut, self.gamma * final_value, 0.0)
                transition = Trajectory(ts.last_obs, action_raw, log_prob, reward, value, done)
                ts = ts.replace(
                    env_state=env_state,
                    last_obs=next_obs,
                    last_done=done,
                    global_step=ts.global_step + self.num_envs,
                )
                return ts, transition

            return jax.lax.scan(env_step, ts, None, self.num_steps)

    BootstrappingPPO.__name__ = BootstrappingPPO.__qualname__ = f"Bootstrapping{cls.__name__}"
    return BootstrappingPPO
