package io.distlock.aop;

import java.lang.reflect.Method;
import java.util.List;

import io.micrometer.observation.Observation;

/**
 * What a {@code @DistributedLock} call's Micrometer observations carry: the call's wait for its locks
 * ({@code distlock.acquire}) or its hold of them ({@code distlock.hold}), of which lock, in which
 * registry, under which resolved keys, and how the wait ended.
 *
 * <p>One class for both observations, told apart by {@link #getPhase()}, so that a handler or a
 * convention can take either or both; {@link DefaultDistLockObservationConvention} names them.
 */
public class DistLockObservationContext extends Observation.Context {

	private final Phase phase;

	private final String lockName;

	private final String registry;

	private final List<String> keys;

	private final Method method;

	private volatile DistributedLockObserver.Outcome outcome;

	private volatile boolean cancelled;

	/**
	 * @param phase which of the two observations this is
	 * @param lockName the logical lock name: the annotation's {@code name}, or
	 * {@code SimpleClassName.method}; never a resolved key
	 * @param registry the registry's bean name, or {@code default} for the application's default one
	 * @param keys the resolved lock names, in the order they are taken
	 * @param method the annotated method
	 */
	public DistLockObservationContext(Phase phase, String lockName, String registry, List<String> keys,
			Method method) {
		this.phase = phase;
		this.lockName = lockName;
		this.registry = registry;
		this.keys = List.copyOf(keys);
		this.method = method;
	}

	/** @return whether this is the wait for the locks or their hold */
	public Phase getPhase() {
		return this.phase;
	}

	/** @return the logical lock name, the same as the meters' {@code lock} tag */
	public String getLockName() {
		return this.lockName;
	}

	/** @return the registry's bean name, or {@code default} */
	public String getRegistry() {
		return this.registry;
	}

	/** @return the resolved lock names: one per order id, say, so never a metrics tag */
	public List<String> getKeys() {
		return this.keys;
	}

	/** @return the annotated method */
	public Method getMethod() {
		return this.method;
	}

	/**
	 * @return how the wait ended, as the {@code distlock.acquire} timer's {@code outcome} tag says;
	 * {@code null} while it lasts, for a hold, or if it was {@linkplain #isCancelled() cancelled}
	 */
	public DistributedLockObserver.Outcome getOutcome() {
		return this.outcome;
	}

	/** @param outcome how the wait ended */
	public void setOutcome(DistributedLockObserver.Outcome outcome) {
		this.outcome = outcome;
	}

	/**
	 * @return whether the wait was given up before it ended: a {@code Mono} or {@code Flux} subscription
	 * cancelled while it waited (no timer records it)
	 */
	public boolean isCancelled() {
		return this.cancelled;
	}

	/** @param cancelled whether the wait was given up before it ended */
	public void setCancelled(boolean cancelled) {
		this.cancelled = cancelled;
	}

	/** Which of a locked call's two observations a context belongs to. */
	public enum Phase {

		/** {@code distlock.acquire}: from the first lock asked for until all are taken, or the wait ends. */
		ACQUIRE,

		/** {@code distlock.hold}: from the locks taken until they are released, around the method's work. */
		HOLD

	}

}
