package io.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

import org.springframework.expression.Expression;

import io.distlock.LockRegistry;
import io.distlock.annotation.LockMode;
import io.distlock.annotation.OnLockFailure;

/**
 * One method's {@code @DistributedLock}, parsed once: compiled key expressions and resolved
 * durations.
 *
 * @param method the annotated method (most specific)
 * @param description {@code Class.method(Args)} for messages
 * @param name the name prefix, or empty
 * @param keys the parsed key expressions, empty for a method-wide lock
 * @param keyTexts the key expressions as written
 * @param waitTime the wait, or {@code null} for the configured default
 * @param leaseTime the lease, or {@code null} for the configured default
 * @param onFailure the failure policy
 * @param fallback the SKIP fallback expression, or {@code null}
 * @param failureHandler the failure handler bean name, or empty
 * @param deferred whether the method returns work that ends later (a future, a Mono or Flux), whose
 * locks are held until it ends
 * @param holdAtLeast how long the locks stay taken at least from their acquisition, or {@code null}
 * @param registry the name of the registry bean to lock with, or empty for the default one
 * @param mode which lock of each key: the exclusive one, or a side of the key's read-write lock
 * @param permits above 1: a permit of each key's semaphore with this many permits
 */
record LockAttribute(Method method, String description, String name, List<Expression> keys, List<String> keyTexts,
		Duration waitTime, Duration leaseTime, OnLockFailure onFailure, Expression fallback, String failureHandler,
		boolean deferred, Duration holdAtLeast, String registry, LockMode mode, int permits) {

	/** @return whether each key's lock is a semaphore's permit */
	boolean semaphore() {
		return this.permits > 1;
	}

	/**
	 * @param locks the registry the method locks with
	 * @return why that registry cannot take this method's locks, or {@code null} if it can
	 */
	String unsupportedBy(LockRegistry locks) {
		if (this.mode != LockMode.EXCLUSIVE && !locks.offersReadWriteLocks()) {
			return "mode = " + this.mode + " takes a read-write lock, which " + locks.getClass().getSimpleName()
					+ " does not offer; read-write locks need a distlock registry on Redis (single, Sentinel or Cluster), "
					+ "the table lock or ZooKeeper";
		}
		if (semaphore() && !locks.offersSemaphores()) {
			return "permits = " + this.permits + " takes a semaphore's permit, which " + locks.getClass().getSimpleName()
					+ " does not offer; semaphores need a distlock registry on Redis (single, Sentinel or Cluster), the "
					+ "table lock or ZooKeeper";
		}
		return null;
	}

	/** The registry name metrics and the endpoint show for the default registry. */
	static final String DEFAULT_REGISTRY = "default";

	/** @return the registry's name for metrics: the bean name, or {@value #DEFAULT_REGISTRY} */
	String registryName() {
		return this.registry.isEmpty() ? DEFAULT_REGISTRY : this.registry;
	}

	/**
	 * @param acquiredAt when the locks were taken ({@link System#nanoTime()})
	 * @return how much longer they must stay taken now: zero or negative when they can be freed
	 */
	Duration keepAfter(long acquiredAt) {
		return (this.holdAtLeast != null) ? this.holdAtLeast.minusNanos(System.nanoTime() - acquiredAt) : Duration.ZERO;
	}

	/** @return the logical name (metrics, the endpoint, lost-hold reports): the annotation's name, else {@code SimpleClassName.method}, never a key */
	String logicalName() {
		return this.name.isEmpty() ? this.method.getDeclaringClass().getSimpleName() + "." + this.method.getName()
				: this.name;
	}

}
