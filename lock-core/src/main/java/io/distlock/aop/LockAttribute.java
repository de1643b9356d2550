package io.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

import org.springframework.expression.Expression;

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
 */
record LockAttribute(Method method, String description, String name, List<Expression> keys, List<String> keyTexts,
		Duration waitTime, Duration leaseTime, OnLockFailure onFailure, Expression fallback, String failureHandler,
		boolean deferred, Duration holdAtLeast, String registry) {

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
